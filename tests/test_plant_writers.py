"""The model-written generators: their prompts, their options, and what an accepted one
becomes (a planted defect, or a probe whose text is stored). The recorded calls themselves
are proved against a fake model in tests/integration/test_planting_writers.py."""

from __future__ import annotations

import datetime
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from judges.calls.backends import ModelRef
from judges.cli.main import main
from judges.cli.plant_writer import WrittenText, cassette_path
from judges.core.spec import load_catalog
from judges.sets.candidates import CANDIDATES_FILE, plant, read_candidates, write_candidates
from judges.sets.generators import Generator, PerturbationError, load_generators
from judges.sets.items import PlantedSetError
from judges.sets.planted import load_planted_set
from judges.sets.probe_kinds import PROBE_KINDS, invariance_probe
from judges.sets.probes import ProbeFile, load_probe_set
from judges.sets.review import REVIEW_FILE, Decision, fingerprint, record_decisions
from judges.sets.source_rows import SourceRow
from judges.sets.writing import WRITERS_ROOT, newest_version, writers

WRITTEN = {name: g for name, g in load_generators().items() if g.written}
POLICY = "Refunds: an unused item can be returned within 30 days of delivery."
REPLY = "Yes: you can return the unused jacket within 30 days of delivery."
# Markup, a line separator, quotes TOML must escape, an emoji: stored and read back as is.
HOSTILE = 'Yes\u2028"""\\ <b>within</b> 30 days \U0001f600\n\n  of delivery.'


def test_every_model_written_generator_has_a_versioned_prompt_and_nothing_else_does() -> None:
    assert set(WRITTEN) == {"paraphrase", "longer", "shorter", "label_flip", "rubric_level"}
    assert set(writers()) == set(WRITTEN)
    for name, spec in writers().items():
        version = newest_version(spec)
        template = spec.prompts[version].templates[None]
        assert template.startswith(f"<!-- plant writer {name} {version} -->\n")
        aim = {"aim"} if name == "rubric_level" else set()
        assert set(re.findall(r"\{\{(\w+)\}\}", template)) == {"text", "context", *aim}
        assert '{"text": "<' in template and '"change": "<' in template
        assert spec.config.sampling.temperature == 0.0 and spec.config.sampling.seed_per_item
    assert all(path.name in writers() for path in WRITERS_ROOT.iterdir() if path.is_dir()
               and (path / "judge.toml").is_file())  # fmt: skip


def test_the_model_written_invariance_generators_are_stored_text_probes() -> None:
    for name, generator in WRITTEN.items():
        probe = invariance_probe(name)
        if generator.kind == "defect":
            assert probe is None
            continue
        assert probe == f"written_{name}" and "written" in PROBE_KINDS[probe].options
    assert "format_paraphrase" not in PROBE_KINDS, "a model's text is never a seeded edit"


def test_a_stored_text_probe_table_holds_one_text_per_item_and_only_it_does() -> None:
    good = {"score": "accuracy", "written_paraphrase": {
        "items": ["SR-001", "SR-002"], "field": "reply", "seeds": [1, 2], "written": ["a", "b"],
    }}  # fmt: skip
    ProbeFile.model_validate(good)
    short = json.loads(json.dumps(good))
    short["written_paraphrase"]["written"] = ["a"]
    with pytest.raises(ValueError, match="written lists 1 texts for 2 items: one each"):
        ProbeFile.model_validate(short)
    missing = json.loads(json.dumps(good))
    del missing["written_paraphrase"]["written"]
    with pytest.raises(ValueError, match=r"\[written_paraphrase\] written: the model-written"):
        ProbeFile.model_validate(missing)
    elsewhere = {"score": "accuracy", "format_blank_lines": {
        "items": ["SR-001"], "field": "reply", "written": ["a"],
    }}  # fmt: skip
    with pytest.raises(ValueError, match=r"\[format_blank_lines\] written"):
        ProbeFile.model_validate(elsewhere)


