"""A planted set's folder (`judges.sets.folder.SetFolder`): where each file is, and every file
written through the one TOML writer (`judges.storage.toml_files`) reads back as written,
whatever its text holds; a number TOML readers disagree on is refused, naming file and key.
The committed sets' files rewritten through it are the committed bytes."""

from __future__ import annotations

import math
import shutil
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import given
from hypothesis import strategies as st

from judges.core.spec import load_catalog
from judges.sets.folder import (
    DERIVED_FILE,
    EXPECTATIONS_FILE,
    GATES_FILE,
    ITEMS_FILE,
    PINNED_CASSETTES_FILE,
    PINS_FILE,
    PROBE_EXPECTATIONS_FILE,
    PROBE_ITEMS_FILE,
    PROBES_FILE,
    REPLIES_FILE,
    SET_FILE,
    SetFolder,
)
from judges.sets.items import PlantedSetError
from judges.sets.planted import load_planted_set
from judges.sets.tables import table_line
from judges.storage.toml_files import toml_string, toml_text, write_toml

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "planted_sets"
# What a reason, an item id or a prompt file name may hold: line separators TOML and
# str.splitlines disagree on, an emoji (a surrogate pair in JSON's escapes), DEL, quotes,
# backslashes, control characters, dots and spaces (a key TOML must quote).
HOSTILE = [
    "line\u2028separator", "para\u2029graph", "next\x85line", "emoji \U0001f600", "del\x7f",
    'quo"te', "back\\slash", "tab\tand\nnewline\r", "bell\x07", "a.b c", "", "=", "[x]",
    "'single'", "#hash",
]  # fmt: skip
TEXT = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=20),
)


def test_each_file_has_its_path_in_the_set_folder(tmp_path: Path) -> None:
    folder = SetFolder(tmp_path, "support")
    assert folder.path == tmp_path / "support"
    assert SetFolder.at(folder.path) == folder
    assert {
        folder.items_path.name: ITEMS_FILE,
        folder.replies_path.name: REPLIES_FILE,
        folder.derived_path.name: DERIVED_FILE,
        folder.probes_path.name: PROBES_FILE,
        folder.probe_items_path.name: PROBE_ITEMS_FILE,
        folder.config_path.name: SET_FILE,
        folder.gates_path.name: GATES_FILE,
        folder.expectations_path.name: EXPECTATIONS_FILE,
        folder.probe_expectations_path.name: PROBE_EXPECTATIONS_FILE,
        folder.pins_path.name: PINS_FILE,
        folder.pinned_cassettes_path.name: PINNED_CASSETTES_FILE,
    } == {
        "items.jsonl": ITEMS_FILE,
        "replies.jsonl": REPLIES_FILE,
        "derived.toml": DERIVED_FILE,
        "probes.toml": PROBES_FILE,
        "probes.jsonl": PROBE_ITEMS_FILE,
        "set.toml": SET_FILE,
        "gates.toml": GATES_FILE,
        "expectations.toml": EXPECTATIONS_FILE,
        "probe_expectations.toml": PROBE_EXPECTATIONS_FILE,
        "accepted.toml": PINS_FILE,
        "accepted-cassettes.sha256": PINNED_CASSETTES_FILE,
    }
    assert all(path.parent == folder.path for path in _paths(folder))


def test_a_loaded_planted_set_names_its_folder() -> None:
    catalog = load_catalog()
    planted = load_planted_set(COMMITTED, catalog["geval"])
    assert planted.folder == SetFolder(COMMITTED, "geval")
    assert (
        planted.folder.read_gates().keys() == planted.gates.keys() - planted.inherited_gates.keys()
    )


def test_an_absent_file_reads_as_no_tables(tmp_path: Path) -> None:
    folder = SetFolder(tmp_path, "empty")
    assert folder.read_gates() == folder.read_expectations() == {}
    assert folder.read_probe_expectations() == folder.read_pins() == {}
    assert folder.read_config() == folder.read_pinned_cassettes() == {}


