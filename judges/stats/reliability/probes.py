"""Bias-probe statistics: flip rates against the noise floor, and majority-vote repeats.

A probe item's verdict is compared with the main-run verdict on its unperturbed item
(same seed: common random numbers, so a flip is the edit's doing or sampling noise the
edit exposed). The noise floor is an independent redraw of the unperturbed item set
against the same main verdict, paired per item: McNemar's exact test says whether the
probe flips more than a redraw does.

What each probe counts as biased (the gated rate) is its kind's `bias` in the registry
(`judges.sets.probe_kinds`): a judge-pleasing flip, any change of a label, or a non-answer
not scored lowest. Numbers and structured results only: the words are
`judges.verdicts.probe_messages`'.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from judges.core.results import JudgementRow
from judges.sets.probe_kinds import ANY_CHANGE, NOT_LOWEST, PROBES, bias_of
from judges.sets.probes import NOISE_RUN, probe_of_run
from judges.stats.estimates.intervals import McNemar, Rate, mcnemar_exact, wilson

ALPHA = 0.05
STABLE = 0.95  # a majority vote is "stable" when it returns the modal verdict this often


def signature(verdict: dict[str, Any] | None, fields: Sequence[str]) -> tuple[Any, ...] | None:
    """What must not change: the judge's dimensions and flag, and each criterion's label."""
    if verdict is None:
        return None
    labels = tuple(
        sorted((j.get("criterion"), j.get("relevance")) for j in verdict.get("judgements", ()))
    )
    return tuple(verdict.get(f) for f in fields) + labels


def _score(row: JudgementRow, score: str) -> float | None:
    value = (row.verdict or {}).get(score)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Outcome:
    """One probe item against its unperturbed item (and an independent redraw of it)."""

    probe: str
    item_id: str
    flipped: bool
    pleasing: bool
    biased: bool
    noise_flipped: bool | None = None
    noise_pleasing: bool | None = None
    error: str | None = None  # a probe or clean judgement that failed: counted, not dropped


def _pleasing(probe_row: JudgementRow, clean: JudgementRow, score: str) -> bool:
    before, after = _score(clean, score), _score(probe_row, score)
    rises = before is not None and after is not None and after > before
    uncaught = not clean.control and bool(clean.met) and not probe_row.met
    return rises or uncaught


def outcome(
    probe: str,
    probe_row: JudgementRow,
    clean: JudgementRow,
    fields: Sequence[str],
    score: str,
    noise: JudgementRow | None = None,
    floor: float | None = None,
) -> Outcome:
    """Compare a probe's verdict with the clean one; an error row counts as biased.

    `floor`: the worst control's score in the main run. A dummy answer scored above it is
    judge-pleasing (a non-answer beat a correct answer); without it, above the clean item.
    """
    bad = [r for r in (probe_row, clean) if r.status != "ok"]
    if bad:
        error = f"{bad[0].run} {bad[0].status}: {(bad[0].error or '')[:120]}"
        return Outcome(probe, probe_row.item_id, True, True, True, error=error)
    flipped = signature(probe_row.verdict, fields) != signature(clean.verdict, fields)
    pleasing = _pleasing(probe_row, clean, score)
    bias = bias_of(probe)
    if bias is NOT_LOWEST:
        value = _score(probe_row, score)
        if floor is not None and value is not None:
            pleasing = value > floor
        biased = not probe_row.met
    elif bias is ANY_CHANGE:
        biased = flipped
    else:
        biased = pleasing
    noise_flipped = noise_pleasing = None
    if noise is not None and noise.status == "ok":
        noise_flipped = signature(noise.verdict, fields) != signature(clean.verdict, fields)
        noise_pleasing = _pleasing(noise, clean, score)
    return Outcome(probe, probe_row.item_id, flipped, pleasing, biased, noise_flipped,
                   noise_pleasing)  # fmt: skip


class Standing(Enum):
    """A probe's gated rate against its noise floor (McNemar's exact test, two-sided)."""

    ABSOLUTE = "absolute"  # no floor by design: a non-answer must score lowest
    NO_FLOOR = "no_floor"  # no redraw rows to compare
    BELOW_NOISE = "below_noise"  # a redraw moves the verdict significantly more
    WITHIN_NOISE = "within_noise"
    BEYOND_NOISE = "beyond_noise"


@dataclass(frozen=True)
class ProbeEffect:
    """One probe of one judge version: rates with Wilson intervals, against the noise floor."""

    probe: str
    flips: Rate
    pleasing: Rate
    biased: Rate
    noise: Rate | None  # the noise floor of the gated quantity (None: not comparable)
    test: McNemar | None  # probe (b) against the redraw (c), paired per item
    errors: int
    noise_flips: Rate | None = None  # any verdict change on the redraw
    flip_test: McNemar | None = None  # any change: probe (b) against the redraw (c)

    @property
    def beyond_noise(self) -> bool | None:
        if self.test is None:
            return None
        return self.test.p_value < ALPHA and self.test.b > self.test.c

    @property
    def standing(self) -> Standing:
        if bias_of(self.probe) is NOT_LOWEST:
            return Standing.ABSOLUTE
        if self.test is None:
            return Standing.NO_FLOOR
        if self.test.p_value < ALPHA and self.test.b < self.test.c:
            return Standing.BELOW_NOISE
        return Standing.BEYOND_NOISE if self.beyond_noise else Standing.WITHIN_NOISE

    @property
    def excess(self) -> float:
        """The biased rate above the noise floor's (the floor 0 without redraws)."""
        return self.biased.rate - (self.noise.rate if self.noise else 0.0)

    def as_dict(self) -> dict[str, Any]:
        return {
            "probe": self.probe,
            "flips": self.flips.as_dict(),
            "pleasing": self.pleasing.as_dict(),
            "biased": self.biased.as_dict(),
            "noise": self.noise.as_dict() if self.noise else None,
            "mcnemar": None if self.test is None else self.test.as_dict(),
            "noise_flips": self.noise_flips.as_dict() if self.noise_flips else None,
            "flips_mcnemar": None if self.flip_test is None else self.flip_test.as_dict(),
            "beyond_noise": self.beyond_noise,
            "errors": self.errors,
        }


