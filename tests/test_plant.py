"""`python -m judges plant`: candidates from real rows, deterministic, hostile rows refused
or kept whole with the project's clear errors (issue 70)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judges.cli.main import main
from judges.sets.candidates import read_candidates
from judges.sets.generators import GeneratorError, Options, PerturbationError, load_generators
from judges.sets.generators._text import words_only
from judges.sets.generators.markdown import is_markdown
from judges.sets.perturb import sentences

GENERATORS = load_generators()
# The generators that are functions of the text; the model-written ones are
# tests/test_plant_writers.py's.
MADE = {name: g for name, g in GENERATORS.items() if not g.written}
FORMAT = [g for g in MADE.values() if g.kind == "invariance"]
DEFECTS = [g for g in MADE.values() if g.kind == "defect"]
POLICY = "Refunds: an unused item can be returned within 30 days of delivery."
REPLY = (
    "Yes: you can return the unused jacket within 30 days of delivery. The refund goes to "
    "your original payment method. Shipping costs are not refunded."
)


@pytest.fixture
def project(support_reply_project: Path) -> Path:
    """A scaffolded judge `support_reply` (its 195 example items) as the current project."""
    return support_reply_project


def _row(row_id: str, reply: str = REPLY, **extra: object) -> dict[str, object]:
    return {"id": row_id, "policy": POLICY, "question": "Can I return it?", "output": reply} | extra


def _write_rows(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def _plant(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["plant", "support_reply", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


CANDIDATES = Path("planted_sets/support_reply/candidates.jsonl")

# -- the generators --------------------------------------------------------------------

words = st.sampled_from(["refund", "the", "item", "is", "30", "days", "can", "not", "2.5"])
sentence = st.lists(words, min_size=3, max_size=9).map(lambda w: " ".join(w).capitalize() + ".")
texts = st.lists(sentence, min_size=1, max_size=5).map(" ".join)


@given(texts, st.integers(0, 2**32 - 1))
def test_invariance_generators_change_the_layout_and_never_a_word(text: str, seed: int) -> None:
    for generator in FORMAT:
        try:
            made = generator.make(text, seed, Options())
        except PerturbationError:
            continue
        assert made.text != text, generator.name
        assert made == generator.make(text, seed, Options()), "deterministic given the seed"
        if generator.name == "repeated":  # longer, the same words again
            assert made.text.startswith(text.rstrip())
            assert words_only(made.text).endswith(words_only(" ".join(sentences(text))))
        elif generator.name == "markdown":
            assert is_markdown(made.text)
            plain = generator.make(made.text, seed, Options()).text
            assert words_only(plain) == words_only(text)
        else:
            assert words_only(made.text) == words_only(text), generator.name


@given(texts, st.integers(0, 2**32 - 1))
def test_defect_generators_change_the_words_deterministically(text: str, seed: int) -> None:
    for generator in DEFECTS:
        try:
            made = generator.make(text, seed, Options({"refund": "store credit"}))
        except PerturbationError:
            continue
        assert words_only(made.text) != words_only(text), generator.name
        assert made == generator.make(text, seed, Options({"refund": "store credit"}))


@pytest.mark.parametrize(
    ("name", "text", "seed", "expected"),
    [
        ("number_change", "Return it within 30 days.", 1, "30"),
        ("negation", "You can return it.", 0, "can not"),
        ("negation", "You can't return it.", 0, "You can return it."),
        ("truncation", "one two three four five six seven eight nine ten", 0, "one two three"),
        ("entity_swap", "The Acme Pro has two fans.", 0, "The Acme Lite has two fans."),
    ],
)
def test_each_defect_plants_what_it_says(name: str, text: str, seed: int, expected: str) -> None:
    made = MADE[name].make(text, seed, Options({"Acme Pro": "Acme Lite"}))
    assert expected in made.text if name != "number_change" else expected not in made.text
    assert made.change


def test_a_generator_with_nothing_to_change_says_what_it_lacks() -> None:
    with pytest.raises(PerturbationError, match="no number"):
        MADE["number_change"].make("No figures here.", 0, Options())
    with pytest.raises(PerturbationError, match="--entities"):
        MADE["entity_swap"].make("The Acme Pro.", 0, Options())


def test_a_team_adds_a_generator_in_a_module_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "shout_generator.py").write_text(
        "from judges.sets.generators import Generator, Perturbed\n\n\n"
        "def shout(text, seed, options):\n"
        "    return Perturbed(text.upper(), 'upper case')\n\n\n"
        "GENERATOR = Generator('shout', 'invariance', 'format', 'upper case', shout)\n",
        "utf-8",
    )
    (tmp_path / "taken_name.py").write_text(
        "from judges.sets.generators import Generator\n"
        "GENERATOR = Generator('truncation', 'defect', 'x', 'x', lambda t, s, o: None)\n",
        "utf-8",
    )
    (tmp_path / "no_generator.py").write_text("NOTHING = 1\n", "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = load_generators(["shout_generator"])
    assert registry["shout"].make("abc", 0, Options()).text == "ABC"
    with pytest.raises(GeneratorError, match="'truncation' is taken"):
        load_generators(["taken_name"])
    with pytest.raises(GeneratorError, match="no_generator defines no GENERATOR"):
        load_generators(["no_generator"])
    with pytest.raises(GeneratorError, match="cannot be imported"):
        load_generators(["no_such_module_here"])


# -- the command -----------------------------------------------------------------------


def test_plant_writes_candidates_with_source_generator_seed_and_expectation(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _write_rows(project / "rows.jsonl", [
        _row("good-1", label="good"), _row("bad-1", label="bad"),
        _row("good-2", reply="Yes. Our Acme Pro ships free. It arrives in 3 days.", label="good"),
    ])  # fmt: skip
    (project / "cousins.toml").write_text('"Acme Pro" = "Acme Lite"\n', "utf-8")
    code, out, err = _plant(
        capsys, "--from", str(rows), "--map", "output=reply", "--control-label", "good",
        "--entities", "cousins.toml",
    )  # fmt: skip
    assert (code, err) == (0, "")
    candidates = read_candidates(project / CANDIDATES)
    by_generator = {c.generator for c in candidates}
    assert by_generator == {"source", *MADE}, "model-written ones only with --judge-model"
    assert {c.source.id for c in candidates} == {"good-1", "good-2"}, "only good rows planted"
    assert "1 row not labelled as controls, not planted from (lines 2)" in out
    swap = next(c for c in candidates if c.generator == "entity_swap")
    assert swap.inputs["reply"] == "Yes. Our Acme Lite ships free. It arrives in 3 days."
    assert swap.source.line == 3 and swap.source.inputs["reply"] != swap.inputs["reply"]
    assert [e.model_dump() for e in swap.expect] == [{"field": "accuracy", "op": "<=", "value": 1}]
    control = next(c for c in candidates if c.kind == "control")
    assert control.inputs == control.source.inputs and control.expect
    for candidate in candidates:
        assert (candidate.kind == "invariance") == (not candidate.expect)
        assert candidate.expectation
    assert "entity_swap (defect): 1 made; 1 row skipped, no entity of the team" in out


def test_plant_is_byte_for_byte_the_same_given_the_seed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _write_rows(project / "rows.jsonl", [_row(f"r{i}", label="good") for i in range(5)])
    argv = ["--from", str(rows), "--map", "output=reply", "--expect", "accuracy <= 1"]
    assert _plant(capsys, *argv)[0] == 0
    first = (project / CANDIDATES).read_bytes()
    assert _plant(capsys, *argv)[0] == 0
    assert (project / CANDIDATES).read_bytes() == first
    assert _plant(capsys, *argv, "--seed", "7")[0] == 0
    assert (project / CANDIDATES).read_bytes() != first


def test_plant_reads_csv_with_quoted_line_breaks(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = project / "rows.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["policy", "question", "answer", "notes"])
        writer.writerow([POLICY, "Can I?", "Line one is 30 days.\nLine two, with a comma.", "x"])
        writer.writerow([POLICY, "Und\u2028jetzt?", "Zeile eins\u2028zwei, 30 Tage.", "y"])
    code, out, err = _plant(capsys, "--from", str(path), "--map", "answer=reply")
    assert (code, err) == (0, "")
    assert "columns not used (neither an input, the id nor the label): notes" in out
    candidates = read_candidates(project / CANDIDATES)
    assert candidates[0].source.id == "line-2"
    assert candidates[0].source.inputs["reply"] == "Line one is 30 days.\nLine two, with a comma."
    assert candidates[-1].source.id == "line-4", "a quoted line break counts as a line"
    assert candidates[-1].source.inputs["question"] == "Und\u2028jetzt?"


HOSTILE_TEXT = "<script>alert(1)</script> Ein Satz\u2028mit Trenner. 数字 42 ist \U0001f600 gut."


def test_hostile_rows_are_kept_whole(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    big = ("A long answer of 12 words that goes on and on here. " * 20_000)[:1_000_000]
    rows = _write_rows(project / "rows.jsonl", [_row("hostile", HOSTILE_TEXT), _row("big", big)])
    code, _, err = _plant(capsys, "--from", str(rows), "--map", "output=reply")
    assert (code, err) == (0, "")
    candidates = read_candidates(project / CANDIDATES)
    hostile = [c for c in candidates if c.source.id == "hostile"]
    assert hostile and all(c.source.inputs["reply"] == HOSTILE_TEXT for c in hostile)
    assert any("\u2028" in c.inputs["reply"] for c in hostile)
    assert len(candidates) == len((project / CANDIDATES).read_text("utf-8").split("\n")) - 1
    assert {c.source.id for c in candidates} == {"hostile", "big"}


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([_row("a"), _row("a")], "rows.jsonl:2: the id 'a' is already the id of line 1"),
        (['{"id": "a", "id": "b"}'], "rows.jsonl:1: the key 'id' appears twice"),
        ([{"id": "a", "policy": POLICY, "reply": REPLY}], "rows.jsonl:1: no 'question'"),
        ([{**_row("a"), "output": ""}], "rows.jsonl:1: the judge's inputs refuse this row"),
        (["[1, 2]"], "rows.jsonl:1: a row is a JSON object, got list"),
        (['{"id": "a", "policy": '], "rows.jsonl:1: not JSON"),
        (['{"id": "a", "score": NaN}'], "rows.jsonl:1: the column 'score' holds nan"),
    ],
)
def test_a_bad_row_is_named_with_its_file_line_and_fix(
    project: Path, capsys: pytest.CaptureFixture[str], lines: list[object], message: str
) -> None:
    path = project / "rows.jsonl"
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), "utf-8"
    )
    code, _, err = _plant(capsys, "--from", str(path), "--map", "output=reply")
    assert code == 2
    assert message in err and err.count("\n") == 1
    assert not (project / CANDIDATES).exists(), "nothing written from a refused file"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--map", "output"], "--map 'output': expected COLUMN=INPUT"),
        (["--map", "output=answer"], "'answer' is not an input of the judge"),
        (["--field", "nope"], "--field nope: not an input of support_reply"),
        (["--generators", "truncation,nope"], "--generators: ['nope'] not known"),
        (["--entities", "missing.toml"], "--entities missing.toml: not a readable TOML file"),
    ],
)
def test_a_bad_option_is_one_line_naming_it(
    project: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    rows = _write_rows(project / "rows.jsonl", [{**_row("a"), "reply": REPLY}])
    code, _, err = _plant(capsys, "--from", str(rows), *argv)
    assert code == 2 and message in err, err
    assert err.count("\n") == 1


def test_a_csv_header_naming_a_column_twice_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "rows.csv").write_text("policy,question,reply,reply\na,b,c,d\n", "utf-8")
    code, _, err = _plant(capsys, "--from", "rows.csv")
    assert code == 2 and "rows.csv:1: the columns ['reply'] appear twice" in err


def test_without_a_defect_to_copy_the_expectation_must_be_given(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = project / "planted_sets/support_reply/items.jsonl"
    items.write_text(items.read_text("utf-8").split("\n")[0] + "\n", "utf-8")  # one control
    rows = _write_rows(project / "rows.jsonl", [_row("a")])
    code, _, err = _plant(capsys, "--from", str(rows), "--map", "output=reply")
    assert code == 2 and "--expect 'accuracy <= 1'" in err


# -- docs/planting.md ------------------------------------------------------------------

DOC = Path(__file__).resolve().parents[1] / "docs" / "planting.md"


def test_the_docs_generator_table_is_the_registry() -> None:
    text = DOC.read_text("utf-8")
    rows = re.findall(r"^\| `(\w+)` \| (\w+) \| `(\w+)` \|", text, re.M)
    assert rows and sorted(rows) == sorted(
        (g.name, g.kind, g.category) for g in GENERATORS.values()
    )


def test_the_docs_own_generator_runs_as_printed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (module,) = re.findall(r"```python\n(.*?)```", DOC.read_text("utf-8"), re.S)
    package = project / "team_generators"
    package.mkdir()
    (package / "__init__.py").write_text("", "utf-8")
    (package / "refund_days.py").write_text(module, "utf-8")
    rows = _write_rows(project / "rows.jsonl", [_row("a"), _row("b", reply="No days here.")])
    argv = ["--from", str(rows), "--map", "output=reply", "--generators", "weeks_for_days"]
    code, out, err = _plant(capsys, *argv, "--generator-module", "team_generators.refund_days")
    assert (code, err) == (0, "")
    assert "weeks_for_days (defect): 1 made; 1 row skipped, no 'N days' to restate (lines 2)" in out
    (candidate,) = read_candidates(project / CANDIDATES)
    assert "within 30 weeks of delivery" in candidate.inputs["reply"]
    assert candidate.category == "wrong_unit"
