"""An unchanged good judge, re-recorded, reads PASS: the false-alarm simulation, run for real.

In a repository made by `python -m judges init`, a fake judge on 127.0.0.1 right on 90% of
its judgements (each call's answer drawn on its own, seeded: an LLM at temperature > 0) is
recorded through `pytest --record` as six prompt versions, byte-for-byte copies of one
prompt, each with its noise and retest runs (they follow the judge). `python -m judges
baseline --accept 1.0` accepts the first (and, as it does for every recorded version, each
version's own misses); the other five replay offline against it and must each read PASS, as
the simulation of tests/test_false_alarms.py predicts for this set shape. The scaffold's
set is large enough for its chance tests to decide (45 controls against 50 defects in each
of three categories), so each PASS is one on evidence, not "fitness undecided".

The draws are seeded per request and per how many identical requests came before (copies
send identical requests), recorded one at a time, so each run of this test sees the same
answers. Under these seeds 246 of the 2376 draws are wrong: every version misses a few items
(each accepted as that version's misses) and still beats chance on every deciding test, and
no regression gate against 1.0 reaches significance under Holm. The report's gates are
those of the built-in sets: each against both baseline draws, under Holm.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from pathlib import Path

import pytest

from judges.core.spec import load_catalog

from ._support import FakeJudge, Received
from ._walkthrough import INNER_OPTIONS, MODEL, command, judged_reply, right_verdict

JUDGE = "support_reply"
COPIES = ["1.0", "1.1", "1.2", "1.3", "1.4", "1.5"]
GOOD = 0.9
SEED = "good-judge-rerecords"
SCALE = range(4)  # accuracy and helpfulness, 0-3


class GoodJudge:
    """Right with probability GOOD per call, else every field another value, each alike."""

    def __init__(self, items: list[dict]) -> None:
        self.truth = {item["inputs"]["reply"]: right_verdict(item) for item in items}
        self.seen: Counter[str] = Counter()
        self.right: Counter[bool] = Counter()

    def __call__(self, received: Received) -> str:
        reply = judged_reply(received)
        body = hashlib.sha256(json.dumps(received.body, sort_keys=True).encode()).hexdigest()
        rng = random.Random(f"{SEED}|{body}|{self.seen[body]}")
        self.seen[body] += 1
        values = dict(self.truth[reply])
        right = rng.random() < GOOD
        self.right[right] += 1
        if not right:
            values = {f: rng.choice([v for v in SCALE if v != x]) for f, x in values.items()}
        return json.dumps({**values, "rationale": "drawn"})


@pytest.fixture
def initialised(repository: Path) -> Path:
    """The walkthrough's empty repository (fake judge reachable), after `judges init`."""
    code, out = command(["init", JUDGE, "--model", MODEL])
    assert code == 0, out
    load_catalog.cache_clear()  # in-process runs share the loaded judges
    return repository


def test_rerecords_of_a_good_judge_read_pass_against_its_accepted_first_copy(
    initialised: Path, pytester: pytest.Pytester, fake_judge: FakeJudge
) -> None:
    repository = initialised
    prompts = repository / "judge_prompts" / JUDGE
    for version in COPIES[1:]:  # copies, byte for byte: the same prompt re-recorded
        (prompts / f"{version}.md").write_bytes((prompts / "1.0.md").read_bytes())
    # Nothing to enrol: the noise floor and the retest follow the judge to each copy.
    items_file = repository / "planted_sets" / JUDGE / "items.jsonl"
    items = [json.loads(line) for line in items_file.read_text().splitlines()]
    judge = GoodJudge(items)
    fake_judge.content = judge

    # One call at a time: identical requests of the copies get their draws in one order.
    live = ["--record", "--judge-model", MODEL, "--judge-base-url", fake_judge.url]
    pytester.runpytest_inprocess(*INNER_OPTIONS, *live, "--judge-concurrency", "1")
    per_version = 2 * len(items) + 2 * 3  # main, retest, noise (2 items x 3)
    assert len(fake_judge.calls) == per_version * len(COPIES)
    print(f"wrong draws: {judge.right[False]} of {judge.right.total()}")
    assert judge.right[False] > 0  # the judge erred: the replays below are not of a perfect one

    code, accepted = command(
        [
            "baseline",
            JUDGE,
            "--accept",
            "1.0",
            "--accept-control-miss",
            "a judge with errors drawn per item: its misses are known",
        ]
    )
    assert code == 0, accepted
    assert pytester.runpytest_inprocess(*INNER_OPTIONS, "--snapshot-update").ret == 0
    calls = len(fake_judge.calls)
    replay = pytester.runpytest_inprocess(*INNER_OPTIONS, "-rA")
    assert len(fake_judge.calls) == calls  # offline
    assert replay.ret == 0, replay.stdout.str()[-3000:]

    first = {
        version: (repository / "reports" / JUDGE / version / "report.md")
        .read_text(encoding="utf-8")
        .splitlines()[0]
        for version in COPIES
    }
    assert first == {v: f"# {JUDGE}, prompt {v}: PASS" for v in COPIES}, first
    # What its paired gates could have seen is on the first screen: a PASS whose gate cannot
    # see gates.toml's 15 points says so in its Result line, and the comparison row is the
    # accepted baseline's (the previous copy only beside it).
    any_blind = False
    for version in COPIES[1:]:
        folder = repository / "reports" / JUDGE / version
        found = json.loads((folder / "report.json").read_text(encoding="utf-8"))
        (model,) = found["models"]
        seen = {gate["gate"]: gate for gate in model["sensitivity"]}
        assert set(seen) == {"detection", "control_false_positive"}, seen
        result = folder.joinpath("report.md").read_text(encoding="utf-8").splitlines()[2]
        blind = [gate for gate in seen.values() if gate["blind"]]
        assert ("but blind to" in result) == bool(blind), (result, seen)
        label = model["verdict_label"]
        assert label.startswith("PASS, blind to") if blind else label == "PASS", label
        any_blind = any_blind or bool(blind)
        figures = [f["what"] for f in found["first_screen"]["figures"]]
        paired = [what for what in figures if what.startswith("detection, paired with")]
        assert paired[0] == "detection, paired with the accepted baseline prompt 1.0", figures
        if version != "1.1":
            previous = COPIES[COPIES.index(version) - 1]
            assert paired[1:] == [f"detection, paired with prompt {previous}"], figures
    overview = (repository / "reports" / "index.html").read_text(encoding="utf-8")
    assert ('class="w blind"' in overview) == any_blind  # marked on the overview page
    # `baseline --accept` said what the new baseline's two paired gates will see.
    said = [line for line in accepted.splitlines() if line.startswith(("sees:", "warning:"))]
    assert all(f"{JUDGE} 1.0 on {MODEL}: " in line for line in said), said
    scores = [line for line in said if "score points" in line]
    assert len(said) - len(scores) == 2, said  # and what each score gate will see
    assert scores and all(": sees a mean drop of " in line for line in scores), said
    # Each copy was gated against the accepted first one, both of its draws.
    report = (repository / "reports" / JUDGE / "1.3" / "report.md").read_text(encoding="utf-8")
    assert "vs prompt 1.0 main run" in report and "worse than both baseline draws" in report
    assert "fitness undecided" not in report  # the set's chance tests decided
