"""docs/planting.md, run as printed: candidates from real rows, reviewed in the terminal,
applied, recorded against the fake judge on 127.0.0.1 and replayed offline.

A judge that reads the content and ignores the layout passes every planted item and every
format probe; a judge at chance, recorded on the same accepted set, is NOT FIT.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import re
import shlex
from pathlib import Path

import pytest

from judges.sets.generators import Options
from judges.sets.generators._text import words_only
from judges.sets.generators.markdown import is_markdown, markdown

from ._planting import blocks, commands, printed, real_rows
from ._support import FakeJudge, Received
from ._walkthrough import INNER_OPTIONS, MODEL, command, judged_reply

COIN = "local:coin-judge"
WORDY = "local:wordy-judge"
COUSINS = (("jacket", "coat"), ("lamp", "torch"), ("kettle", "teapot"), ("backpack", "suitcase"),
           ("chair", "stool"), ("scarf", "shawl"))  # fmt: skip


def _content(text: str) -> str:
    """What a format-blind reader sees: the words, Markdown and white space aside."""
    plain = markdown(text, 0, Options()).text if is_markdown(text) else text
    return words_only(plain)


def content_judge(good: dict[str, list[str]], longer_is_better: bool = False):  # type: ignore[no-untyped-def]
    """Full marks to a reply that states a good row's answer in full, in any layout, and 0
    otherwise; or, `longer_is_better`, 2 for a good answer and 3 for one half as long again."""

    def answer(received: Received) -> str:
        reply = judged_reply(received)
        content = _content(reply)
        found = next((g for g in good if content.startswith(g)), None)
        score = 0 if found is None else 3
        if found is not None and longer_is_better:
            words = len(reply.split())
            score = 3 if words > 1.5 * len(good[found]) else 2
        verdict = {"accuracy": score, "helpfulness": score, "rationale": "read the content"}
        return json.dumps(verdict)

    return answer


def coin_judge(received: Received) -> str:
    """A judge at chance: its score follows the text's hash, never its content."""
    digest = hashlib.sha256(judged_reply(received).encode("utf-8")).digest()
    score = random.Random(digest).choice([0, 1, 2, 3])
    return json.dumps({"accuracy": score, "helpfulness": score, "rationale": "a coin"})