@given(
    reason=TEXT, item=TEXT, model=TEXT, version=st.sampled_from(["1.0", "0.10", "2"]), probe=TEXT
)
def test_every_file_reads_back_what_was_written(
    reason: str, item: str, model: str, version: str, probe: str
) -> None:
    model = f"local:{model}"  # a judge model names its backend
    gates = {
        (model, version): {
            "baseline": version,
            "accept_not_fit": reason,
            "min_detection": {item: 0.75, "plain": 0.5},
            "max_error_rate": 0.0,
            "label_stability": {f"retest.level.{item}": 0.8},
        }
    }
    misses = {(model, version): {item: reason, "SR-01": reason}}
    probes = {(model, version): {probe: {item: reason}, "dummy": {"SR-01": reason}}}
    pins = {
        (model, version): {
            "pinned": "2026-12-02",
            "prompts": {item: "ab" * 32},
            "cassettes": {"files": 3, "sha256": "cd" * 32},
            "repinned": reason,
        }
    }
    with tempfile.TemporaryDirectory() as root:  # hypothesis: no function-scoped tmp_path
        folder = SetFolder(Path(root), "judge")
        folder.write_gates(gates)
        folder.write_expectations(misses)
        folder.write_probe_expectations(probes)
        listed = {f"judge/{item}.yaml": "ef" * 32} if not {"\n", "\r"} & set(item) else {}
        folder.write_pins(pins, listed)
        assert folder.read_gates() == gates
        assert folder.read_expectations() == misses
        assert folder.read_probe_expectations() == probes
        assert folder.read_pins() == pins
        assert folder.read_pinned_cassettes() == listed


def test_hostile_text_is_written_escaped_on_one_line(tmp_path: Path) -> None:
    folder = SetFolder(tmp_path, "judge")
    tables = {("local:m", "1.0"): {text or "empty": text for text in HOSTILE}}
    path = folder.write_expectations(tables)
    written = path.read_text(encoding="utf-8")
    assert folder.read_expectations() == tables
    # One line per key, however the reason reads: split at "\n" alone (as TOML does).
    assert len(written.split("\n")) == len(written.strip().split("\n")) + 1
    assert written.count("\n") == 3 + 2 + len(HOSTILE)  # header, blank + table, lines
    assert "\x7f" not in written and "\\u007f" in written  # DEL escaped, not raw
    assert "\U0001f600" in written  # an emoji as itself: not a surrogate pair TOML refuses
    assert '"quo\\"te" = "quo\\"te"' in written
    assert '"a.b c" = "a.b c"' in written  # a key TOML must quote, quoted


def test_written_tables_are_found_by_their_line(tmp_path: Path) -> None:
    """The loaders name a table's line in their errors (`table_line`): the header they find
    is the one written, and so is a key inside an inline table."""
    folder = SetFolder(tmp_path, "judge")
    gates = {
        ("local:m", "0.10"): {"baseline": "0.9", "min_detection": {"truncation": 0.6}},
        ("local:m", "0.9"): {"baseline": "0.9", "max_error_rate": 0.05},
    }
    path = folder.write_gates(gates)
    lines = path.read_text(encoding="utf-8").split("\n")
    header = table_line(path, ("local:m", "0.10"))
    assert lines[header - 1] == '["local:m"."0.10"]'
    assert table_line(path, ("local:m", "0.9")) < header  # versions in numeric order
    found = table_line(path, ("local:m", "0.10"), "truncation")
    assert lines[found - 1] == "min_detection = { truncation = 0.6 }"
    assert lines[0].startswith("# Gates per judge model and prompt version.")


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_number_toml_readers_disagree_on_is_refused_naming_file_and_key(
    tmp_path: Path, bad: float
) -> None:
    folder = SetFolder(tmp_path, "judge")
    folder.write_gates({("local:m", "1.0"): {"baseline": "1.0"}})
    before = folder.gates_path.read_bytes()
    tables = {("local:m", "1.0"): {"baseline": "1.0", "min_detection": {"truncation": bad}}}
    with pytest.raises(PlantedSetError) as refused:
        folder.write_gates(tables)
    message = str(refused.value)
    assert str(folder.gates_path) in message
    assert '["local:m"."1.0"] min_detection.truncation' in message
    assert "not a finite number" in message
    assert folder.gates_path.read_bytes() == before  # nothing written


def test_a_nan_in_a_document_is_refused_too(tmp_path: Path) -> None:
    path = tmp_path / "corpus.toml"
    with pytest.raises(ValueError, match=r"corpus\.toml: scale\.low = nan is not a finite"):
        write_toml(path, {"name": "c", "scale": {"low": math.nan, "high": 5}})
    with pytest.raises(ValueError, match=r"weights\.1 = inf"):
        toml_text(path, {"weights": [1.0, math.inf]})
    assert not path.exists()


