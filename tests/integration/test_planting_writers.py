"""docs/planting.md section 4, run as printed: model-written candidates recorded against a
fake model on 127.0.0.1, replayed offline byte for byte, reviewed, applied, and gated.

The fake model writes the texts (a paraphrase, a longer and a shorter answer, a label
flip) and then judges them. A judge that reads the content passes every item and probe; one
that scores a long answer higher fails the `written_longer` probe, and it alone. Also: the
cost cap and a dead server, through the same command.
"""

from __future__ import annotations

import io
import json
import re
import shlex
import socket
from pathlib import Path

import pytest

from ._planting import blocks, printed, real_rows
from ._support import FakeJudge, Received
from ._walkthrough import INNER_OPTIONS, MODEL, command, judged_reply

SECTION = 3  # the page's fourth bash block and fourth printed block
WORDY = "local:wordy-judge"
OTHER = "local:other-judge"  # the second model, on the same fake server
_TEXT = re.compile(r"## Text\n\n(.*?)\n\n## ", re.S)
_PAIR = re.compile(r"## Original\n\n(.*?)\n\n## Candidate\n\n(.*?)\n\n## Your task", re.S)
_GOOD = re.compile(
    r"Yes: you can return the (\w+) within (\d+) days of delivery\. The refund of (\d+) EUR "
    r"goes to your original payment method\. Shipping costs are not refunded\."
)


def write(kind: str, text: str) -> dict[str, str]:
    """What the fake model writes for one generator, from one of the rows' good answers."""
    found = _GOOD.fullmatch(text)
    assert found, text
    item, days, price = found.groups()
    if kind == "paraphrase":
        new = (
            f"Yes, the {item} can be sent back within {days} days of delivery. Your original "
            f"payment method receives the refund of {price} EUR. Shipping costs are not "
            "refunded."
        )
    elif kind == "longer":
        new = (
            f"{text} To put it another way: as long as the {item} is unused, you have {days} "
            f"days from the day it was delivered to send it back to us, and once it arrives "
            f"the {price} EUR you paid are refunded to the same payment method you used. "
            "Please keep in mind that the shipping costs are not part of that refund."
        )
    elif kind == "shorter":
        new = (
            f"Yes: return the {item} within {days} days of delivery for a {price} EUR refund "
            "to your payment method; shipping is not refunded."
        )
    elif kind == "rubric_level":
        new = text.replace("Shipping costs are not refunded.", "Shipping costs may be refunded.")
    else:
        new = text.replace(f"within {days} days", f"within {int(days) + 30} days")
    return {"text": new, "change": f"{kind} of the answer"}


def check(original: str, candidate: str) -> dict[str, object]:
    """What the fake second model says: a number changed, or (too strict) the word
    "original" gone, differs; anything else says the same."""
    if set(re.findall(r"\d+", original)) != set(re.findall(r"\d+", candidate)):
        return {"differs": True, "reason": "a number changed"}
    if "original" in original and "original" not in candidate:
        return {"differs": True, "reason": "the original payment method is gone"}
    return {"differs": False, "reason": "the same facts in other words"}


def _is_writer(received: Received) -> bool:
    return received.body["messages"][-1]["content"].startswith("<!-- plant writer ")


def policy_judge(longer_is_better: bool = False):  # type: ignore[no-untyped-def]
    """The fake model: a writer for `plant`'s prompts, a second model for its check, a judge
    for the set's. As a judge it gives 3 when every "N days" in the request agrees with the
    policy's (0 when one does not), whatever the reply's wording; `longer_is_better`: 2,
    and 3 for a long reply."""

    def answer(received: Received) -> str:
        prompt = received.body["messages"][-1]["content"]
        writer = re.match(r"<!-- plant writer (\w+) ", prompt)
        if writer:
            found = _TEXT.search(prompt)
            assert found
            return json.dumps(write(writer.group(1), found.group(1)))
        if prompt.startswith("<!-- plant confirm "):
            pair = _PAIR.search(prompt)
            assert pair
            return json.dumps(check(*pair.groups()))
        score = 3 if len(set(re.findall(r"(\d+) days", prompt))) == 1 else 0
        if score and "may be refunded" in judged_reply(received):
            score = 1  # the right time limit, a wrong promise on shipping
        if score and longer_is_better:
            score = 3 if len(judged_reply(received).split()) > 40 else 2
        return json.dumps({"accuracy": score, "helpfulness": score, "rationale": "the policy"})

    return answer


