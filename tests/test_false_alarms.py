"""An unchanged good judge reads PASS: the whole verdict's false-alarm rate, simulated.

A judge right on 90% of its judgements, independent errors per draw (tests/_good_judge.py),
is recorded once and accepted as the baseline (the floors `judges baseline` suggests), then
re-recorded: each re-record's verdict goes through fitness, floors and the regression gates
against the baseline, as the report decides it. Per built-in set shape (the pairwise one
included) and for the `judges init` scaffold: 200 re-records against 20 baselines, and 200
against 40 lucky baselines (detection at or above the 90th percentile of the baseline's own
distribution); by default fewer (see FULL).
Whole-verdict false alarms (anything but PASS) must stay at or below 10% in both. Seeded: the
same figures every run; docs/gates-and-verdicts.md quotes them.

The retest-agreement gate alone is measured too, with one retest draw a side and with two
(as the built-in sets draw), on many baselines of honest re-records each.

A set with a main run only has one draw as its regression reference: against a lucky one
no test can tell an honest re-record from a worse one, and the lucky rate is far above 10%
("pairwise, a main run only": a strict xfail says so). The committed pairwise set has a
retest run (`retest = true` in set.toml), and meets it.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from judges.cli.init import scaffold
from judges.stats.regression.stability import Draws, level_cap, retest_agreement_regression

from ._good_judge import Shape, accept, load_shape, record, scaffold_shape, verdict

pytestmark = pytest.mark.proof  # minutes of simulation: tests/conftest.py

# The documented run (JUDGES_FULL_SIMULATION=1): 200 re-records against 20 baselines and
# 200 against 40 lucky ones per shape, about six minutes on two cores; it holds each rate
# itself at 10%. By default the suite runs a seeded part (50 re-records, and 50 against the
# first 25 lucky baselines; each verdict costs a full report's statistics), too few to hold a
# point rate: a true 6% reads 6/50 or more 8% of the time. It holds the lower end of the
# one-sided 95% interval at 10% instead (the data must not show the rate above 10%: up to
# 9/50 passes), which catches a rule that fails 25% of re-records 84% of the time. Lucky
# baselines are many with few re-records each: one whose retest is lucky too fails about a
# third of its re-records, so ten baselines of ten re-records swing the rate by several
# points (pairwise with a retest read 13/100 that way, 10/240 over 120 lucky baselines).
FULL = os.environ.get("JUDGES_FULL_SIMULATION") == "1"
# Lucky re-records were 100 (25 baselines of 4) until geval's read 11/100, its interval [6%,
# 19%]: a point rate held at 10% on a sample too small to place it. At 200 it reads 16/200.
BASELINES, RERECORDS = (20, 10) if FULL else (10, 5)
LUCKY_BASELINES, LUCKY_RERECORDS = (40, 5) if FULL else (25, 2)
CANDIDATES = 400  # baseline draws the lucky ones are picked from (their top decile)
MAX_FALSE_ALARMS = 0.10
MAIN_ONLY = "pairwise, a main run only"


def _detection(rows: list) -> int:
    return sum(bool(row.met) for row in rows if row.run == "main" and not row.control)


def _false_alarms(shape: Shape, baselines: list[list], rng: random.Random, n: int) -> Counter:
    words: Counter = Counter()
    for base in baselines:
        gates = accept(shape, base)
        for _ in range(n):
            found = verdict(shape, base, record(shape, "rerecord", rng), gates)
            words[found.word] += 1
            words.update(f"  {why.split(' (')[0]}" for why in found.why)
    return words


def _counts(words: Counter) -> tuple[int, int]:
    total = sum(v for k, v in words.items() if not k.startswith("  "))
    return total - words["PASS"], total


def _within_target(words: Counter) -> bool:
    """The rate at 10% at most (full run), or not shown above it (part run; see FULL)."""
    alarms, total = _counts(words)
    if FULL:
        return alarms / total <= MAX_FALSE_ALARMS
    low = scipy.stats.binomtest(alarms, total).proportion_ci(0.90).low  # one-sided 95%
    return low <= MAX_FALSE_ALARMS


def _summary(words: Counter) -> str:
    verdicts = {k: v for k, v in words.items() if not k.startswith("  ")}
    total = sum(verdicts.values())
    alarms = total - verdicts.get("PASS", 0)
    ci = scipy.stats.binomtest(alarms, total).proportion_ci(0.95)
    reasons = sorted(((v, k.strip()) for k, v in words.items() if k.startswith("  ")), reverse=True)
    why = "; ".join(f"{v}x {k}" for v, k in reasons[:6])
    shown = f"{alarms}/{total} not PASS [{ci.low:.0%}, {ci.high:.0%}] (95% Clopper-Pearson)"
    return f"{shown} {dict(verdicts)} ({why})"


def _shape(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Shape:
    if name == MAIN_ONLY:  # the committed pairwise set, as if set.toml named no retest
        shape = load_shape("pairwise")
        shape.retest = False
        return shape
    if name != "init scaffold":
        return load_shape(name)
    scaffold(tmp_path, "support", "local:any-model")
    monkeypatch.syspath_prepend(str(tmp_path))  # its verdict module, as pytest.ini adds it
    return scaffold_shape(tmp_path)


SHAPES = ["product_identity", "geval", "relevance", "pairwise", "init scaffold"]
ONE_DRAW = pytest.mark.xfail(
    strict=True,
    reason="one-draw reference: with no retest run, against a lucky main draw an honest "
    "re-record cannot be told from a worse one",
)
LUCKY_SHAPES = [*SHAPES, pytest.param(MAIN_ONLY, marks=ONE_DRAW)]


@pytest.mark.parametrize("name", SHAPES)
def test_an_unchanged_good_judge_reads_pass_at_least_90_percent_of_the_time(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shape = _shape(name, tmp_path, monkeypatch)
    rng = random.Random(f"false-alarms-{name}")
    baselines = [record(shape, "base", rng) for _ in range(BASELINES)]
    words = _false_alarms(shape, baselines, rng, RERECORDS)
    print(f"{name}: {_summary(words)}")  # the figures docs/gates-and-verdicts.md quotes (-rP)
    assert _within_target(words), words


@pytest.mark.parametrize("name", LUCKY_SHAPES)
def test_a_lucky_baseline_does_not_fail_honest_rerecords(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shape = _shape(name, tmp_path, monkeypatch)
    rng = random.Random(f"lucky-{name}")
    candidates = [record(shape, "base", rng) for _ in range(CANDIDATES)]
    top = float(np.percentile([_detection(rows) for rows in candidates], 90))
    lucky = [rows for rows in candidates if _detection(rows) >= top][:LUCKY_BASELINES]
    assert len(lucky) == LUCKY_BASELINES
    words = _false_alarms(shape, lucky, rng, LUCKY_RERECORDS)
    print(f"{name}, lucky baselines (detection >= {top:g}): {_summary(words)}")
    assert _within_target(words), words


# -- the retest-agreement gate alone: one retest draw a side against two -------------------

AGREEMENT_BASELINES, AGREEMENT_RERECORDS = (100, 20) if FULL else (10, 10)


def _agreement_fails(shape: Shape, draws: int, rng: random.Random) -> tuple[int, int]:
    """Re-records failing the gate, and baselines with three or more of them failing."""
    shape.retest_draws = draws
    failed = together = 0
    for _ in range(AGREEMENT_BASELINES):
        base = _draws(record(shape, "base", rng))
        fails = 0
        for _ in range(AGREEMENT_RERECORDS):
            gate = retest_agreement_regression(
                base, _draws(record(shape, "rerecord", rng)), "base", shape.dimensions, shape.flag
            )
            fails += gate is not None and gate.passed is False
        failed += fails
        together += fails >= 3
    return failed, together


def _draws(rows: list) -> Draws:
    return Draws([r for r in rows if r.run == "main"], [r for r in rows if r.run == "retest"])


@pytest.mark.parametrize("name", ["product_identity", "geval", "relevance"])
def test_the_agreement_gate_with_two_retest_draws_keeps_within_its_cap(name: str) -> None:
    """An unchanged good judge against many baselines, the gate alone, with one retest draw
    a side (at alpha / 5) and with two (at alpha / 20, as the built-in sets draw): two must
    not be shown above their cap. The full run (100 baselines of 20 re-records per set)
    reads, over the three sets, 59 of 6,000 re-records failed with one draw and 15 with
    two, and 6 and 1 of the 300 baselines failing three or more of their 20: the figures
    docs/gates-and-verdicts.md quotes (one draw on product_identity alone, 29 of 2,000, is
    above its cap: mid-p and the baselines' luck)."""
    shape = load_shape(name)
    rng = random.Random(f"agreement-draws-{name}")
    total = AGREEMENT_BASELINES * AGREEMENT_RERECORDS
    found = {draws: _agreement_fails(shape, draws, rng) for draws in (1, 2)}
    print(f"{name}: of {total} re-records, failed / baselines with 3+ failing: {found}")
    failed, _ = found[2]
    low = scipy.stats.binomtest(failed, total).proportion_ci(0.90).low  # one-sided 95%
    assert low <= level_cap(0.05, 2), (failed, total)