@given(
    st.dictionaries(
        TEXT,
        st.one_of(TEXT, st.integers(), st.booleans(), st.dictionaries(TEXT, TEXT, max_size=3)),
        max_size=4,
    )
)
def test_a_document_is_what_tomli_w_writes(document: dict[str, Any]) -> None:
    text = toml_text(Path("doc.toml"), document)
    assert text == tomli_w.dumps(document)
    assert tomllib.loads(text) == document


def test_the_pins_cassette_list_is_written_beside_them(tmp_path: Path) -> None:
    folder = SetFolder(tmp_path, "judge")
    folder.write_pins({("local:m", "1.0"): {"pinned": "2026-12-02"}}, {"judge/b.yaml": "1" * 64})
    assert folder.read_pinned_cassettes() == {"judge/b.yaml": "1" * 64}
    assert folder.pinned_cassettes_path.read_text(encoding="utf-8").startswith(
        f"# The cassettes of the accepted baselines ({PINS_FILE})"
    )
    folder.write_pins({}, {})  # every pin gone: the list is rewritten empty, never left stale
    assert folder.read_pinned_cassettes() == {}
    folder.pinned_cassettes_path.write_text("abc  judge/x.yaml\n", encoding="utf-8")
    with pytest.raises(PlantedSetError, match=rf"{PINNED_CASSETTES_FILE}:1: expected"):
        folder.read_pinned_cassettes()


@pytest.mark.parametrize("judge", ["geval", "pairwise", "product_identity", "relevance"])
def test_the_committed_files_rewritten_are_the_committed_bytes(tmp_path: Path, judge: str) -> None:
    """Read and written back through the folder, every committed table is byte for byte what
    `python -m judges baseline` wrote; only a header older than today's may differ."""
    from judges.sets.pins import load_pins, save_pins

    committed = SetFolder(COMMITTED, judge)
    copy = SetFolder(tmp_path, judge)
    shutil.copytree(committed.path, copy.path)
    copy.write_gates(copy.read_gates())
    copy.write_expectations(copy.read_expectations())
    if copy.probe_expectations_path.is_file():
        copy.write_probe_expectations(copy.read_probe_expectations())
    save_pins(copy.path, load_pins(copy.path))
    for path in _paths(committed):
        if not path.is_file():
            continue
        before = path.read_text(encoding="utf-8")
        after = (copy.path / path.name).read_text(encoding="utf-8")
        assert _tables_part(after) == _tables_part(before), path
        if path.name != GATES_FILE:  # gates.toml's header grew since some sets were accepted
            assert after == before, path


def _paths(folder: SetFolder) -> list[Path]:
    return [
        folder.items_path, folder.replies_path, folder.derived_path, folder.probes_path,
        folder.probe_items_path, folder.config_path, folder.gates_path, folder.expectations_path,
        folder.probe_expectations_path, folder.pins_path, folder.pinned_cassettes_path,
    ]  # fmt: skip


def _tables_part(text: str) -> str:
    return "\n".join(line for line in text.split("\n") if not line.startswith("#"))


@given(key=TEXT, value=TEXT)
def test_a_line_laid_out_by_hand_quotes_as_tomli_w_does(key: str, value: str) -> None:
    """The importer's always-quoted keys: json.dumps wrote an emoji as a surrogate pair
    TOML refuses, and DEL raw; a plain ASCII name is quoted as before, byte for byte."""
    assert tomllib.loads(f"{toml_string(key)} = {toml_string(value)}\n") == {key: value}
    assert toml_string("Adversarial/GPTInst") == '"Adversarial/GPTInst"'


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf"])
def test_a_non_finite_floor_in_gates_toml_is_refused_when_the_set_loads(
    tmp_path: Path, bad: str
) -> None:
    """TOML reads `nan` as a float: a floor no run meets or fails (every comparison with NaN
    is false), which `baseline` would otherwise carry on writing."""
    shutil.copytree(COMMITTED / "product_identity", tmp_path / "product_identity")
    (tmp_path / "product_identity" / GATES_FILE).write_text(
        f'["local:m"."0.3"]\nmin_detection = {{ cousin = {bad} }}\n', encoding="utf-8"
    )
    with pytest.raises(PlantedSetError) as refused:
        load_planted_set(tmp_path, load_catalog()["product_identity"])
    message = str(refused.value)
    assert f'{tmp_path / "product_identity" / GATES_FILE}: ["local:m"."0.3"]' in message
    assert "min_detection.cousin" in message and "finite number" in message
