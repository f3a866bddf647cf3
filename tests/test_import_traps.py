"""The importer's traps, each reproduced: a release known by its content, every strategy its
own prompt version, an import that finds no judge output refused, the id-prefix fallback,
per-model items in set.toml, and imported cost said to be unknown.

Sources are small LLMBar-style folders written in tmp_path (tests/_llmbar_release.py).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from judges.__main__ import main
from judges.calls import _vcr
from judges.calls.backends import ModelRef, Price, make_backend
from judges.calls.cassettes import open_cassette
from judges.cli.importer import import_llmbar
from judges.core.naming import Case
from judges.core.results import JudgementRow, Usage
from judges.core.runner import Call, judge
from judges.core.spec import load_catalog
from judges.pytest_plugin.invocation import missing_fix
from judges.reports import terminal
from judges.sets.imports import ImportError_, prefix_for
from judges.sets.items import PlantedSetError
from judges.sets.planted import load_items, load_planted_set
from judges.stats.fitness.published import published_checks
from tests._llmbar_release import write_llmbar_set

REPLIES = {"Good": [("1", "1"), ("2", "2"), ("1", "1")], "First": [("1", "2")] * 3}


def _release(root: Path, strategies: tuple[str, ...] = ("Vanilla",), readme: bool = True) -> Path:
    src = root
    for name in ("Natural", "Adversarial/Neighbor"):
        write_llmbar_set(src, name, REPLIES)
        for strategy in strategies:
            if strategy == "Vanilla":
                continue
            for model in REPLIES:
                shutil.copytree(
                    src / name / "evaluators" / model / "Vanilla",
                    src / name / "evaluators" / model / strategy,
                )
        if "Vanilla" not in strategies:
            for model in REPLIES:
                shutil.rmtree(src / name / "evaluators" / model / "Vanilla")
    (src / "LICENSE").write_text("MIT License\n", encoding="utf-8")
    if readme:
        (src / "README.md").write_text("From princeton-nlp/LLMBar, commit abcdef12.\n")
    return src


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _replayed(project: Path, version: str, model_name: str) -> list[JudgementRow]:
    """Every imported item of a model, replayed from its cassettes with their fingerprint."""
    spec = load_catalog()["pairwise"]
    model = ModelRef("imported", model_name)
    backend = make_backend(model, live=False)
    rows = []
    for item in load_items(project / "planted_sets/pairwise/items.jsonl", spec):
        path = Case("pairwise", version, model, item.id, item.slug).cassette(project / "cassettes")
        with open_cassette(path, model, record=False) as recorded:
            call = Call(backend, Price(0, 0), live=False, is_fatal=_vcr.is_replay_miss)
            row = judge(spec, version, item.subject(), call)
            rows.append(row.model_copy(update={"fingerprint": _vcr.stored_fingerprint(recorded)}))
    return rows


def test_the_prefix_fallback_gives_capitals_not_set() -> None:
    # Before: a lowercase pattern on upper-cased text found no letter, so "SET".
    found = prefix_for("Adversarial/GPTOut", {"AGPT"})
    assert found != "SET" and found.isalpha() and found.isupper() and 2 <= len(found) <= 4
    assert found not in {"AGPT"}
    assert prefix_for("Adversarial/GPTOut", set()) == "AGPT"
    assert prefix_for("mt_bench", set()) == "MTBE"


def test_an_import_without_judge_outputs_exits_non_zero_naming_the_strategies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _release(tmp_path / "release", strategies=("Vanilla_NoRules",))
    project = tmp_path / "project"
    assert main(["import", "llmbar", str(src), "--root", str(project)]) == 2
    error = capsys.readouterr().err
    assert "no judge outputs for strategy 'Vanilla'" in error
    assert "strategies found: Vanilla_NoRules" in error and "--strategy Vanilla_NoRules" in error
    assert not project.exists()  # nothing half-written


def test_a_folder_without_readme_is_the_release_imported_before(tmp_path: Path) -> None:
    src = _release(tmp_path / "release")
    project = tmp_path / "project"
    import_llmbar(src, project)
    # The same sets again, one only, from a folder with another name and no README.
    copy = tmp_path / "download"
    shutil.copytree(src / "Natural", copy / "Natural")
    shutil.copy(src / "LICENSE", copy / "LICENSE")
    before = _tree(project)
    again = import_llmbar(copy, project)
    assert again.changed == 0 and _tree(project) == before
    checks = published_checks(_replayed(project, "0.1", "Good"), "Good", project / "planted_sets")
    assert [(c.category, c.source, c.equal) for c in checks] == [
        ("adversarial_neighbor", "princeton-nlp/LLMBar@abcdef12", True),
        ("natural", "princeton-nlp/LLMBar@abcdef12", True),
    ]


def test_a_release_never_seen_without_readme_is_named_by_its_content(tmp_path: Path) -> None:
    src = _release(tmp_path / "download", readme=False)
    done = import_llmbar(src, tmp_path / "project")
    checks = published_checks(
        _replayed(tmp_path / "project", "0.1", "First"), "First", tmp_path / "project/planted_sets"
    )
    assert done.models == ("First", "Good") and all(c.equal for c in checks) and len(checks) == 2
    assert checks[0].source.startswith("download@sha256:")


def test_two_strategies_are_two_prompt_versions_and_neither_overwrites(tmp_path: Path) -> None:
    src = _release(tmp_path / "release", strategies=("Vanilla", "Metrics_Reference"))
    project = tmp_path / "project"
    assert import_llmbar(src, project).version == "0.1"
    vanilla = _tree(project / "cassettes/pairwise/0.1")
    with pytest.raises(ImportError_, match=r"'Metrics_Reference' .* has no prompt version yet"):
        import_llmbar(src, project, strategy="Metrics_Reference")
    with pytest.raises(ImportError_, match=r"prompt 0.1 already holds .*Vanilla outputs"):
        import_llmbar(src, project, strategy="Metrics_Reference", version="0.1")
    done = import_llmbar(src, project, strategy="Metrics_Reference", version="1.0")
    assert done.version == "1.0" and done.cassettes == 12
    assert _tree(project / "cassettes/pairwise/0.1") == vanilla
    with pytest.raises(ImportError_, match=r"Vanilla outputs are prompt 0.1; import them there"):
        import_llmbar(src, project, strategy="Vanilla", version="1.0")
    # Again without --prompt-version: the version it was imported under; nothing changes.
    assert import_llmbar(src, project, strategy="Metrics_Reference").changed == 0
    for version in ("0.1", "1.0"):
        rows = _replayed(project, version, "Good")
        checks = published_checks(rows, "Good", project / "planted_sets")
        assert len(checks) == 2 and all(c.equal for c in checks), version
        strategy = {c.strategy for c in checks}
        assert strategy == {"Vanilla" if version == "0.1" else "Metrics_Reference"}


def test_rows_of_one_set_from_two_releases_are_an_error_not_a_skip(tmp_path: Path) -> None:
    src = _release(tmp_path / "release")
    project = tmp_path / "project"
    import_llmbar(src, project)
    rows = _replayed(project, "0.1", "Good")
    rows[0] = rows[0].model_copy(update={"fingerprint": {**rows[0].fingerprint, "source": "x"}})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="adversarial_neighbor: rows from 2 releases"):
        published_checks(rows, "Good", project / "planted_sets")


def test_set_toml_gives_each_model_its_items(tmp_path: Path, capsys) -> None:
    src = _release(tmp_path / "release")
    shutil.rmtree(src / "Natural/evaluators/First")  # First judged one set only
    project = tmp_path / "project"
    assert main(["import", "llmbar", str(src), "--root", str(project)]) == 0
    out = capsys.readouterr().out
    assert (
        'imported:First has outputs for adversarial_neighbor only: add "imported:First" = ' in out
    )
    folder = project / "planted_sets/pairwise"
    (folder / "set.toml").write_text(
        '[versions."0.1"]\nmodels = ["imported:Good", "imported:First"]\n'
        'model_items = { "imported:First" = ["adversarial_neighbor", "NATU-002"] }\n'
    )
    planted = load_planted_set(project / "planted_sets", load_catalog()["pairwise"])
    first = [i.id for i in planted.main_items("0.1", "imported:First")]
    assert first == ["ANEI-001", "ANEI-002", "ANEI-003", "NATU-002"]
    assert len(planted.main_items("0.1", "imported:Good")) == 6
    (folder / "set.toml").write_text(
        '[versions."0.1"]\nmodels = ["imported:Good"]\n'
        'model_items = { "imported:Good" = ["natural", "mt_bench"] }\n'
    )
    with pytest.raises(PlantedSetError, match=r"names \['mt_bench'\], neither item ids nor sets"):
        load_planted_set(project / "planted_sets", load_catalog()["pairwise"])


def test_imported_cost_is_unknown_not_zero() -> None:
    usage = {
        "imported:ChatGPT": Usage(calls=652),
        "local:smollm2-135m": Usage(calls=2, input_tokens=599, output_tokens=56),
    }
    lines = terminal.session_lines([], usage, {}, None)
    assert lines[1] == (
        "imported:ChatGPT: 652 replayed replies; tokens and cost unknown (imported from a "
        "release, which did not publish them)"
    )
    assert "$0.0000" not in lines[1]
    assert lines[2] == "local:smollm2-135m: 2 calls, 599 input + 56 output tokens, $0.0000"


def test_a_missing_imported_judgement_is_not_sent_to_record() -> None:
    # Before: every miss said "Re-record it with: pytest --record=all ...", which an
    # imported model cannot do (it is never called).
    imported = missing_fix(ModelRef.parse("imported:GPT-4"), "pytest --record=all x")
    assert "--record" not in imported and "python -m judges import llmbar" in imported
    assert 'model_items = { "imported:GPT-4" = ["<set>"] }' in imported
    local = missing_fix(ModelRef.parse("local:smollm2-135m"), "pytest --record=all x")
    assert local == "Re-record it with:  pytest --record=all x"