def test_cassette_paths_stay_in_their_folder_and_apart() -> None:
    model = ModelRef.parse("local:fake")
    root = Path("/c")
    one = cassette_path(root, "support_reply", "paraphrase", model, "1.0", "a/b")
    other = cassette_path(root, "support_reply", "paraphrase", model, "1.0", "a_b")
    dots = cassette_path(root, "support_reply", "paraphrase", model, "1.0", "..")
    assert one != other and one.parent == other.parent == dots.parent
    assert dots.parent == Path("/c/support_reply/paraphrase/local-fake/1.0")


# -- the command ----------------------------------------------------------------------------


@pytest.fixture
def project(support_reply_project: Path) -> Path:
    tmp_path = support_reply_project
    row = {"id": "r1", "policy": POLICY, "question": "Can I?", "output": REPLY, "label": "good"}
    (tmp_path / "rows.jsonl").write_text(json.dumps(row) + "\n", "utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--generators", "paraphrase,truncation"], "paraphrase are model-written: name the model"),
        (["--record"], "--record calls the model that writes candidates: name it with"),
        (["--judge-model", "local:x", "--cost-cap", "1"], "--cost-cap caps live calls"),
        (["--judge-model", "nobackend"], "must be backend:model"),
        (["--judge-model", "local:x", "--generators", "rubric_level"], "--rubric-level accuracy=1"),
        (["--judge-model", "local:x", "--rubric-level", "tone=1"], "--rubric-level tone=1: give"),
        (["--judge-model", "local:x", "--rubric-level", "accuracy=high"], "FIELD=LEVEL"),
        (["--judge-model", "local:x", "--rubric-level", "accuracy=-1"], "0 or more"),
    ],
)
def test_model_options_that_cannot_work_stop_before_anything(
    project: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    code = main(["plant", "support_reply", "--from", "rows.jsonl", "--map", "output=reply",
                 *extra])  # fmt: skip
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (project / "planted_sets/support_reply" / CANDIDATES_FILE).exists()


class _Writer:
    """Writes what a model would have: a fixed text per generator (or nothing usable)."""

    def write(self, generator: Generator, row: SourceRow, text_field: str, seed: int) -> Any:
        if generator.name == "shorter":
            raise PerturbationError("the model's reply was not usable (unparseable)")
        text = HOSTILE if generator.name == "paraphrase" else f"{REPLY} Not really: 90 days."
        cassette = f"support_reply/{generator.name}/local-fake/1.0/r1-00000000.yaml"
        return WrittenText(text, "reworded", "local:fake", "1.0", "0123456789abcdef", cassette)


def test_accepted_model_written_candidates_become_an_item_and_a_stored_text_probe(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = project / "planted_sets/support_reply"
    spec = load_catalog(project / "judge_prompts")["support_reply"]
    inputs = {"policy": POLICY, "question": "Can I?", "reply": REPLY}
    row = SourceRow("rows.jsonl", 1, "r1", inputs, "good")
    chosen = {n: g for n, g in WRITTEN.items() if n not in ("longer", "rubric_level")}
    made = plant(
        "support_reply", [row], chosen,
        field="reply", seed=0, defect_expect=spec_expect("accuracy", "<=", 1),
        control_expect=spec_expect("accuracy", ">=", 2), control_label="good", writer=_Writer(),
    )  # fmt: skip
    assert made.skipped == {"shorter": {"the model's reply was not usable (unparseable)": 1}}
    assert [c.generator for c in made.candidates] == ["source", "label_flip", "paraphrase"]
    write_candidates(folder / CANDIDATES_FILE, made.candidates)
    lines = (folder / CANDIDATES_FILE).read_text("utf-8").splitlines()
    assert '"written"' not in lines[0], "a deterministic candidate's line is as it was"
    assert json.loads(lines[1])["written"]["prompt_hash"] == "0123456789abcdef"
    candidates = read_candidates(folder / CANDIDATES_FILE)
    assert candidates == made.candidates
    today = datetime.date(2026, 12, 7)
    record_decisions(folder / REVIEW_FILE, [
        Decision(candidate=c.id, fingerprint=fingerprint(c), decision="accept",
                 reviewer="Ada", date=today)
        for c in candidates
    ])  # fmt: skip
    (folder / "items.jsonl").unlink()
    (folder / "set.toml").unlink()
    assert main(["plant", "support_reply", "--apply"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "added 2 planted items and 1 invariance probes" in out, out
    recipe = tomllib.loads((folder / "probes.toml").read_text("utf-8"))
    assert recipe["written_paraphrase"]["written"] == [HOSTILE]
    probes = load_probe_set(load_planted_set(project / "planted_sets", spec))
    assert probes is not None
    (probe,) = probes.items
    assert probe.probe == "written_paraphrase" and probe.inputs["reply"] == HOSTILE
    items = [json.loads(line) for line in (folder / "items.jsonl").open(encoding="utf-8")]
    flip = items[1]
    assert flip["category"] == "label_flip" and flip["inputs"]["reply"].endswith("90 days.")
    assert flip["provenance"]["generator"] == "label_flip"
    assert (flip["provenance"]["model"], flip["provenance"]["prompt_version"]) == (
        "local:fake",
        "1.0",
    )
    assert flip["provenance"]["prompt_hash"] == "0123456789abcdef"
    assert "model" not in items[0]["provenance"], "a control's provenance is as it was"
    # Applied twice: nothing twice.
    assert main(["plant", "support_reply", "--apply"]) == 0
    assert "added 0 planted items and 0 invariance probes" in capsys.readouterr().out
    # A table whose stored texts were edited by hand no longer matches probes.jsonl.
    text = (folder / "probes.toml").read_text("utf-8").replace("30 days", "31 days")
    (folder / "probes.toml").write_text(text, "utf-8")
    with pytest.raises(PlantedSetError, match="does not match"):
        load_probe_set(load_planted_set(project / "planted_sets", spec))


def spec_expect(field: str, op: str, value: int) -> tuple[Any, ...]:
    from judges.core.results import Expectation

    return (Expectation.model_validate({"field": field, "op": op, "value": value}),)


def test_a_second_models_check_is_shown_escaped_and_leaves_decisions_standing(
    project: Path,
) -> None:
    from judges.cli.plant_review import candidate_lines
    from judges.cli.review_page import write_review_page
    from judges.sets.candidates import Confirmation

    inputs = {"policy": POLICY, "question": "Can I?", "reply": REPLY}
    row = SourceRow("rows.jsonl", 1, "r1", inputs, "good")
    (candidate,) = plant(
        "support_reply", [row], {"label_flip": WRITTEN["label_flip"]}, field="reply", seed=0,
        defect_expect=spec_expect("accuracy", "<=", 1), writer=_Writer(),
    ).candidates  # fmt: skip
    checked = candidate.model_copy(update={"confirmed": Confirmation(
        model="local:other", prompt_version="1.0", differs=False, agrees=False,
        reason="<script>alert(1)</script> the same 30 days",
    )})  # fmt: skip
    assert fingerprint(checked) == fingerprint(candidate), "a decision outlives a new check"
    assert json.dumps(checked.dump()) != json.dumps(candidate.dump()), "the check is stored"
    lines = candidate_lines(checked, 1, 1)
    assert (
        "  second model local:other DISAGREES: it says the same (<script>alert(1)</script> the "
        "same 30 days)"
    ) in lines
    assert not any("second model" in line for line in candidate_lines(candidate, 1, 1))
    folder = project / "planted_sets/support_reply"
    write_candidates(folder / CANDIDATES_FILE, [checked])
    page = write_review_page(folder, "support_reply").read_text("utf-8")
    assert '<p class="disagrees">second model local:other DISAGREES' in page
    assert "<script>alert(1)" not in page, "a model's words are shown, never run"
    assert "&lt;script&gt;alert(1)&lt;/script&gt; the same 30 days" in page


def test_a_replay_without_its_cassette_names_it_and_the_fix(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["plant", "support_reply", "--from", "rows.jsonl", "--map", "output=reply",
                 "--generators", "paraphrase", "--judge-model", "local:fake"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2, err
    missing = "cassettes/planting/support_reply/paraphrase/local-fake/1.0/r1-"
    assert "paraphrase on row 'r1' (line 1): the cassette " in err and missing in err, err
    assert err.rstrip().endswith("record it with the same command and --record; nothing was "
                                 "written")  # fmt: skip
    assert not (project / "planted_sets/support_reply" / CANDIDATES_FILE).exists()


def test_the_list_names_the_model_written_generators(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plant", "--list"]) == 0
    listed = capsys.readouterr().out
    for name in WRITTEN:
        assert re.search(rf"^{name} .*\(model\)$", listed, re.M), listed


def test_an_edited_model_written_paraphrase_is_the_text_the_probe_stores(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = project / "planted_sets/support_reply"
    inputs = {"policy": POLICY, "question": "Can I?", "reply": REPLY}
    row = SourceRow("rows.jsonl", 1, "r1", inputs, "good")
    made = plant(
        "support_reply", [row], {"paraphrase": WRITTEN["paraphrase"]}, field="reply", seed=0,
        defect_expect=spec_expect("accuracy", "<=", 1),
        control_expect=spec_expect("accuracy", ">=", 2), control_label="good", writer=_Writer(),
    )  # fmt: skip
    control, paraphrase = made.candidates
    assert paraphrase.editable and not control.written
    write_candidates(folder / CANDIDATES_FILE, made.candidates)
    fixed = "Yes, the unused jacket may come back within 30 days of delivery."
    today = datetime.date(2026, 12, 7)
    record_decisions(folder / REVIEW_FILE, [
        Decision(candidate=control.id, fingerprint=fingerprint(control), decision="accept",
                 reviewer="Ada", date=today),
        Decision(candidate=paraphrase.id, fingerprint=fingerprint(paraphrase), decision="edit",
                 reviewer="Ada", date=today, text=fixed),
    ])  # fmt: skip
    (folder / "items.jsonl").unlink()
    (folder / "set.toml").unlink()
    assert main(["plant", "support_reply", "--apply"]) == 0, capsys.readouterr().err
    assert "added 1 planted items and 1 invariance probes" in capsys.readouterr().out
    spec = load_catalog(project / "judge_prompts")["support_reply"]
    probes = load_probe_set(load_planted_set(project / "planted_sets", spec))
    assert probes is not None
    (probe,) = probes.items
    assert probe.inputs["reply"] == fixed


def test_rubric_level_candidates_expect_their_level_and_record_it_apart(
    project: Path,
) -> None:
    from judges.cli.plant_writer import Aim

    aim = Aim("accuracy", 1, "accuracy (0-3): ...")
    assert aim.expect[0].model_dump() == {"field": "accuracy", "op": "==", "value": 1}
    assert aim.category == "accuracy_level_1" and aim.words().startswith("accuracy = 1, as")

    class Aimed(_Writer):
        def write(self, generator: Generator, row: SourceRow, text_field: str, seed: int) -> Any:
            return WrittenText(f"{REPLY} Roughly.", "vaguer", "local:fake", "1.0",
                               "0123456789abcdef", "x.yaml", aim.expect, aim.category)  # fmt: skip

    inputs = {"policy": POLICY, "question": "Can I?", "reply": REPLY}
    (candidate,) = plant(
        "support_reply", [SourceRow("rows.jsonl", 1, "r1", inputs, "good")],
        {"rubric_level": WRITTEN["rubric_level"]}, field="reply", seed=0,
        defect_expect=spec_expect("accuracy", "<=", 0), writer=Aimed(),
    ).candidates  # fmt: skip
    assert candidate.expect == aim.expect, "its level, not the set's defect expectation"
    assert candidate.category == "accuracy_level_1"
    assert candidate.expectation == "aimed at a level: the judge scores it so (accuracy == 1)"


def test_the_writers_prompts_ship_with_the_package() -> None:
    from judges.sets.confirming import CONFIRM_ROOT

    package = WRITERS_ROOT.parent.parent
    pyproject = tomllib.loads((package.parent / "pyproject.toml").read_text("utf-8"))
    globs = pyproject["tool"]["setuptools"]["package-data"]["judges"]
    shipped = {path for pattern in globs for path in package.glob(pattern)}
    prompts = [
        path
        for root in (WRITERS_ROOT, CONFIRM_ROOT)
        for path in root.rglob("*")
        if path.suffix in (".md", ".toml")
    ]
    assert len(prompts) == 12 and set(prompts) <= shipped
