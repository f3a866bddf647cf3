"""The retest-agreement regression gate: does the run agree with its own retest less than
the baseline agreed with its own?

A judge whose errors rise without leaning one way (scores drifting a point up or down, one
facet of four wrong) moves no mean and few detections, so the detection and score gates see
it only some of the time; what it cannot hide is that two draws of it agree less. Per item,
the fields main and retest answer alike (the verdict, every score dimension, the flag) are
counted for the baseline version and for this one, and the paired sign-flip test asks
whether this version's counts are lower (one-sided mid-p).

With two or more retest draws on both sides (set.toml's `retest_draws`), an item's count is
summed over every pair of its draws (main and the retest draws both versions have: three
pairs with two), so each version's agreement is measured on more than one pair.

Valid under any error structure: under no change, each item's two counts are two draws of
the same thing (the same draws of one judge on that item), so their difference is
symmetric whatever the item, however its fields err together. What the test cannot do is
check the baseline against a second baseline: its agreement is itself one draw, and every
later run is compared with it. A lucky baseline (its draws agreeing more than usual) would
then raise the alarms of many honest runs at once, so the gate never fails at a level above
alpha / STABILITY_SHARE with one retest draw a side, or alpha / SEVERAL_DRAWS_SHARE with
two or more, whatever Holm's step allows; the pairs of several draws pay for the lower cap.
Against a baseline, three or more of 20 honest re-records then fail it for at most 2 of 30
baselines under each error model of tests/test_retest_agreement.py; at the full alpha a
simulation of the same design (100 baselines per set size, 44 to 326 items) put that share
at 8-17%. tests/test_false_alarms.py measures one draw against two on the built-in sets.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from judges.core.results import JudgementRow
from judges.stats.estimates.intervals import bootstrap_mean_difference
from judges.stats.estimates.paired_tests import sign_flip_lower, smallest_midp
from judges.stats.estimates.pairing import flag_of
from judges.stats.estimates.power import Power, mean_drop
from judges.stats.regression.comparison import numeric
from judges.stats.regression.gates import ALPHA, Regression, first_by_item

__all__ = [
    "RETEST_AGREEMENT",
    "SEVERAL_DRAWS_SHARE",
    "STABILITY_SHARE",
    "Draws",
    "level_cap",
    "retest_agreement_regression",
]

RETEST_AGREEMENT = "regression.retest_agreement"
STABILITY_SHARE = 5  # one retest draw a side: the gate fails at alpha / 5 at most
SEVERAL_DRAWS_SHARE = 20  # two or more a side: at alpha / 20 at most


@dataclass(frozen=True)
class Draws:
    """A version's main run and its retest, every draw of it (rows of one model)."""

    main: Sequence[JudgementRow]
    retest: Sequence[JudgementRow]

    @property
    def retest_draws(self) -> int:
        """How many draws its retest holds (its repeats); 0 without one."""
        return 1 + max((row.repeat for row in self.retest), default=-1)


def level_cap(alpha: float, draws: int) -> float:
    """The highest level the gate fails at, with `draws` retest draws on each side."""
    return alpha / (STABILITY_SHARE if draws < 2 else SEVERAL_DRAWS_SHARE)


def _agreeing(a: JudgementRow, b: JudgementRow, dimensions: Sequence[str], flag: str | None) -> int:
    """How many of the item's fields two runs answered alike: the verdict (expectation met
    or not), each score dimension and the flag; a field one run lacks does not agree."""
    same = int(bool(a.met) == bool(b.met))
    for dim in dimensions:
        x, y = numeric(a.verdict, dim), numeric(b.verdict, dim)
        same += int(x is not None and x == y)
    if flag is not None:
        fa, fb = flag_of(a.verdict, flag), flag_of(b.verdict, flag)
        same += int(fa is not None and fa == fb)
    return same


