"""Regression gates: is a run significantly worse than the accepted baseline run?

A recording of the same prompt differs from the last one by chance (the judge samples), so a
threshold set at one recording's point value passes or fails a re-baseline by luck. These
gates fail only on evidence:

- detection and control false positives: McNemar's test on the items judged (status ok)
  under both runs, one-sided mid-p: more items went the bad way than chance allows at alpha
  (0.05);
- mean scores: the paired sign-flip (permutation) test of the mean change, one-sided mid-p
  (on 0/1 scores it is the same McNemar test); the paired bootstrap interval is shown with it;
- agreement with experts (kappa): the paired bootstrap interval of the change excludes zero.

Each rule fails 3-7% of unchanged runs at n = 20, 46 and 200 (tests/test_gate_power.py
simulates it). Each gate states the smallest drop it detects with 80% power at its n, from
the observed discordance or spread (judges.stats.estimates.power); the noise floor informs that
statement, it is no second threshold (a second threshold halved the power for no gain).

A gate without usable pairs is not evaluated (`passed is None`), never a pass.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.stats

from judges.core.results import JudgementRow
from judges.sets.sme import SmeLabel
from judges.stats.estimates.intervals import Estimate, bootstrap_mean_difference
from judges.stats.estimates.paired_tests import binomial_midp, sign_flip_lower, smallest_midp
from judges.stats.estimates.power import POWER, Power, mcnemar_drop, mean_drop
from judges.stats.regression.comparison import bounded_score, higher_is_better, numeric
from judges.stats.reliability.agreement import quadratic_kappa_change
from judges.stats.reliability.calibration import judge_and_human

__all__ = [
    "ALPHA",
    "SME_GATE",
    "PairedCounts",
    "Regression",
    "baseline_regressions",
    "control_regression",
    "detection_regression",
    "first_by_item",
    "higher_is_better",
    "mcnemar_one_sided",
    "paired_power",
    "paired_rows",
    "score_power",
    "score_regression",
    "score_regressions",
    "sme_regression",
]

ALPHA = 0.05
SME_GATE = "regression.sme"  # the name every SME agreement gate starts with


@dataclass(frozen=True)
class PairedCounts:
    """Paired booleans (True = good): how many went good -> bad and bad -> good."""

    worse: int
    better: int
    n: int  # usable pairs
    p_value: float  # one-sided mid-p: P(more than `worse` went bad) + P(exactly `worse`) / 2

    def as_dict(self) -> dict[str, Any]:
        return {
            "worse": self.worse,
            "better": self.better,
            "n": self.n,
            "p_value": round(self.p_value, 6),
        }


def mcnemar_one_sided(before: Sequence[bool], after: Sequence[bool]) -> PairedCounts:
    """McNemar's test (one-sided mid-p) that `after` is worse than `before` (True = good)."""
    if len(before) != len(after):
        raise ValueError(f"paired inputs differ in length: {len(before)} != {len(after)}")
    worse = sum(1 for x, y in zip(before, after, strict=True) if x and not y)
    better = sum(1 for x, y in zip(before, after, strict=True) if y and not x)
    return PairedCounts(worse, better, len(before), binomial_midp(worse, worse + better))


@dataclass(frozen=True)
class Regression:
    """One regression gate: the run against the accepted baseline run."""

    name: str
    baseline: str  # which run it was compared with, e.g. "prompt 0.3.1 main run"
    result: PairedCounts | Estimate | None
    passed: bool | None
    why: str  # what decided it, in words (or why it was not evaluated)
    excluded: dict[str, int]
    power: Power | None = None  # the smallest drop it detects with 80% power at its n
    p_value: float | None = None  # score gates: the sign-flip mid-p
    # False: no outcome could fail it (a baseline right on no paired item cannot be done
    # worse than), so it is shown, neither passes nor counts as not evaluated.
    decides: bool = True
    # The highest level it may fail at, whatever Holm's step allows (None: Holm's alone).
    level_cap: float | None = None
    # The smallest p-value its test could give with the items that changed (a discrete test
    # on few changed items cannot reach a small p); None: not bounded (a continuous test).
    min_p: float | None = None

    def describe(self) -> str:
        verdict = {True: "pass", False: "REGRESSION", None: "not evaluated"}[self.passed]
        if not self.decides:
            verdict = "decides nothing"
        left_out = ", ".join(f"{n} {why}" for why, n in sorted(self.excluded.items()))
        extra = f"; left out: {left_out}" if left_out else ""
        power = f"; {self.power.describe()}" if self.power is not None else ""
        return f"{self.name} vs {self.baseline}: {self.why}{power} ({verdict}{extra})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "baseline": self.baseline,
            "result": None if self.result is None else self.result.as_dict(),
            "passed": self.passed,
            "why": self.why,
            "excluded": dict(sorted(self.excluded.items())),
            "p_value": None if self.p_value is None else round(self.p_value, 6),
            "power": None if self.power is None else self.power.as_dict(),
            "decides": self.decides,
        }


