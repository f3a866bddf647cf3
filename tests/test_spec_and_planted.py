"""Unit tests for judges.core.spec (judges as data) and judges.sets.planted (planted-error sets)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from judges.calls.backends import without_tuples
from judges.core.results import Expectation
from judges.core.spec import (
    PROMPTS_ROOT,
    SpecError,
    load_catalog,
    load_judge,
    prompt_hash,
    version_key,
)
from judges.sets.items import PlantedSetError
from judges.sets.pins import edited_pins, load_pins, prompt_digests, write_pins
from judges.sets.planted import category_counts, load_items, load_planted_sets

ROOT = Path(__file__).resolve().parents[1]
PLANTED_ROOT = ROOT / "planted_sets"


# --------------------------------------------------------------------------- judge folders


def make_judge(
    parent: Path,
    name: str = "demo",
    *,
    toml_name: str | None = None,
    facets: tuple[str, ...] = (),
    files: dict[str, str] | None = None,
) -> Path:
    root = parent / name
    root.mkdir()
    lines = [
        f'name = "{toml_name or name}"',
        'module = "judges.builtin.geval"',
        'baseline_model = "local:smollm2-135m"',
    ]
    if facets:
        lines.append("facets = [" + ", ".join(f'"{f}"' for f in facets) + "]")
    (root / "judge.toml").write_text("\n".join(lines) + "\n")
    default = {"1.0.md": "Rate {{summary}} against {{ transcript }}."}
    for relative, text in (default if files is None else files).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_good_judge(tmp_path: Path) -> None:
    root = make_judge(
        tmp_path,
        files={
            "1.0.md": "v1 {{summary}}",
            "0.9.md": "v0 {{summary}}",
            "README.md": "not a prompt",
            "notes.txt": "ignored",
        },
    )
    spec = load_judge(root)
    assert spec.name == "demo"
    assert spec.versions == ["0.9", "1.0"]
    assert spec.previous_version("1.0") == "0.9"
    assert spec.previous_version("0.9") is None
    assert spec.prompts["1.0"].render(None, {"summary": "S"}) == "v1 S"
    assert spec.prompts["1.0"].paths[None] == root / "1.0.md"


def test_a_good_faceted_judge(tmp_path: Path) -> None:
    root = make_judge(
        tmp_path,
        facets=("a", "b"),
        files={"1.0/a.md": "A {{x}}", "1.0/b.md": "B {{x}}", "_draft/a.md": ""},
    )
    spec = load_judge(root)
    assert spec.versions == ["1.0"]
    prompt = spec.prompts["1.0"]
    assert {f: prompt.render(f, {"x": "1"}) for f in ("a", "b")} == {"a": "A 1", "b": "B 1"}


def test_missing_prompt(tmp_path: Path) -> None:
    root = make_judge(tmp_path, files={})
    with pytest.raises(SpecError, match="has no prompt version") as caught:
        load_judge(root)
    assert str(root) in str(caught.value)


def test_faceted_judge_missing_a_facet_file(tmp_path: Path) -> None:
    root = make_judge(tmp_path, facets=("a", "b"), files={"1.0/a.md": "A"})
    with pytest.raises(SpecError, match="one file per facet") as caught:
        load_judge(root)
    assert str(root / "1.0" / "b.md") in str(caught.value)
    assert str(root / "1.0" / "a.md") not in str(caught.value)


def test_faceted_judge_with_a_flat_prompt(tmp_path: Path) -> None:
    root = make_judge(tmp_path, facets=("a",), files={"1.0.md": "A"})
    with pytest.raises(SpecError, match=r"is a folder 1\.0/"):
        load_judge(root)


def test_a_version_folder_without_facets(tmp_path: Path) -> None:
    root = make_judge(tmp_path, files={"1.0/a.md": "A"})
    with pytest.raises(SpecError, match="one file per facet"):
        load_judge(root)


@pytest.mark.parametrize("version", ["v1", "1.0-beta", "1..0", "latest", "1.0.0rc1"])
def test_bad_version_name(tmp_path: Path, version: str) -> None:
    root = make_judge(tmp_path, files={f"{version}.md": "x"})
    with pytest.raises(SpecError, match="dotted numbers") as caught:
        load_judge(root)
    assert f"{version}.md" in str(caught.value)


def test_name_mismatch(tmp_path: Path) -> None:
    root = make_judge(tmp_path, "demo", toml_name="other")
    with pytest.raises(SpecError, match="must equal its folder 'demo'") as caught:
        load_judge(root)
    assert str(root / "judge.toml") in str(caught.value)


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("unknown_key = 1", "unknown_key"),
        ("max_attempts = 0", "max_attempts"),
        ("[sampling]\ntemperature = 5", "temperature"),
        ("name = [", "judge.toml"),
    ],
)
def test_bad_judge_toml(tmp_path: Path, line: str, field: str) -> None:
    root = make_judge(tmp_path)
    toml = root / "judge.toml"
    toml.write_text(toml.read_text() + line + "\n")
    with pytest.raises(SpecError) as caught:
        load_judge(root)
    assert str(toml) in str(caught.value)
    assert field in str(caught.value)


def test_render_with_a_missing_placeholder_names_the_file(tmp_path: Path) -> None:
    root = make_judge(tmp_path, files={"1.0.md": "{{summary}} {{ transcript }} {{extra}}"})
    prompt = load_judge(root).prompts["1.0"]
    with pytest.raises(SpecError) as caught:
        prompt.render(None, {"summary": "s"})
    message = str(caught.value)
    assert message.startswith(str(root / "1.0.md"))
    assert "['extra', 'transcript']" in message
    assert "['summary']" in message


def test_render_leaves_other_braces_and_values_alone() -> None:
    prompt = load_catalog()["geval"].prompts["1.0"]
    text = prompt.render("coverage", {"transcript": "{{summary}} {json}", "summary": "S"})
    assert "{{summary}} {json}" in text  # a value is never re-rendered


def test_version_key_orders_numerically() -> None:
    ordered = ["0.2", "0.3", "0.3.1", "0.10", "1.0", "1.0.1", "2"]
    assert sorted(reversed(ordered), key=version_key) == ordered
    assert version_key("0.2") < version_key("0.3") < version_key("0.3.1") < version_key("0.10")


def test_prompt_hash_is_stable_and_sensitive() -> None:
    base = prompt_hash("sys", {None: "prompt"})
    assert base == prompt_hash("sys", {None: "prompt"})
    assert len(base) == 16
    assert base != prompt_hash("sys2", {None: "prompt"})
    assert base != prompt_hash("sys", {None: "prompt!"})
    assert prompt_hash("s", {"a": "1", "b": "2"}) == prompt_hash("s", {"b": "2", "a": "1"})


def test_catalog_holds_the_three_judges() -> None:
    catalog = load_catalog(PROMPTS_ROOT)
    assert {"product_identity", "geval", "relevance"} <= set(catalog)
    assert {"0.2", "0.3", "0.3.1"} <= set(catalog["product_identity"].versions)
    assert catalog["geval"].config.facets == ("faithfulness", "coverage", "coherence", "fluency")


# --------------------------------------------------------------------------- planted items

GOOD_INPUTS = {
    "product_identity": {"question": "Q?", "reference": "R.", "answer": "A."},
    "geval": {"transcript": "T.", "summary": "S."},
    "relevance": {
        "query": "q",
        "criteria": [{"name": "distributed RL", "weight": 0.5}],
        "document": {"id": "d1", "title": "T", "text": "X"},
    },
}
PREFIX = {"product_identity": "PE", "geval": "GE", "relevance": "RE"}
# A field of each judge's verdict model: an expect on any other field is refused at load.
FIELD = {"product_identity": "factual_accuracy", "geval": "overall", "relevance": "level"}


def item(judge: str, number: int, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": f"{PREFIX[judge]}-{number:02d}",
        "slug": f"item-{number}",
        "judge": judge,
        "category": "control",
        "control": True,
        "inputs": GOOD_INPUTS[judge],
        "expect": [{"field": FIELD[judge], "op": ">=", "value": 1}],
        "provenance": {"source": "hand"},
    }
    data.update(changes)
    return data


def write_items(tmp_path: Path, lines: list[Any]) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return path


def load(tmp_path: Path, lines: list[Any], judge: str = "product_identity"):
    return load_items(write_items(tmp_path, lines), load_catalog()[judge])


def refused(tmp_path: Path, lines: list[Any], judge: str = "product_identity") -> str:
    path = tmp_path / "items.jsonl"
    with pytest.raises(PlantedSetError) as caught:
        load(tmp_path, lines, judge)
    message = str(caught.value)
    assert str(path) in message
    return message


@pytest.mark.parametrize("judge", list(GOOD_INPUTS))
def test_good_items_load(tmp_path: Path, judge: str) -> None:
    clean = item(judge, 1)
    planted = item(
        judge,
        2,
        category="sign_flip",
        control=False,
        provenance={"source": "generated", "clean_item": clean["id"], "seed": 3},
    )
    items = load(tmp_path, [clean, "", planted], judge)
    assert [i.id for i in items] == [clean["id"], planted["id"]]
    assert items[1].test_id == f"{planted['id']}-item-2"
    subject = items[1].subject()
    assert (subject.item_id, subject.category, subject.control) == (
        planted["id"],
        "sign_flip",
        False,
    )
    assert subject.expect == (Expectation(field=FIELD[judge], op=">=", value=1),)
    assert category_counts(items) == {"control": 1, "sign_flip": 1}


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        pytest.param({"expect": []}, "'expect'", id="empty-expect"),
        pytest.param(
            {"expect": [{"field": "x", "op": "~", "value": 1}]}, "expect.0.op", id="bad-op"
        ),
        pytest.param({"id": "pe-3"}, "'id'", id="bad-id"),
        pytest.param({"slug": "Not A Slug"}, "'slug'", id="bad-slug"),
        pytest.param({"provenance": {"source": "llm"}}, "provenance.source", id="bad-source"),
        pytest.param({"surprise": 1}, "'surprise'", id="extra-field"),
        pytest.param(
            {"inputs": {"question": "Q?", "answer": "A."}}, "'inputs.reference'", id="missing-input"
        ),
        pytest.param(
            {"inputs": {**GOOD_INPUTS["product_identity"], "hint": "x"}},
            "'inputs.hint'",
            id="extra-input",
        ),
    ],
)
def test_a_malformed_line_names_file_line_and_field(tmp_path: Path, bad: dict, field: str) -> None:
    lines = [
        item("product_identity", 1),
        item("product_identity", 2),
        item("product_identity", 3, **bad),
    ]
    message = refused(tmp_path, lines)
    assert "items.jsonl:3:" in message
    assert field in message


def test_missing_id(tmp_path: Path) -> None:
    broken = item("product_identity", 2)
    del broken["id"]
    message = refused(tmp_path, [item("product_identity", 1), broken])
    assert "items.jsonl:2:" in message
    assert "field 'id'" in message


def test_bad_json_line(tmp_path: Path) -> None:
    message = refused(tmp_path, [item("product_identity", 1), '{"id": "PE-02",'])
    assert "items.jsonl:2: not JSON" in message
    assert "column" in message


def test_duplicate_id(tmp_path: Path) -> None:
    lines = [
        item("product_identity", 1),
        item("product_identity", 2),
        item("product_identity", 1, slug="again"),
    ]
    message = refused(tmp_path, lines)
    assert "items.jsonl:3: field 'id': PE-01 already used on line 1" in message


def test_unknown_clean_item(tmp_path: Path) -> None:
    orphan = item("product_identity", 2, provenance={"source": "generated", "clean_item": "PE-99"})
    message = refused(tmp_path, [item("product_identity", 1), orphan])
    assert "items.jsonl:2:" in message
    assert "provenance.clean_item" in message
    assert "PE-99" in message


def test_a_control_without_the_control_flag_is_refused(tmp_path: Path) -> None:
    # It would count as a defect "detected" whenever the judge rightly leaves it alone.
    lines = [item("product_identity", 1), item("product_identity", 2, control=False)]
    message = refused(tmp_path, lines)
    assert "items.jsonl:2:" in message and "category 'control' holds controls" in message
    assert '"control": true' in message
    alone = [item("product_identity", 1, category="controls", control=False)]
    message = refused(tmp_path, alone)
    assert "items.jsonl:1: item PE-01 is in category 'controls'" in message
    assert 'lacks "control": true' in message


def test_a_category_mixing_controls_and_defects_is_refused(tmp_path: Path) -> None:
    lines = [
        item("product_identity", 1, category="cousin", control=False),
        item("product_identity", 2, category="cousin"),
    ]
    message = refused(tmp_path, lines)
    assert "items.jsonl:1: category 'cousin' holds controls (e.g. PE-02, line 2)" in message


def test_controls_in_a_category_of_their_own_name_load(tmp_path: Path) -> None:
    # product_identity's `illustration` items are controls under another name: legal.
    lines = [item("product_identity", 1, category="illustration"), item("product_identity", 2)]
    assert [i.control for i in load(tmp_path, lines)] == [True, True]


def test_wrong_judge(tmp_path: Path) -> None:
    foreign = {**item("product_identity", 1), "judge": "geval"}
    message = refused(tmp_path, [foreign])
    assert "items.jsonl:1: field 'judge'" in message
    assert "'product_identity'" in message


def test_relevance_criteria_collision_is_refused_at_load(tmp_path: Path) -> None:
    inputs = {
        **GOOD_INPUTS["relevance"],
        "criteria": [
            {"name": "distributed RL", "weight": 0.5},
            {"name": "Distributed_rl ", "weight": 0.5},
        ],
    }
    message = refused(
        tmp_path, [item("relevance", 1), item("relevance", 2, inputs=inputs)], judge="relevance"
    )
    assert "items.jsonl:2:" in message
    assert "inputs.criteria" in message
    assert "same name once" in message


# --------------------------------------------------------------------------- the real sets

MINIMUMS = {
    "product_identity": {
        "items": 45,
        "categories": {
            "cousin": 10,
            "sign_flip": 5,
            "self_contradiction": 5,
            "fabrication": 5,
            "dropped_edge_case": 5,
            "control": 8,
            "illustration": 3,
        },
    },
    "geval": {"items": 25, "categories": {"control": 5}},
    "relevance": {"items": 30, "categories": {}},
}


@pytest.mark.parametrize("judge", list(MINIMUMS))
def test_real_planted_sets_load_with_enough_items(judge: str) -> None:
    if not (PLANTED_ROOT / judge / "items.jsonl").is_file():
        pytest.skip(f"planted_sets/{judge}/items.jsonl does not exist yet")
    planted = load_planted_sets(PLANTED_ROOT, {judge: load_catalog()[judge]})[judge]
    counts = category_counts(planted.items)
    assert len(planted.items) >= MINIMUMS[judge]["items"]
    short = {c: (counts[c], n) for c, n in MINIMUMS[judge]["categories"].items() if counts[c] < n}
    assert not short, f"categories below their minimum (have, need): {short}"
    if judge == "relevance":
        queries = {i.inputs["query"] for i in planted.items}
        assert len(queries) >= 5
    assert all(entry.control for entry in planted.items if entry.category == "control")


# --------------------------------------------------------------------------- Expectation.holds


def holds(field: str, op: str, value: Any, verdict: dict[str, Any]) -> bool:
    return Expectation(field=field, op=op, value=value).holds(verdict)


@pytest.mark.parametrize(
    ("op", "value", "actual", "expected"),
    [
        ("==", 1, 1, True),
        ("==", 1, 2, False),
        ("==", "ok", "ok", True),
        ("!=", 1, 2, True),
        ("!=", 1, 1, False),
        ("<=", 1, 1, True),
        ("<=", 1, 2, False),
        ("<=", 1.5, 1, True),
        (">=", 3, 3, True),
        (">=", 3, 2, False),
        ("<", 1, 0, True),
        ("<", 1, 1, False),
        (">", 1, 2, True),
        (">", 1, 1, False),
        ("in", [1, 2], 2, True),
        ("in", [1, 2], 3, False),
        ("in", ["a"], "a", True),
    ],
)
def test_each_operator(op: str, value: Any, actual: Any, expected: bool) -> None:
    assert holds("x", op, value, {"x": actual}) is expected


@pytest.mark.parametrize("op", ["<=", ">=", "<", ">"])
def test_none_never_satisfies_an_ordering(op: str) -> None:
    assert holds("level", op, 0, {"level": None}) is False


def test_none_equality() -> None:
    assert holds("product_identity_match", "==", None, {"product_identity_match": None})
    assert not holds("product_identity_match", "==", False, {"product_identity_match": None})
    assert holds("product_identity_match", "!=", True, {"product_identity_match": None})
    assert holds("product_identity_match", "in", [None, False], {"product_identity_match": None})


def test_bool_handling() -> None:
    assert holds("flag", "==", False, {"flag": False})
    assert not holds("flag", "==", False, {"flag": True})
    assert holds("flag", "!=", True, {"flag": False})
    # an ordering never mixes booleans and numbers
    assert not holds("flag", "<=", 1, {"flag": True})
    assert not holds("score", ">=", False, {"score": 2})
    assert holds("flag", ">=", False, {"flag": True})


@pytest.mark.parametrize(
    ("op", "value", "actual"), [("==", 1, True), ("==", 0, False), ("in", [0], False)]
)
def test_a_bool_never_equals_a_number(op: str, value: Any, actual: bool) -> None:
    assert holds("flag", op, value, {"flag": actual}) is False


def test_dotted_fields_and_absent_fields() -> None:
    verdict = {"raw": {"coverage": 4}, "missing": []}
    assert holds("raw.coverage", "==", 4, verdict)
    assert not holds("raw.fluency", "==", 4, verdict)
    assert not holds("absent", "!=", 4, verdict), "an absent field satisfies nothing"
    assert not holds("missing.x", "==", 1, verdict)


def test_expectation_str() -> None:
    assert str(Expectation(field="factual_accuracy", op="<=", value=1)) == "factual_accuracy <= 1"
    assert str(Expectation(field="flag", op="==", value=None)) == "flag == null"


def test_relevance_requests_name_exactly_the_items_criteria() -> None:
    spec = load_catalog()["relevance"]
    inputs = spec.parse_inputs(
        {
            "query": "q",
            "criteria": [
                {"name": "distributed RL", "weight": 0.5},
                {"name": "decoupled workers", "weight": 0.5},
            ],
            "document": {"id": "d", "title": "t", "text": "x"},
        }
    )
    schema = spec.request_schema("1.0", None, inputs)
    criteria = schema["properties"]["criteria"]
    names = [entry["properties"]["name"]["const"] for entry in criteria["prefixItems"]]
    assert names == ["distributed RL", "decoupled workers"]
    assert criteria["items"] is False
    assert criteria["minItems"] == criteria["maxItems"] == 2
    # Hosted APIs get the same entries as alternatives, not as a tuple.
    portable = without_tuples(schema)["properties"]["criteria"]
    assert "prefixItems" not in portable and len(portable["items"]["anyOf"]) == 2
    # A judge without a narrowing hook sends its reply model's schema.
    geval = load_catalog()["geval"]
    assert geval.request_schema("1.0", "coverage", None)["required"] == ["score", "rationale"]


# --------------------------------------------------------------------------- gates.toml


def test_a_version_without_a_gates_table_inherits_the_newest_earlier_one(tmp_path: Path) -> None:
    """A new prompt version is gated at once: by the floors and baseline before it."""
    shutil.copytree(PLANTED_ROOT / "product_identity", tmp_path / "product_identity")
    (tmp_path / "product_identity" / "gates.toml").write_text(
        '["local:m"."0.3"]\nbaseline = "0.3"\nmin_detection = { cousin = 0.5 }\n'
        'accept_regression = "why"\npairwise_accepted = { natural = "why" }\n'
        '["other:m"."0.2"]\nmax_error_rate = 0.1\n',
        encoding="utf-8",
    )
    catalog = load_catalog()
    assert catalog["product_identity"].versions[:3] == ["0.2", "0.3", "0.3.1"]
    planted = load_planted_sets(tmp_path, {"product_identity": catalog["product_identity"]})
    planted_set = planted["product_identity"]
    gates = planted_set.gates
    assert ("local:m", "0.2") not in gates  # nothing earlier to inherit from
    # Floors and the baseline are inherited; an acceptance is never (it names one version).
    assert gates[("local:m", "0.3.1")] == gates[("local:m", "0.3")].model_copy(
        update={"accept_regression": "", "pairwise_accepted": {}}
    )
    assert gates[("local:m", "0.3")].pairwise_accepted == {"natural": "why"}
    assert gates[("local:m", "0.3.1")].baseline == "0.3"
    assert gates[("other:m", "0.3")].max_error_rate == 0.1
    assert gates[("other:m", "0.3.1")].max_error_rate == 0.1
    assert planted_set.inherited_gates == {
        ("local:m", "0.3.1"): "0.3",
        ("other:m", "0.3"): "0.2",
        ("other:m", "0.3.1"): "0.2",
    }
    assert planted_set.gates_source("local:m", "0.3.1").endswith(
        'gates.toml ["local:m"."0.3"] (inherited: prompt 0.3.1 has no table of its own)'
    )
    assert planted_set.gates_source("local:m", "0.3").endswith('gates.toml ["local:m"."0.3"]')


# --------------------------------------------------------------------------- pinned baselines


def test_an_accepted_baselines_prompt_is_pinned_and_an_edit_is_refused(tmp_path: Path) -> None:
    root = make_judge(tmp_path)
    (root / "1.1.md").write_text("Rate {{summary}} once more against {{ transcript }}.")
    spec = load_judge(root)
    folder = tmp_path / "planted"
    folder.mkdir()
    written = write_pins(folder, spec, [("local:m", "1.0")], "2026-12-02")
    write_pins(folder, spec, [("other:m", "1.1")], "2026-12-03")  # earlier pins are kept
    pins = load_pins(folder)
    assert sorted(pins) == [("local:m", "1.0"), ("other:m", "1.1")]
    assert pins[("local:m", "1.0")].pinned == "2026-12-02"
    assert pins[("local:m", "1.0")].prompts == prompt_digests(spec, "1.0")
    edited_pins(spec, pins, folder)  # nothing changed: no error

    (root / "1.0.md").write_text("Rate {{summary}} harder against {{ transcript }}.")
    with pytest.raises(PlantedSetError) as caught:
        edited_pins(load_judge(root), pins, folder)
    message = str(caught.value)
    assert message.startswith(f"{root / '1.0.md'}: prompt 1.0 of demo is the accepted baseline")
    assert f"pinned in {written} on 2026-12-02" in message
    assert "new version, e.g. 1.2" in message
    # Not in a git repository: a `git checkout` would fail, so the hint says what works.
    assert "git checkout --" not in message
    digest = pins[("local:m", "1.0")].prompts["1.0.md"]
    assert f"undo the edit by hand: its SHA-256 when accepted is pinned in {written}, " in message
    assert f"{digest[:12]}..." in message and "git does not track" in message

    (root / "1.0.md").unlink()
    with pytest.raises(PlantedSetError, match=r"accepted.toml:\d+: prompt 1.0 of demo .* gone"):
        edited_pins(load_judge(root), pins, folder)


def test_a_hand_broken_pin_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "accepted.toml").write_text('["local:m"."1.0"]\nprompts = "abc"\n')
    with pytest.raises(PlantedSetError, match=r'accepted.toml:1: \["local:m"."1.0"\] needs'):
        load_pins(tmp_path)


def test_the_committed_baselines_are_pinned_as_accepted() -> None:
    catalog = load_catalog()
    for name, planted in load_planted_sets(PLANTED_ROOT, catalog).items():
        baselines = {(m, g.baseline) for (m, _), g in planted.gates.items() if g.baseline}
        assert baselines <= set(planted.pins), f"{name}: pin {baselines - set(planted.pins)}"


def test_an_edited_pinned_prompt_git_tracks_is_restored_with_git(tmp_path: Path) -> None:
    root = make_judge(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "."], check=True)
    folder = tmp_path / "planted"
    folder.mkdir()
    write_pins(folder, load_judge(root), [("local:m", "1.0")], "2026-12-02")
    (root / "1.0.md").write_text("Rate {{summary}} harder against {{ transcript }}.")

    with pytest.raises(PlantedSetError) as caught:
        edited_pins(load_judge(root), load_pins(folder), folder)

    message = str(caught.value)
    assert f"Restore it (git checkout -- {root / '1.0.md'}) and put the change" in message
    restore = subprocess.run(["git", "-C", str(tmp_path), "checkout", "--", str(root / "1.0.md")])
    assert restore.returncode == 0  # the hint runs as printed
    edited_pins(load_judge(root), load_pins(folder), folder)