def _counts(
    draws: Draws, used: int, dimensions: Sequence[str], flag: str | None
) -> tuple[dict[str, int], dict[str, str]]:
    """Per item, the fields its draws agree on, summed over every pair of its main run and
    its first `used` retest draws; and why each other item is left out."""
    main = first_by_item(draws.main)
    retests: dict[str, dict[int, JudgementRow]] = {}
    for row in draws.retest:
        if row.repeat < used:
            retests.setdefault(row.item_id, {})[row.repeat] = row
    counts: dict[str, int] = {}
    left_out: dict[str, str] = {}
    for item in sorted(set(main) | set(retests)):
        found = [main.get(item), *(retests.get(item, {}).get(k) for k in range(used))]
        judged = [row for row in found if row is not None]
        if len(judged) < len(found):
            left_out[item] = "missing from its main run or a retest draw"
        elif any(row.status != "ok" for row in judged):
            left_out[item] = "failed judgement"
        else:
            counts[item] = sum(
                _agreeing(a, b, dimensions, flag) for a, b in itertools.combinations(judged, 2)
            )
    return counts, left_out


def retest_agreement_regression(
    baseline: Draws,
    run: Draws,
    label: str,
    dimensions: Sequence[str],
    flag: str | None,
    alpha: float = ALPHA,
) -> Regression | None:
    """The gate, or None where either version has no retest run (nothing to compare).

    Items are paired where both versions judged them in both runs; the rest are counted as
    left out, by reason."""
    if not baseline.retest or not run.retest:
        return None
    # Both sides count the same draws, so an item's two counts are draws of one thing.
    used = min(baseline.retest_draws, run.retest_draws)
    pairs = used * (used + 1) // 2  # of the main run and `used` retest draws
    before, old_out = _counts(baseline, used, dimensions, flag)
    after, new_out = _counts(run, used, dimensions, flag)
    excluded: dict[str, int] = {}
    for item in sorted(set(before) | set(after) | set(old_out) | set(new_out)):
        if item in before and item in after:
            continue
        # Why the version that lacks the item's pair lacks it: this run first.
        if item not in after:
            why = new_out.get(item, "not in this run")
        else:
            why = "baseline: " + old_out[item] if item in old_out else "not in the baseline"
        excluded[why] = excluded.get(why, 0) + 1
    items = sorted(set(before) & set(after))
    fields = 1 + len(dimensions) + (flag is not None)
    if len(items) < 2:
        why = "fewer than 2 items judged in both runs of both versions: no data, no decision"
        return Regression(RETEST_AGREEMENT, label, None, None, why, excluded, decides=False)
    # The test runs on each item's sum over its pairs of draws (integers); shown per pair.
    old = np.array([before[i] for i in items], dtype=float)
    new = np.array([after[i] for i in items], dtype=float)
    diffs = new - old  # higher is better: more fields agree
    p_value = 1.0 if not diffs.any() else sign_flip_lower(diffs).midp
    cap = level_cap(alpha, used)
    change = bootstrap_mean_difference(new / pairs, old / pairs, paired=True,
                                       confidence=1 - 2 * alpha)  # fmt: skip
    shown = "p < 0.0001" if p_value < 0.0001 else f"p = {p_value:.4f}"
    why = (
        f"fields two draws answer alike per item and pair of draws ({pairs} pair(s) of its "
        f"main run and {used} retest draw(s)), of {fields} (the verdict, "
        f"{len(dimensions)} score dimension(s){', the flag' if flag else ''}): "
        f"{old.mean() / pairs:.2f} in the baseline, change {change.value:+.2f} "
        f"[{change.low:+.2f}, {change.high:+.2f}] over {change.n} items ({1 - 2 * alpha:.0%} "
        f"paired bootstrap); one-sided sign-flip mid-{shown} (fails below {cap:g} at most, "
        f"since the baseline's agreement is itself a draw; higher is better)"
    )
    if not old.any():
        why = (
            f"the baseline's main and retest agreed on no field of the {len(items)} items, so "
            "no run can agree less: this gate decides nothing"
        )
        return Regression(RETEST_AGREEMENT, label, change, None, why, excluded, decides=False)
    sd = float(np.std(diffs / pairs, ddof=1))
    power = Power(
        mean_drop(sd, len(items), cap),
        len(items),
        0.8,
        "fields agreeing per item" if used == 1 else "fields agreeing per item and pair",
        f"sd of paired differences {sd:.2f}, at alpha / {round(alpha / cap)}",
    )
    return Regression(
        RETEST_AGREEMENT, label, change, p_value >= cap, why, excluded,
        power=power, p_value=p_value, level_cap=cap,
        min_p=smallest_midp(int(np.count_nonzero(diffs))),
    )  # fmt: skip
