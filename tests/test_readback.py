"""Every JSONL and TOML file the harness writes is one it reads back, whatever Unicode a
name holds: line and paragraph separators (U+2028, U+2029), NEL (U+0085), form feeds,
emoji, quotes and backslashes. `str.splitlines` splits at all of those, JSON written with
`ensure_ascii=False` keeps them raw, so a reader must split at "\\n" alone; and a TOML file
is written by a TOML writer, never by `json.dumps` (whose `\\ud83d` escapes TOML refuses).
A lone surrogate, which no UTF-8 file can hold, is refused where a corpus row is read
(pydantic refuses it as a string). The notes and reasons written into accepted.toml and
gates.toml read back whatever they say (DEL, emoji, separators)."""

from __future__ import annotations

import json
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judges.corpus.judging import judgements_text
from judges.corpus.manifest import CorpusError
from judges.corpus.rows import Judgement, load_corpus
from judges.storage.files import json_lines, jsonl_lines

SEPARATORS = ("\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\r")
# Any character a UTF-8 file can hold (no surrogates), separators made likely.
TEXT = st.text(
    st.one_of(st.characters(blacklist_categories=("Cs",)), st.sampled_from(SEPARATORS)),
    min_size=1,
    max_size=30,
)
NASTY = ["gpt\u20284", "sys\x85b", "para\u2029graph", "emoji \U0001f600", 'quo"te\\', "tab\tx"]


@given(st.lists(st.dictionaries(TEXT, TEXT, max_size=3), min_size=1, max_size=5))
def test_a_jsonl_written_raw_reads_back_row_for_row(rows: list[dict[str, str]]) -> None:
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    assert [json.loads(line) for line in jsonl_lines(text)] == rows
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rows.jsonl"
        path.write_text(text, encoding="utf-8")
        assert [value for _, value in json_lines(path)] == rows


def test_line_numbers_count_newlines_only(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": "x\u2028y"}\r\n\n{"a": "z"\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"rows\.jsonl:3: not JSON"):
        list(json_lines(path))


@given(st.lists(st.tuples(TEXT, TEXT, TEXT), min_size=1, max_size=5, unique=True))
def test_corpus_judgements_read_back(names: list[tuple[str, str, str]]) -> None:
    rows = [Judgement(system=s, item=i, judge=j, score=1) for s, i, j in names]
    text = judgements_text(rows)
    assert [Judgement.model_validate_json(line) for line in jsonl_lines(text)] == rows


def _release(root: Path, system: str, reference: str, annotator: str) -> Path:
    folder = root / "annotations" / system
    folder.mkdir(parents=True)
    records = [
        {"instruction": f"Question {n} {system}", "dataset": "hand", "generator_1": reference,
         "generator_2": system, "preference": 1 + n % 2}
        for n in range(3)
    ]  # fmt: skip
    (folder / f"{annotator}.json").write_text(json.dumps(records), encoding="utf-8")
    (root / "leaderboards").mkdir()
    (root / "leaderboards" / f"{annotator}_leaderboard.csv").write_text(
        f',win_rate,n_total\n"{system}",33.333333333333336,3\n', encoding="utf-8"
    )
    return root


def _import(release: Path, corpora: Path, name: str) -> Any:
    from judges.corpus.alpaca_eval import import_alpaca_eval

    return import_alpaca_eval(release, corpora / "hand", name)


@pytest.mark.parametrize("nasty", NASTY)
def test_an_alpaca_eval_import_with_any_name_reads_back(tmp_path: Path, nasty: str) -> None:
    release = _release(tmp_path / f"release {nasty}", nasty, f"ref {nasty}", "annotator")
    _import(release, tmp_path / "corpora", "hand")
    folder = tmp_path / "corpora" / "hand"
    manifest = tomllib.loads((folder / "corpus.toml").read_text(encoding="utf-8"))
    assert manifest["source"] == release.name
    assert manifest["judges"]["annotator"]["reference"] == f"ref {nasty}"
    corpus = load_corpus(folder)
    assert corpus.systems == (nasty,)
    assert len(corpus.judgements) == 3


@given(reference=TEXT, annotator=TEXT.filter(lambda a: "/" not in a and "\0" not in a))
def test_any_reference_and_annotator_make_valid_toml(reference: str, annotator: str) -> None:
    if annotator in (".", "..") or annotator.startswith(".") or "\\" in annotator:
        return  # not a file name a release can have
    try:
        Path(annotator + ".json").name.encode("utf-8")
    except UnicodeEncodeError:
        return
    with tempfile.TemporaryDirectory() as root:
        try:
            release = _release(Path(root) / "release", "sys", reference, annotator)
        except OSError:
            return  # a name this file system refuses (too long)
        _import(release, Path(root) / "corpora", "hand")
        folder = Path(root) / "corpora" / "hand"
        manifest = tomllib.loads((folder / "corpus.toml").read_text(encoding="utf-8"))
        assert manifest["judges"][annotator]["reference"] == reference
        assert len(load_corpus(folder).judgements) == 3


def test_a_lone_surrogate_in_a_corpus_row_is_refused_with_its_line(tmp_path: Path) -> None:
    folder = tmp_path / "hand"
    release = _release(tmp_path / "release", "sys", "ref", "annotator")
    _import(release, tmp_path, "hand")
    rows = (folder / "judgements.jsonl").read_text(encoding="utf-8")
    (folder / "judgements.jsonl").write_text(rows.replace('"sys"', '"sys\\ud800"', 1))
    with pytest.raises(CorpusError, match=r"judgements\.jsonl:1: system: .*unicode string"):
        load_corpus(folder)


# The reasons a team writes into accepted.toml and gates.toml: any text a UTF-8 file holds,
# DEL (U+007F) and emoji included, which `json.dumps` would write as TOML refuses.
REASON = st.text(
    st.one_of(st.characters(blacklist_categories=("Cs",)), st.sampled_from([*SEPARATORS, "\x7f"])),
    min_size=1,
    max_size=40,
)


@given(note=REASON, reason=REASON)
def test_a_pins_notes_read_back_whatever_they_say(note: str, reason: str) -> None:
    from judges.sets.folder import PINS_FILE
    from judges.sets.pins import load_pins, note_rerecorded

    with tempfile.TemporaryDirectory() as root:
        folder = Path(root)
        (folder / PINS_FILE).write_text(
            '["local:m"."1.0"]\npinned = "2026-12-02"\nprompts = { "1.0.md" = "0" }\n',
            encoding="utf-8",
        )
        note_rerecorded(folder, "local:m", "1.0", note)
        assert load_pins(folder)[("local:m", "1.0")].rerecorded == note
        pin = load_pins(folder)[("local:m", "1.0")]
        assert pin.repinned == ""  # a re-recording note is not a re-pinning
        note_rerecorded(folder, "local:m", "1.0", reason)
        assert load_pins(folder)[("local:m", "1.0")].rerecorded == reason


@given(reason=REASON)
def test_an_acceptance_reason_in_gates_toml_reads_back(reason: str) -> None:
    from judges.sets.folder import SetFolder

    tables = {("local:m", "1.0"): {"accept_not_fit": reason, "accept_regression": reason}}
    with tempfile.TemporaryDirectory() as root:  # hypothesis: no function-scoped tmp_path
        text = SetFolder(Path(root), "j").write_gates(tables).read_text(encoding="utf-8")
    table = tomllib.loads(text)["local:m"]["1.0"]
    assert table["accept_not_fit"] == table["accept_regression"] == reason