def probe_effect(probe: str, outcomes: Sequence[Outcome]) -> ProbeEffect:
    n = len(outcomes)
    flips = wilson(sum(o.flipped for o in outcomes), n)
    pleasing = wilson(sum(o.pleasing for o in outcomes), n)
    biased = wilson(sum(o.biased for o in outcomes), n)
    noise = test = noise_flips = flip_test = None
    # The redraw's counterparts, on items that have both; without redraws, no noise floor.
    paired = [o for o in outcomes if o.noise_flipped is not None and o.error is None]
    if paired:
        redrawn = [bool(o.noise_flipped) for o in paired]
        noise_flips = wilson(sum(redrawn), len(redrawn))
        flip_test = mcnemar_exact([o.flipped for o in paired], redrawn)
    bias = bias_of(probe)
    if paired and bias is not NOT_LOWEST:
        redraw = [bool(o.noise_flipped if bias is ANY_CHANGE else o.noise_pleasing) for o in paired]
        noise = wilson(sum(redraw), len(redraw))
        test = mcnemar_exact([o.biased for o in paired], redraw)
    errors = sum(o.error is not None for o in outcomes)
    return ProbeEffect(probe, flips, pleasing, biased, noise, test, errors, noise_flips, flip_test)


# -- from the noise-floor runs: how many repeats a majority vote needs -----------------


def flip_probability(verdicts: Sequence[Hashable]) -> float:
    """The chance two distinct draws of one item differ (unbiased, from r >= 2 repeats)."""
    r = len(verdicts)
    if r < 2:
        return math.nan
    same = sum(k * (k - 1) for k in Counter(verdicts).values())
    return 1.0 - same / (r * (r - 1))


def off_mode(verdicts: Sequence[Hashable]) -> float:
    """The share of draws that differ from the item's most common verdict."""
    if not verdicts:
        return math.nan
    return 1.0 - max(Counter(verdicts).values()) / len(verdicts)