def first_by_item(rows: Sequence[JudgementRow]) -> dict[str, JudgementRow]:
    """Each item's first row (repeat 0) of a run, by item id."""
    return {row.item_id: row for row in sorted(rows, key=lambda r: r.key) if row.repeat == 0}


def paired_rows(
    baseline: Sequence[JudgementRow], rows: Sequence[JudgementRow], *, control: bool
) -> tuple[list[tuple[JudgementRow, JudgementRow]], dict[str, int]]:
    """Items judged (status ok) under both runs, and how many were left out and why."""
    old, new = first_by_item(baseline), first_by_item(rows)
    pairs: list[tuple[JudgementRow, JudgementRow]] = []
    excluded: dict[str, int] = {}
    for item in sorted(set(old) | set(new)):
        a, b = old.get(item), new.get(item)
        either = a if a is not None else new[item]  # the item is in one of the two runs
        if either.control != control:
            continue
        if a is None or b is None:
            why = "not in the baseline" if a is None else "not in this run"
        elif a.status != "ok" or b.status != "ok":
            why = "failed judgement"
        else:
            pairs.append((a, b))
            continue
        excluded[why] = excluded.get(why, 0) + 1
    return pairs, excluded


def _paired_gate(
    name: str,
    label: str,
    pairs: list[tuple[JudgementRow, JudgementRow]],
    excluded: dict[str, int],
    good: Callable[[JudgementRow], bool],
    words: tuple[str, str],
    alpha: float,
) -> Regression:
    if not pairs:
        return Regression(name, label, None, None, "no item judged under both runs", excluded)
    test = mcnemar_one_sided([good(a) for a, _ in pairs], [good(b) for _, b in pairs])
    if not any(good(a) for a, _ in pairs):
        why = (
            f"the baseline was right on none of the {test.n} paired items, so no run can do "
            "worse: this gate decides nothing"
        )
        return Regression(name, label, test, None, why, excluded, decides=False)
    shown = "p < 0.0001" if test.p_value < 0.0001 else f"p = {test.p_value:.4f}"
    why = (
        f"{test.worse} {words[0]} vs {test.better} {words[1]} of {test.n} paired items, "
        f"one-sided McNemar mid-{shown} (fails below {alpha:g})"
    )
    return Regression(
        name, label, test, test.p_value >= alpha, why, excluded,
        power=paired_power(test, alpha), p_value=test.p_value,
        min_p=smallest_midp(test.worse + test.better),
    )  # fmt: skip


def paired_power(test: PairedCounts, alpha: float = ALPHA, power: float = POWER) -> Power:
    """The drop a McNemar gate detects with `power`, from the flips both ways it saw.

    A regressed run's flips include the drop, so the figure errs on the safe side.
    """
    discordance = (test.worse + test.better) / test.n if test.n else 0.0
    basis = f"observed discordance {test.worse + test.better}/{test.n}"
    return Power(mcnemar_drop(test.n, discordance, alpha, power), test.n, power, "rate", basis)


def detection_regression(
    baseline: Sequence[JudgementRow],
    rows: Sequence[JudgementRow],
    label: str,
    alpha: float = ALPHA,
) -> Regression:
    """Planted defects caught by the baseline that this run misses, against the reverse."""
    pairs, excluded = paired_rows(baseline, rows, control=False)
    words = ("caught->missed", "missed->caught")
    return _paired_gate(
        "regression.detection", label, pairs, excluded, lambda r: bool(r.met), words, alpha
    )