def _setup(repository: Path, url: str) -> None:
    (repository / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in real_rows()))
    code, out = command(["init", "support_reply", "--model", MODEL, "--base-url", url])
    assert code == 0, out
    for name in ("planted_sets/support_reply/items.jsonl", "planted_sets/support_reply/set.toml"):
        (repository / name).unlink()


def _named(text: str) -> str:
    return text.replace("local:NAME", MODEL).replace("local:OTHER", OTHER)


def _argv(line: str, url: str) -> list[str]:
    words = shlex.split(_named(line))
    return [url if w == "http://127.0.0.1:8080/v1" else w for w in words][3:]


def test_model_written_candidates_record_replay_and_gate(
    repository: Path,
    pytester: pytest.Pytester,
    fake_judge: FakeJudge,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    record, replay, review, apply = [
        line for line in blocks("bash")[SECTION].splitlines() if line.strip()
    ]
    fake_judge.content = policy_judge()
    _setup(repository, fake_judge.url)
    candidates_file = repository / "planted_sets/support_reply/candidates.jsonl"

    code, out = command(_argv(record, fake_judge.url))
    assert code == 0, out
    writes = sum(map(_is_writer, fake_judge.calls))
    assert (writes, len(fake_judge.calls)) == (48, 96), "per good row and generator, a check"
    shown = [_named(line) for line in printed()[SECTION]]
    assert all(line in out for line in shown), (shown, out)
    assert f"{MODEL}: 48 live calls" in out and f"{OTHER}: 48 live calls" in out
    recorded = candidates_file.read_bytes()
    cassettes = sorted((repository / "cassettes/planting/support_reply").rglob("*.yaml"))
    assert len(cassettes) == 96
    assert not any(b"sk-fake" in path.read_bytes() for path in cassettes), "no key on disk"

    # Replayed offline: the same bytes, no call.
    candidates_file.unlink()
    code, out = command(_argv(replay, fake_judge.url))
    assert code == 0, out
    assert len(fake_judge.calls) == 96
    assert candidates_file.read_bytes() == recorded
    assert all(line in out for line in shown), (shown, out)
    candidates = [json.loads(line) for line in recorded.decode().splitlines()]
    flip = next(c for c in candidates if c["id"] == "label_flip:jacket-0")
    assert "within 44 days" in flip["inputs"]["reply"]
    assert flip["written"]["model"] == MODEL and flip["written"]["prompt_version"] == "1.0"
    assert re.fullmatch(r"[0-9a-f]{16}", flip["written"]["prompt_hash"])
    assert flip["written"]["cassette"].startswith("support_reply/label_flip/local-fake-judge/1.0/")

    # Reviewed (everything accepted) and applied: stored-text probes.
    monkeypatch.setattr("sys.stdin", io.StringIO("a\n" * len(candidates)))
    code, out = command(shlex.split(review)[3:])
    assert code == 0 and f"review: {len(candidates)} accepted" in out, out
    (disagreement,) = printed()[SECTION + 1]
    assert out.count(_named(disagreement)) == 12, "each shorter answer's check is shown"
    assert f"second model {OTHER} agrees: it differs in a way that matters (a number" in out
    code, out = command(shlex.split(apply)[3:])
    assert code == 0, out
    assert "added 24 planted items and 36 invariance probes" in out, out
    assert "label_flip: 12 defects" in out and "(decides: 0.95 needed)" in out
    probes = (repository / "planted_sets/support_reply/probes.toml").read_text("utf-8")
    for kind in ("written_paraphrase", "written_longer", "written_shorter"):
        assert f"[{kind}]" in probes
    longer = next(c for c in candidates if c["id"] == "longer:lamp-1")
    probe_items = [
        json.loads(line) for line in (repository / "planted_sets/support_reply/probes.jsonl").open()
    ]
    stored = next(p for p in probe_items if p["probe"] == "written_longer" and
                  p["inputs"]["reply"] == longer["inputs"]["reply"])  # fmt: skip
    assert stored["inputs"]["question"] == longer["inputs"]["question"]

    # Recorded and replayed: the content judge passes every item and probe.
    url = fake_judge.url
    judge_run = ["--record", "--judge-model", MODEL, "--judge-base-url", url]
    before = len(fake_judge.calls)
    assert pytester.runpytest_inprocess(*INNER_OPTIONS, *judge_run).ret == 0
    assert len(fake_judge.calls) - before == 24 + 36 + 12, "items, probes, one redraw each"
    assert pytester.runpytest_inprocess(*INNER_OPTIONS, "--snapshot-update").ret == 0
    replayed = pytester.runpytest_inprocess(*INNER_OPTIONS)
    assert replayed.ret == 0, replayed.stdout.str()[-3000:]
    replayed.stdout.fnmatch_lines(["support_reply 1.0: PASS*"])
    report = (repository / "reports/support_reply/1.0/report.md").read_text("utf-8")
    assert "12/12 = 1.00" in report
    for kind in ("written_paraphrase", "written_longer", "written_shorter"):
        assert f"| {kind} | 12 | 0/12 = 0.00 [0.00, 0.24] |" in report, report

    # A judge that scores longer answers higher fails the verbosity items, and only them.
    fake_judge.content = policy_judge(longer_is_better=True)
    wordy = ["--record", "--judge-model", WORDY, "--judge-base-url", url]
    pytester.runpytest_inprocess(*INNER_OPTIONS, *wordy)
    verbose = pytester.runpytest_inprocess(*INNER_OPTIONS, "--judge-model", WORDY)
    assert verbose.ret == 1
    failed = re.findall(
        r"^FAILED \S+\[support_reply-1\.0-SR-\d+-(\w+?)-", verbose.stdout.str(), re.M
    )
    assert failed == ["written_longer"] * 12, failed
    report = (repository / "reports/support_reply/1.0/report.md").read_text("utf-8")
    assert (
        "| written_longer | 12 | 12/12 = 1.00 [0.76, 1.00] | 0/12 = 0.00 [0.00, 0.24] "
        "(two-sided p = 0.000488) |"
    ) in report, report
    assert "| written_shorter | 12 | 0/12 = 0.00 [0.00, 0.24] |" in report


def test_the_cost_cap_stops_calls_and_a_rerun_records_the_rest(
    repository: Path, fake_judge: FakeJudge
) -> None:
    fake_judge.content = policy_judge()
    _setup(repository, fake_judge.url)
    (repository / "prices.toml").write_text(
        '[models."local:fake-judge"]\ninput_per_mtok = 1000.0\noutput_per_mtok = 1000.0\n'
    )
    record = blocks("bash")[SECTION].splitlines()[0]
    argv = [*_argv(record, fake_judge.url), "--judge-prices", "prices.toml"]
    # A writer's call may cost about $2.2 at worst (1,200 prompt bytes, 1,024 tokens out), a
    # check's about $1.5, and the fake reports 120 tokens ($0.12): $3 is room for a few.
    code, out = command([*argv, "--cost-cap", "3"])
    assert code == 1, out
    writes, calls = sum(map(_is_writer, fake_judge.calls)), len(fake_judge.calls)
    assert 1 <= calls <= 20, calls
    assert "INCOMPLETE: the cost cap of $3.0000 stopped" in out
    assert "stopped by the cost cap (--cost-cap), nothing recorded" in out
    written = (repository / "planted_sets/support_reply/candidates.jsonl").read_text()
    assert written.count('"written"') == writes, "what was made is kept"
    code, out = command(argv)
    assert code == 0, out
    assert len(fake_judge.calls) == 96, "the rest recorded, nothing called twice"
    assert f"{MODEL}: {48 - writes} live calls" in out


def test_a_dead_server_stops_naming_its_url_and_writes_nothing(
    repository: Path, fake_judge: FakeJudge
) -> None:
    fake_judge.content = policy_judge()
    _setup(repository, fake_judge.url)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{free.getsockname()[1]}/v1"
    record = blocks("bash")[SECTION].splitlines()[0]
    code, out = command(_argv(record, dead))
    assert code == 2, out
    assert f"the model {MODEL} at {dead} cannot be used" in out, out
    assert "nothing was written" in out
    assert not (repository / "planted_sets/support_reply/candidates.jsonl").exists()
    # Without --record, a missing cassette names itself and the fix.
    code, out = command(_argv(blocks("bash")[SECTION].splitlines()[1], dead))
    assert code == 2 and "--record" in out and "cassettes/planting/support_reply/" in out, out


def test_rubric_level_candidates_are_written_for_their_level_and_gate_on_it(
    repository: Path,
    pytester: pytest.Pytester,
    fake_judge: FakeJudge,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (record,) = [line for line in blocks("bash")[SECTION + 1].splitlines() if line.strip()]
    fake_judge.content = policy_judge()
    _setup(repository, fake_judge.url)
    candidates_file = repository / "planted_sets/support_reply/candidates.jsonl"
    code, out = command(_argv(record, fake_judge.url))
    assert code == 0, out
    (made,) = printed()[SECTION + 2]
    assert _named(made) in out, out
    asked = [r.body["messages"][-1]["content"] for r in fake_judge.calls]
    assert len(asked) == 12 and all("accuracy = 1, as the grader's instructions" in a
                                    and "You grade the support reply above." in a
                                    for a in asked), asked[0]  # fmt: skip
    recorded = candidates_file.read_bytes()
    replay = [w for w in _argv(record, fake_judge.url) if w != "--record"]
    candidates_file.unlink()
    assert command(replay)[0] == 0 and candidates_file.read_bytes() == recorded
    assert len(fake_judge.calls) == 12, "replayed offline"
    level = [json.loads(line) for line in recorded.decode().splitlines()][1]
    assert level["category"] == "accuracy_level_1"
    assert level["expect"] == [{"field": "accuracy", "op": "==", "value": 1}]

    candidates = recorded.decode().count("\n")
    monkeypatch.setattr("sys.stdin", io.StringIO("a\n" * candidates))
    assert command(["plant", "support_reply", "--review", "--reviewer", "Ada"])[0] == 0
    code, out = command(["plant", "support_reply", "--apply"])
    assert code == 0 and "accuracy_level_1: 12 defects" in out, out
    judge_run = ["--record", "--judge-model", MODEL, "--judge-base-url", fake_judge.url]
    assert pytester.runpytest_inprocess(*INNER_OPTIONS, *judge_run).ret == 0
    assert pytester.runpytest_inprocess(*INNER_OPTIONS, "--snapshot-update").ret == 0
    replayed = pytester.runpytest_inprocess(*INNER_OPTIONS)
    assert replayed.ret == 0, replayed.stdout.str()[-3000:]
    report = (repository / "reports/support_reply/1.0/report.md").read_text("utf-8")
    assert report.startswith("# support_reply, prompt 1.0: PASS")
    assert "| detection[accuracy_level_1] | 12/12 = 1.00 [0.76, 1.00] n=12 |" in report
