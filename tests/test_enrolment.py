"""Runs follow the judge: a new prompt version gets every run its judge has, and a version
a set.toml list leaves out (or whose run was never recorded) reads INCOMPLETE, never PASS."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from judges.core.results import write_jsonl
from judges.core.spec import PROMPTS_ROOT, load_judge
from judges.reports.write import rebuild_reports
from judges.sets.enrolment import lacking_runs
from judges.sets.items import PlantedSetError
from judges.sets.planted import load_planted_set
from judges.sets.probes import load_probe_set
from tests._report_demo import AFTER, BEFORE, MODEL, folder, row, version_rows

ROOT = Path(__file__).resolve().parents[1]


def _product_identity(tmp_path: Path, new_version: str | None = None) -> Any:
    """The built-in product_identity judge and set, copied; optionally with a new prompt
    version added by the README's recipe alone (one prompt file, nothing else)."""
    prompts = tmp_path / "prompts" / "product_identity"
    shutil.copytree(PROMPTS_ROOT / "product_identity", prompts)
    if new_version is not None:
        shutil.copy(prompts / "0.3.1.md", prompts / f"{new_version}.md")
    planted = tmp_path / "planted_sets"
    shutil.copytree(ROOT / "planted_sets" / "product_identity", planted / "product_identity")
    spec = load_judge(prompts)
    return spec, load_planted_set(planted, spec)


def _set_lists(planted_path: Path, lines: str) -> None:
    """set.toml's version lists replaced by `lines` (the rest of the file kept; the lines
    go first, as top-level keys precede its `[versions.*]` tables)."""
    config = planted_path / "set.toml"
    kept = [
        line
        for line in config.read_text(encoding="utf-8").splitlines(keepends=True)
        if not line.startswith(("noise_versions", "retest =", "retest_versions", "sme_versions"))
    ]
    config.write_text(lines + "".join(kept), encoding="utf-8")


def test_a_new_prompt_file_gets_every_run_of_its_judge(tmp_path: Path) -> None:
    spec, planted = _product_identity(tmp_path, new_version="0.4")
    assert spec.versions[-1] == "0.4"
    # Lists naming the versions recorded so far still restrict: a new version lacks those
    # runs, and says so with the fix.
    _set_lists(planted.path, 'noise_versions = ["0.3.1"]\nretest_versions = ["0.3.1"]\n')
    planted = load_planted_set(planted.path.parent, spec)
    assert planted.run_versions("noise") == ("0.3.1",)
    lacking = lacking_runs(planted, load_probe_set(planted), "0.4")
    assert [reason.split(" ", 1)[0] for reason in lacking] == ["noise", "retest"]
    assert "set.toml noise_versions leaves 0.4 out" in lacking[0]
    # SME calibration and the bias probes name no versions: they follow the judge.
    assert planted.run_versions("sme") == ("0.2", "0.3", "0.3.1", "0.4")
    probes = load_probe_set(planted)
    assert probes is not None and probes.versions is None
    # Without the lists, every run covers the new version.
    _set_lists(planted.path, "retest = true\n")
    planted = load_planted_set(planted.path.parent, spec)
    assert planted.run_versions("noise") == planted.run_versions("retest") == tuple(spec.versions)
    assert lacking_runs(planted, load_probe_set(planted), "0.4") == []


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("noise_versions = []\n", "noise_versions = [] gives the noise run no version"),
        ('retest_versions = ["9.9"]\n', "retest_versions names ['9.9'], which are not prompt"),
        ('sme_versions = ["0.3.2"]\n', "sme_versions names ['0.3.2']"),
    ],
)
def test_a_list_names_versions_of_the_judge(tmp_path: Path, line: str, said: str) -> None:
    spec, planted = _product_identity(tmp_path)
    config = planted.path / "set.toml"
    text = config.read_text(encoding="utf-8")
    key = line.split(" ", 1)[0]
    kept = [kept for kept in text.splitlines(keepends=True) if not kept.startswith(key)]
    config.write_text(line + "".join(kept), encoding="utf-8")  # before its tables
    with pytest.raises(PlantedSetError) as error:
        load_planted_set(planted.path.parent, spec)
    assert str(config) in str(error.value) and said in str(error.value)
    assert "remove the key" in str(error.value)


def test_probes_toml_names_versions_of_the_judge(tmp_path: Path) -> None:
    _, planted = _product_identity(tmp_path)
    recipe = planted.path / "probes.toml"
    text = recipe.read_text(encoding="utf-8")
    recipe.write_text('versions = ["0.5"]\n' + text, encoding="utf-8")
    with pytest.raises(PlantedSetError, match=r"probes.toml: versions names \['0.5'\]"):
        load_probe_set(planted)