def majority_stability(q: float, n: int) -> float:
    """P(a majority of n independent draws returns the mode), each off it with chance q."""
    p = 1.0 - q
    return sum(math.comb(n, k) * p**k * q ** (n - k) for k in range(n // 2 + 1, n + 1))


def majority_repeats(q: float, target: float = STABLE, limit: int = 999) -> int | None:
    """The smallest odd number of repeats whose majority vote is `target`-stable.

    Counts "the modal verdict" against "anything else" (a conservative reduction of a
    plurality vote). None when q >= 0.5 or no n up to `limit` suffices.
    """
    if math.isnan(q) or q >= 0.5:
        return None
    for n in range(1, limit + 1, 2):
        if majority_stability(q, n) >= target:
            return n
    return None


# -- from result rows (reports and baselines) ----------------------------------------------


def effects_from_rows(
    rows: Sequence[JudgementRow], fields: Sequence[str], score: str
) -> list[ProbeEffect]:
    """Every probe's effect in one model's rows of a version: probe, main and redraw runs."""
    outcomes = outcomes_from_rows(rows, fields, score)
    return [probe_effect(p, outcomes[p]) for p in PROBES if p in outcomes]


def outcomes_from_rows(
    rows: Sequence[JudgementRow], fields: Sequence[str], score: str
) -> dict[str, list[Outcome]]:
    """Each probe item's outcome, by probe, from one model's rows of one prompt version."""
    main = {r.item_id: r for r in rows if r.run == "main" and r.repeat == 0}
    noise = {r.item_id: r for r in rows if r.run == NOISE_RUN}
    floor = control_floor(list(main.values()), score)
    outcomes: dict[str, list[Outcome]] = {}
    for row in sorted(rows, key=lambda r: (r.run, r.item_id)):
        probe = probe_of_run(row.run)
        if probe is None:
            continue
        clean = main.get(row.item_id)
        if clean is None:  # counted as biased, never dropped
            found = Outcome(probe, row.item_id, True, True, True, error="no main-run row")
        else:
            found = outcome(probe, row, clean, fields, score, noise.get(row.item_id), floor)
        outcomes.setdefault(probe, []).append(found)
    return outcomes


def control_floor(main: Sequence[JudgementRow], score: str) -> float | None:
    """The lowest score any control got in the main run (None: no scored control)."""
    values = [v for r in main if r.control and (v := _score(r, score)) is not None]
    return min(values) if values else None


@dataclass(frozen=True)
class NoiseRepeats:
    """From the noise-floor runs: how often a redraw flips, and the repeats a vote needs."""

    per_item: dict[str, float]  # item -> chance two draws differ
    off_mode: float  # mean share of draws off the item's modal verdict
    flip: float  # mean per-item flip probability
    repeats: int | None  # odd repeats for a 95%-stable majority at the mean off-mode share
    worst_repeats: int | None  # the same for the least stable item
    n_items: int
    draws: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "per_item_flip_probability": {k: round(v, 4) for k, v in self.per_item.items()},
            "mean_flip_probability": round(self.flip, 4),
            "mean_off_mode": round(self.off_mode, 4),
            "majority_repeats_95": self.repeats,
            "worst_item_majority_repeats_95": self.worst_repeats,
            "n_items": self.n_items,
            "draws_per_item": self.draws,
        }


def noise_repeats(rows: Sequence[JudgementRow], fields: Sequence[str]) -> NoiseRepeats | None:
    """Per-item flip probability and majority-vote repeats from the `noise` run's rows."""
    by_item: dict[str, list[Hashable]] = {}
    for row in rows:
        if row.run == "noise":
            # An error is a draw too: a judge that fails half the time is not stable.
            sig = signature(row.verdict, fields) if row.status == "ok" else ("error", row.status)
            by_item.setdefault(row.item_id, []).append(sig)
    usable = {item: draws for item, draws in sorted(by_item.items()) if len(draws) >= 2}
    if not usable:
        return None
    per_item = {item: flip_probability(draws) for item, draws in usable.items()}
    offs = [off_mode(draws) for draws in usable.values()]
    mean_off = sum(offs) / len(offs)
    return NoiseRepeats(
        per_item=per_item,
        off_mode=mean_off,
        flip=sum(per_item.values()) / len(per_item),
        repeats=majority_repeats(mean_off),
        worst_repeats=majority_repeats(max(offs)),
        n_items=len(usable),
        draws=min(len(d) for d in usable.values()),
    )