def control_regression(
    baseline: Sequence[JudgementRow],
    rows: Sequence[JudgementRow],
    label: str,
    alpha: float = ALPHA,
) -> Regression:
    """Controls the baseline held that this run flags (new false positives), and the reverse."""
    pairs, excluded = paired_rows(baseline, rows, control=True)
    words = ("held->false positive", "false positive->held")
    return _paired_gate(
        "regression.control_false_positive",
        label,
        pairs,
        excluded,
        lambda r: bool(r.met),
        words,
        alpha,
    )


def baseline_regressions(
    baseline: Sequence[JudgementRow],
    rows: Sequence[JudgementRow],
    label: str,
    alpha: float = ALPHA,
    prefix: str = "",
) -> list[Regression]:
    """Detection, and control false positives when the set has controls."""
    gates = [detection_regression(baseline, rows, label, alpha)]
    if any(row.control for row in [*baseline, *rows]):
        gates.append(control_regression(baseline, rows, label, alpha))
    return [replace(gate, name=prefix + gate.name) for gate in gates]


def score_regression(
    name: str,
    label: str,
    baseline: Sequence[float],
    values: Sequence[float],
    *,
    higher_is_better: bool,
    noise_sd: float | None = None,
    alpha: float = ALPHA,
    seed: int = 0,
) -> Regression:
    """Paired values (one per item, baseline and this run): is the change significantly bad?

    The paired sign-flip test decides (one-sided mid-p below alpha fails); the interval shown
    is the paired bootstrap's at 1 - 2 * alpha, each end a one-sided bound at alpha.
    `noise_sd` (the noise floor's pooled sd of one judgement, when known) enters the power
    statement: two unchanged runs differ per item by about sqrt(2) times it.
    """
    if len(baseline) != len(values):
        raise ValueError(f"paired inputs differ in length: {len(baseline)} != {len(values)}")
    if len(values) < 2:
        return Regression(name, label, None, None, f"{len(values)} paired value(s)", {})
    change = bootstrap_mean_difference(
        values, baseline, paired=True, confidence=1 - 2 * alpha, seed=seed
    )
    diffs = np.asarray(values, dtype=float) - np.asarray(baseline, dtype=float)
    oriented = diffs if higher_is_better else -diffs  # the bad direction is down
    p_value = 1.0 if not oriented.any() else sign_flip_lower(oriented, seed=seed).midp
    shown = "p < 0.0001" if p_value < 0.0001 else f"p = {p_value:.4f}"
    why = (
        f"change {change.value:+.2f} [{change.low:+.2f}, {change.high:+.2f}] over "
        f"{change.n} items ({1 - 2 * alpha:.0%} paired bootstrap); one-sided sign-flip "
        f"mid-{shown} (fails below {alpha:g}; {'higher' if higher_is_better else 'lower'} "
        "is better)"
    )
    power = score_power(diffs, noise_sd, alpha)
    return Regression(
        name, label, change, p_value >= alpha, why, {},
        power=power, p_value=p_value, min_p=smallest_midp(int(np.count_nonzero(oriented))),
    )  # fmt: skip


def score_power(diffs: np.ndarray, noise_sd: float | None, alpha: float = ALPHA) -> Power:
    """The mean drop a score gate detects with 80% power: from the spread of the paired
    differences, or the noise floor's, whichever is larger (a quiet pair of runs does not
    promise a quiet next one)."""
    observed = float(np.std(diffs, ddof=1)) if diffs.size > 1 else math.nan
    basis = f"sd of paired differences {observed:.2f}"
    sd = observed
    if noise_sd is not None and not math.isnan(noise_sd) and math.sqrt(2) * noise_sd > sd:
        sd = math.sqrt(2) * noise_sd
        basis = f"noise floor sd {noise_sd:.2f} per judgement, above the observed {observed:.2f}"
    drop = mean_drop(sd, int(diffs.size), alpha) if not math.isnan(sd) else math.nan
    return Power(drop, int(diffs.size), 0.8, "score points", basis, sd)


