"""`corpus judge --record` against the fake judge on 127.0.0.1 shares the planted path's
machinery: the scrubber (no form of an echoed key on disk or on the terminal), the safe-name
rule (no cassette outside its folder, two names that become one refused before any call),
the recording lock (a second recording refuses) and the cost cap (a worst-case reservation
before each call, a spend line, and a rerun that records only what is missing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judges.cli.main import main
from tests._key_forms import LOCAL_KEY, fragments_in, key_forms

from ._support import FakeJudge, Received, product_identity_verdict

TINY = ("corpus", "judge", "tiny", "--record")
PLANNED = 18  # 3 systems x 3 items x 2 runs
# What one whole recording sends: the 6 unparseable replies are tried 3 times each.
FULL_CALLS = 12 + 6 * 3
# Output tokens at $1 each, input free: a call reserves max_tokens (320) = $320 and costs
# the fake's 20 tokens = $20; a $340 cap lets two calls start, one after the other.
PRICES = '[models."local:fake-judge"]\ninput_per_mtok = 0.0\noutput_per_mtok = 1000000.0\n'


def _record(fake_judge: FakeJudge, args: list[str], *extra: str) -> int:
    return main([*TINY, "--judge-base-url", fake_judge.url, *args, *extra])


def _cassettes(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted((root / "cassettes").rglob("*.yaml"))}


def _rewrite(path: Path, rows: list[dict[str, str]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_no_form_of_an_echoed_key_reaches_a_corpus_file_or_the_terminal(
    corpus: tuple[Path, list[str]],
    fake_judge: FakeJudge,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root, args = corpus
    monkeypatch.setenv("JUDGES_LOCAL_API_KEY", LOCAL_KEY)

    def echoing(received: Received) -> str:
        headers = {name.lower(): value for name, value in received.headers.items()}
        sent = headers["authorization"].removeprefix("Bearer ")
        assert sent == LOCAL_KEY  # so every form below is a form of the key
        forms = " | ".join(key_forms(sent).values())
        verdict = product_identity_verdict(3, f"you sent {forms}")
        verdict["answer_product"] = f"the product of {forms}"
        return json.dumps(verdict)

    fake_judge.content = echoing
    assert _record(fake_judge, args) == 0
    written = [p for p in root.rglob("*") if p.is_file()]
    assert len([p for p in written if p.suffix == ".yaml"]) == PLANNED
    for path in written:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert fragments_in(text, LOCAL_KEY) == [], path
    out, err = capsys.readouterr()
    assert fragments_in(out + err, LOCAL_KEY) == []


def test_names_of_dots_stay_inside_the_cassette_folder(
    corpus: tuple[Path, list[str]], fake_judge: FakeJudge
) -> None:
    root, args = corpus
    folder = root / "corpora" / "tiny"
    outputs = [json.loads(line) for line in (folder / "outputs.jsonl").read_text().splitlines()]
    _rewrite(folder / "outputs.jsonl", [{**o, "system": ".." if o["system"] == "good" else
                                         o["system"]} for o in outputs])  # fmt: skip
    manifest = (folder / "corpus.toml").read_text().replace("[judges.new", '[judges."."')
    (folder / "corpus.toml").write_text(manifest)
    assert _record(fake_judge, args) == 0
    inside = (root / "cassettes" / "tiny").resolve()
    cassettes = list((root / "cassettes").rglob("*.yaml"))
    assert len(cassettes) == PLANNED
    assert all(p.resolve().is_relative_to(inside) for p in cassettes), cassettes


@pytest.mark.parametrize(
    ("first", "second"), [("gpt 4", "gpt_4"), ("x" * 80 + "a", "x" * 80 + "b")]
)
def test_two_systems_sharing_a_cassette_name_are_refused_before_any_call(
    corpus: tuple[Path, list[str]],
    fake_judge: FakeJudge,
    capsys: pytest.CaptureFixture[str],
    first: str,
    second: str,
) -> None:
    root, args = corpus
    folder = root / "corpora" / "tiny"
    outputs = [json.loads(line) for line in (folder / "outputs.jsonl").read_text().splitlines()]
    renamed = {"good": first, "mixup": second}
    _rewrite(folder / "outputs.jsonl", [{**o, "system": renamed.get(o["system"], o["system"])}
                                        for o in outputs])  # fmt: skip
    assert _record(fake_judge, args) == 2
    err = capsys.readouterr().err
    assert "outputs.jsonl" in err and repr(first) in err and repr(second) in err
    assert "rename one of them" in err
    assert fake_judge.calls == [] and not (root / "cassettes").exists()


def test_a_corpus_name_that_is_not_a_folder_is_refused(
    corpus: tuple[Path, list[str]], fake_judge: FakeJudge, capsys: pytest.CaptureFixture[str]
) -> None:
    _, args = corpus
    assert main(["corpus", "judge", "..", "--record", *args]) == 2
    assert "is not a folder name" in capsys.readouterr().err
    assert fake_judge.calls == []


def test_a_second_recording_refuses_while_one_holds_the_folder(
    corpus: tuple[Path, list[str]], fake_judge: FakeJudge, capsys: pytest.CaptureFixture[str]
) -> None:
    from judges.calls.cassettes import lock_recording

    root, args = corpus
    lock = lock_recording(root / "cassettes")  # what a first recording holds
    try:
        assert _record(fake_judge, args) == 2
    finally:
        lock.release()
    err = capsys.readouterr().err
    assert "another recording" in err and "records only what is still missing" in err
    assert fake_judge.calls == [] and _cassettes(root) == {}
    assert _record(fake_judge, args) == 0  # once it ends, the recording runs
    assert len(fake_judge.calls) == FULL_CALLS


def test_the_cost_cap_reserves_each_call_and_a_rerun_records_only_the_rest(
    corpus: tuple[Path, list[str]], fake_judge: FakeJudge, capsys: pytest.CaptureFixture[str]
) -> None:
    root, args = corpus
    (root / "prices.toml").write_text(PRICES)
    priced = [*args, "--judge-prices", str(root / "prices.toml")]
    assert _record(fake_judge, priced, "--cost-cap", "340") == 1
    err = capsys.readouterr().err
    assert len(fake_judge.calls) == 2
    assert "cost cap $340.0000: spent $40.0000" in err
    assert "live spend local:fake-judge: 2 calls" in err
    assert f"INCOMPLETE: the cost cap of $340.0000 stopped {PLANNED - 2} judgements" in err
    rows = [json.loads(line) for line in
            (root / "corpora" / "tiny" / "judgements.jsonl").read_text().splitlines()]  # fmt: skip
    assert len(rows) == PLANNED
    assert sum(r.get("error", "").startswith("cost_cap: cost cap reached") for r in rows) == 16
    first = _cassettes(root)
    assert len(first) == 2

    assert _record(fake_judge, priced, "--cost-cap", "1000000") == 0
    assert len(fake_judge.calls) == FULL_CALLS  # as one whole recording: none billed twice
    after = _cassettes(root)
    assert len(after) == PLANNED
    assert {p: after[p] for p in first} == first  # no recorded cassette replaced


def test_the_cost_cap_needs_record(
    corpus: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    _, args = corpus
    assert main(["corpus", "judge", "tiny", "--cost-cap", "1", *args]) == 2
    assert "--cost-cap caps live calls: pass it with --record" in capsys.readouterr().err