def _write(demo: dict[str, Any], set_toml: str, retest: tuple[str, ...]) -> Any:
    (demo["planted"] / "demo" / "set.toml").write_text(set_toml, encoding="utf-8")
    for version, detection in (("1.0", BEFORE), ("1.1", AFTER)):
        rows = version_rows(version, detection)
        if version in retest:
            rows += [row(version, item, met, run="retest") for item, met in detection.items()]
        write_jsonl(folder(demo, version) / "results.jsonl", rows)
    return rebuild_reports(demo["reports"], demo["planted"], catalog=demo["catalog"])


def test_a_version_a_list_leaves_out_reads_incomplete(demo: dict[str, Any]) -> None:
    built = _write(demo, 'noise_items = ["PE-05"]\nretest_versions = ["1.0"]\n', ("1.0",))
    left_out = next(r for r in built.folders if r.version == "1.1")
    model = left_out.models[0]
    assert model.missing_runs == (
        "retest (set.toml retest_versions leaves 1.1 out: add it, or remove the key so the "
        "run follows every version)",
    )
    assert left_out.verdict_word() == "INCOMPLETE"
    assert left_out.verdict() == "INCOMPLETE: lacks the retest run of its judge"
    report = (folder(demo, "1.1") / "report.md").read_text(encoding="utf-8")
    assert "prompt 1.1 lacks the run retest (set.toml retest_versions leaves 1.1 out" in report
    assert not next(r for r in built.folders if r.version == "1.0").models[0].missing_runs


def test_a_run_the_judge_has_but_never_recorded_reads_incomplete(demo: dict[str, Any]) -> None:
    # `retest = true`: both versions get the retest run; 1.1's was never recorded.
    built = _write(demo, 'noise_items = ["PE-05"]\nretest = true\n', ("1.0",))
    model = next(r for r in built.folders if r.version == "1.1").models[0]
    assert model.verdict_word() == "INCOMPLETE"
    assert model.missing_runs == (
        f"retest (no rows: record it with `pytest --record=missing --judge-model {MODEL} "
        "-k demo-1.1`)",
    )
    assert next(r for r in built.folders if r.version == "1.0").models[0].missing_runs == ()
    # Both versions have their noise rows (version_rows): nothing lacks there.
    assert model.incomplete_reason() == "lacks the retest run of its judge"


def test_the_command_for_a_missing_run_names_the_server_the_version_was_recorded_on(
    demo: dict[str, Any],
) -> None:
    # Recorded on the user's server: run as printed without it, the command would start the
    # embedded judge instead (or call nothing at all).
    server = "http://127.0.0.1:8080/v1"
    cassette = demo["planted"].parent / "cassettes" / "demo" / "1.1" / "local-smollm2-135m"
    cassette.mkdir(parents=True)
    (cassette / "PE-01-x.yaml").write_text(
        "interactions:\n- request:\n    uri: " + server + "/chat/completions\n"
        "metadata:\n  judge_fingerprint:\n    backend: local\n",
        encoding="utf-8",
    )

    built = _write(demo, 'noise_items = ["PE-05"]\nretest = true\n', ("1.0",))

    model = next(r for r in built.folders if r.version == "1.1").models[0]
    (lacking,) = model.missing_runs
    command = lacking.split("`")[1]
    assert command == (
        f"pytest --record=missing --judge-model {MODEL} --judge-base-url {server} -k demo-1.1"
    )


def test_a_released_model_has_its_main_run_alone_and_a_retest_redraws_the_main_items() -> None:
    # The built-in pairwise set: 0.1 is five released models' outputs (imported, never
    # called); 1.0's main run judges the 16 items set.toml names, and its retest the same.
    from judges.pytest_plugin.session.catalogue import Catalogue
    from judges.pytest_plugin.session.settings import Settings

    catalogue = Catalogue(Settings(rootdir=ROOT, planted_sets=ROOT / "planted_sets"))
    spec, planted = catalogue.catalog["pairwise"], catalogue.planted_sets["pairwise"]
    assert planted.config.retest and "0.1" in planted.run_versions("retest")
    released = catalogue.models_for(spec, "0.1")
    assert len(released) == 5 and catalogue.run_models(spec, "0.1", "main") == released
    assert catalogue.run_models(spec, "0.1", "sme") == released  # reads the main run
    assert catalogue.run_models(spec, "0.1", "retest") == []
    (local,) = catalogue.run_models(spec, "1.0", "retest")
    main = catalogue.run_items(planted, "main", "1.0", str(local))
    assert len(main) == 16 and catalogue.run_items(planted, "retest", "1.0", str(local)) == main
    assert len(planted.items) > len(main)  # not the whole set