def score_regressions(
    baseline: Sequence[JudgementRow],
    rows: Sequence[JudgementRow],
    label: str,
    dimensions: Sequence[str],
    noise_sd: Mapping[str, float],
    alpha: float = ALPHA,
) -> list[Regression]:
    """Mean score per dimension, on controls (higher is better: a harmless answer keeps its
    marks) and on planted defects (lower is better: the judge marks the defect down).

    A defect counts only on the dimensions its expectations name: a planted fabrication
    targets factual accuracy, and a judge that rightly keeps the other marks high must not
    read as a regression on them.

    `noise_sd` is the noise floor's pooled within-item sd per dimension; it informs each
    gate's power statement.
    """
    gates: list[Regression] = []
    for control, side in ((True, "controls"), (False, "defects")):
        pairs, _ = paired_rows(baseline, rows, control=control)
        for dim in dimensions:
            both = [
                (bounded_score(x, b, dim), bounded_score(y, b, dim))
                for a, b in pairs
                if (control or dim in {e.field for e in b.expect})
                and (x := numeric(a.verdict, dim)) is not None
                and (y := numeric(b.verdict, dim)) is not None
            ]
            if not both:
                continue  # e.g. a flag, or a side the set does not have
            gates.append(
                score_regression(
                    f"regression.score[{dim}, {side}]",
                    label,
                    [x for x, _ in both],
                    [y for _, y in both],
                    higher_is_better=higher_is_better(control),
                    noise_sd=noise_sd.get(dim),
                    alpha=alpha,
                )
            )
    return gates


def sme_regression(
    baseline: Sequence[JudgementRow],
    rows: Sequence[JudgementRow],
    labels: Sequence[SmeLabel],
    dimension: str,
    label: str,
    alpha: float = ALPHA,
) -> Regression:
    """Agreement with the experts' labels: has the quadratic kappa dropped significantly?

    Paired over the labelled items both runs answered: each resample scores both runs on the
    same items. Agreement statistics have no noise floor here, so the interval alone decides.
    """
    name = f"{SME_GATE}[kappa {dimension}]"
    before = judge_and_human(baseline, labels, dimension)
    after = judge_and_human(rows, labels, dimension)
    both = sorted(set(before) & set(after))
    excluded = {
        why: n
        for why, n in (
            ("not answered in the baseline", len(set(after) - set(before))),
            ("not answered in this run", len(set(before) - set(after))),
            ("answered in neither run", len(labels) - len(set(before) | set(after))),
        )
        if n
    }
    if len(both) < 2:
        return Regression(name, label, None, None, f"{len(both)} labelled pair(s)", excluded)
    values = [v for item in both for v in (*before[item], after[item][0])]
    if not all(float(v).is_integer() for v in values):
        return Regression(name, label, None, None, "kappa needs integer scores", excluded)
    change = quadratic_kappa_change(
        [before[item][1] for item in both],
        [before[item][0] for item in both],
        [after[item][0] for item in both],
        confidence=1 - 2 * alpha,
    )
    why = (
        f"kappa change {change.value:+.2f} [{change.low:+.2f}, {change.high:+.2f}] over "
        f"{change.n} labelled items ({1 - 2 * alpha:.0%} paired bootstrap; higher is better)"
    )
    if math.isnan(change.low) or math.isnan(change.high):
        return Regression(name, label, change, None, why + ": undefined", excluded)
    # The interval's half-width is z_(1 - alpha) standard errors of the change.
    se = (change.high - change.low) / (2 * float(scipy.stats.norm.ppf(1 - alpha)))
    power = Power(
        mean_drop(se * math.sqrt(change.n), change.n, alpha),
        change.n,
        0.8,
        "kappa",
        f"bootstrap standard error of the change {se:.3f}",
    )
    # One-sided p of the drop from the same standard error: below alpha exactly when the
    # interval lies wholly below zero, so Holm's correction can rank it with the others.
    p_value = float(scipy.stats.norm.cdf(change.value / se)) if se > 0 else float(change.value >= 0)
    return Regression(
        name, label, change, not change.high < 0, why, excluded, power=power, p_value=p_value
    )