def test_the_planting_walkthrough_runs_as_printed(
    repository: Path,
    pytester: pytest.Pytester,
    fake_judge: FakeJudge,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plant, review, record = commands()[:3]  # section 4 is test_planting_writers.py's
    assert plant[0] == "python -m judges init support_reply --model local:NAME"
    assert review == [
        'python -m judges plant support_reply --review --reviewer "Ada Lovelace"',
        "python -m judges plant support_reply --apply",
    ]
    rows = real_rows()
    (repository / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (repository / "cousins.toml").write_text("".join(f'"{a}" = "{b}"\n' for a, b in COUSINS))
    assert json.loads(blocks("json")[0]) == rows[0], "the page shows the first of the rows"

    # 1. init, the example items dropped, candidates from the rows.
    init = shlex.split(plant[0].replace("local:NAME", MODEL))[3:]
    code, out = command([*init, "--base-url", fake_judge.url])
    assert code == 0, out
    for name in shlex.split(plant[1])[1:]:
        (repository / name).unlink()
    code, out = command(shlex.split(plant[2])[3:])
    assert code == 0, out
    made, asked, sizes = printed()[:3]
    assert all(line in out for line in made), (made, out)
    assert "2 rows not labelled as controls, not planted from (lines 13, 14)" in out
    candidates = [
        json.loads(line)
        for line in (repository / "planted_sets/support_reply/candidates.jsonl").open()
    ]
    generators = {c["generator"] for c in candidates}
    assert generators == {
        "source", "truncation", "drop_sentence", "number_change", "negation", "entity_swap",
        "blank_lines", "scattered_spaces", "indentation", "markdown", "repeated",
    }  # fmt: skip

    # 2. Review in the terminal: every candidate accepted but one entity swap rejected (the
    # reviewer judged a coat for a jacket too close a cousin), then applied.
    answers = ["r" if c["id"] == "entity_swap:jacket-0" else "a" for c in candidates]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(answers) + "\n"))
    code, out = command(shlex.split(review[0])[3:])
    assert code == 0, out
    assert f"review: {len(candidates) - 1} accepted, 0 edited, 1 rejected" in out
    assert all(line in out for line in asked), (asked, out[:3000])
    code, out = command(shlex.split(review[1])[3:])
    assert code == 0, out
    assert all(line in out for line in sizes), (sizes, out)
    assert "warning" not in out, out

    # 3. Record the content judge, then replay offline: every item and probe passes.
    good = {_content(r["answer"]): r["answer"].split() for r in rows if r["label"] == "good"}
    fake_judge.content = content_judge(good)
    words = shlex.split(record[0].replace("local:NAME", MODEL))
    words = [fake_judge.url if w == "http://127.0.0.1:8080/v1" else w for w in words]
    recorded = pytester.runpytest_inprocess(*INNER_OPTIONS, *words[3:])
    assert len(fake_judge.calls) == 71 + 60 + 12, "items, format probes, one redraw each"
    assert recorded.ret == 0, recorded.stdout.str()[-3000:]
    calls = len(fake_judge.calls)
    assert record[1:] == ["python -m pytest --snapshot-update", "python -m pytest"]
    assert pytester.runpytest_inprocess(*INNER_OPTIONS, "--snapshot-update").ret == 0
    replayed = pytester.runpytest_inprocess(*INNER_OPTIONS)
    assert len(fake_judge.calls) == calls, "offline"
    assert replayed.ret == 0, replayed.stdout.str()[-3000:]
    # 71 items, 60 format probes and their 12 redraws, the set-level tests.
    replayed.stdout.fnmatch_lines([
        "*support_reply 1.0 on local:fake-judge: detection 59/59 = 1.00 ?0.94, 1.00? n=59*",
        "support_reply 1.0: PASS: better than chance on all 7 deciding tests",
    ])  # fmt: skip
    report = (repository / "reports/support_reply/1.0/report.md").read_text("utf-8")
    assert "NOT FIT" not in report
    for probe in ("format_blank_lines", "format_indentation", "format_markdown",
                  "format_repeated", "format_scattered_spaces"):  # fmt: skip
        assert f"| {probe} | 12 | 0/12 = 0.00 [0.00, 0.24] |" in report, report

    # The same set, a judge that likes length: it catches every defect, ignores the layout,
    # and fails the verbosity probe alone (the same answer said again scores higher).
    fake_judge.content = content_judge(good, longer_is_better=True)
    wordy = [w if w != MODEL else WORDY for w in words]
    pytester.runpytest_inprocess(*INNER_OPTIONS, *wordy[3:])
    verbose = pytester.runpytest_inprocess(*INNER_OPTIONS, "--judge-model", WORDY)
    assert verbose.ret == 1
    failed = re.findall(
        r"^FAILED \S+\[support_reply-1\.0-SR-\d+-(\w+)-", verbose.stdout.str(), re.M
    )
    assert failed == ["format_repeated"] * 12, failed
    report = (repository / "reports/support_reply/1.0/report.md").read_text("utf-8")
    assert (
        "| format_repeated | 12 | 12/12 = 1.00 [0.76, 1.00] | 0/12 = 0.00 [0.00, 0.24] "
        "(two-sided p = 0.000488) |"
    ) in report
    assert "bias beyond noise: +1.00 (two-sided McNemar exact p = 0.000488)" in report

    # The same accepted set, a judge at chance: NOT FIT on the generated defects.
    fake_judge.content = coin_judge
    coin = [w if w != MODEL else COIN for w in words]
    pytester.runpytest_inprocess(*INNER_OPTIONS, *coin[3:])
    chance = pytester.runpytest_inprocess(*INNER_OPTIONS, "--judge-model", COIN)
    assert chance.ret == 1
    chance.stdout.fnmatch_lines([
        "*on local:coin-judge: detection 32/59 = 0.54 ?0.42, 0.66? n=59*NOT FIT (at chance on "
        "planted detection, planted detection: dropped_sentence*",
    ])  # fmt: skip
    report = (repository / "reports/support_reply/1.0/report.md").read_text("utf-8")
    assert report.startswith("# support_reply, prompt 1.0: NOT FIT")
    # It flips format probes too, far beyond its own redraws (which never flip).
    assert (
        "| format_blank_lines | 12 | 11/12 = 0.92 [0.65, 0.99] | 0/12 = 0.00 [0.00, 0.24] "
        "(two-sided p = 0.000977) |"
    ) in report
