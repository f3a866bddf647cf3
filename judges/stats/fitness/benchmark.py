"""A labelled pairwise benchmark's figures under its named aggregation rules, exactly.

Each judge's pairs (`Pair`: the gold label and the verdict of each order) are scored under
a rule of the registry (`judges.sets.benchmark_rules`, defined in
docs/pairwise-benchmarks.md), which computes each pair's credit. Every figure is a
`Fraction`: the overall figure weighs the subsets as the benchmark says (every pair alike,
every subset alike, or stated weights), and a published figure is compared with the exact
value rounded as it was published (`published_matches`).

Pure: numbers in, numbers out; no file is read here (`judges.sets.benchmark` reads).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction
from typing import Literal

from judges.sets.benchmark import Benchmark, Published
from judges.sets.benchmark_rules import Credits, rule_credit

Weighting = Literal["items", "subsets", "weights"]


@dataclass(frozen=True)
class Pair:
    """One item as one judge judged it: the verdict (and scores) of each order."""

    item_id: str
    subset: str
    gold: str  # "A", "B" or "tie"
    verdicts: tuple[str, ...]  # per order: "A", "B", "tie" or "none"
    scores: tuple[tuple[float, float] | None, ...] = ()  # per order: (score of A, of B)
    lengths: tuple[int, int] = (0, 0)  # characters of A and of B


def exact(value: float) -> Fraction:
    """A number as it is written (0.5 -> 1/2, 0.1 -> 1/10), not its binary neighbour."""
    return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)


def pair_credit(pair: Pair, rule: str, credits: Credits) -> Fraction:
    """The pair's credit under `rule` (`judges.sets.benchmark_rules`), in [0, 1]."""
    return rule_credit(rule, pair.item_id, pair.gold, pair.verdicts, credits)


@dataclass(frozen=True)
class Score:
    """One judge's figure on one subset (None: overall) under one rule, exactly."""

    judge: str
    subset: str | None
    rule: str
    value: Fraction  # in [0, 1]
    credit: Fraction  # the pairs' credits summed (the subsets' weighted, overall)
    pairs: int
    binary: bool  # every pair's credit is 0 or 1 (a count: k of n)

    @property
    def right(self) -> int:
        """Pairs right, when every credit is 0 or 1."""
        return int(self.credit) if self.binary else -1


def subset_scores(
    judge: str,
    pairs: Sequence[Pair],
    rule: str,
    credits: Credits,
    weighting: Weighting = "items",
    weights: Mapping[str, float] | None = None,
) -> list[Score]:
    """The judge's score on each subset (in first-seen order), then overall (subset None)."""
    by_subset: dict[str, list[Fraction]] = {}
    for pair in pairs:
        by_subset.setdefault(pair.subset, []).append(pair_credit(pair, rule, credits))
    found = [
        Score(
            judge,
            subset,
            rule,
            sum(c, Fraction(0)) / len(c),
            sum(c, Fraction(0)),
            len(c),
            all(x in (0, 1) for x in c),
        )
        for subset, c in by_subset.items()
    ]
    return [*found, overall_score(judge, rule, found, weighting, weights or {})]


def overall_score(
    judge: str,
    rule: str,
    subsets: Sequence[Score],
    weighting: Weighting,
    weights: Mapping[str, float],
) -> Score:
    n = sum(s.pairs for s in subsets)
    binary = all(s.binary for s in subsets)
    if weighting == "items":
        total = sum((s.credit for s in subsets), Fraction(0))
        return Score(judge, None, rule, total / n if n else Fraction(0), total, n, binary)
    given = {
        s.subset: (exact(weights[s.subset]) if weighting == "weights" else Fraction(1))
        for s in subsets
        if s.subset is not None
    }
    mass = sum(given.values(), Fraction(0))
    value = sum((given[s.subset] * s.value for s in subsets if s.subset), Fraction(0))
    value = value / mass if mass else Fraction(0)
    return Score(judge, None, rule, value, value * n, n, False)


# --------------------------------------------------------------------------- published


def round_exact(value: Fraction, decimals: int, rounding: str = "half-even") -> Decimal:
    """`value` rounded to `decimals` places, exactly (no float on the way)."""
    scaled = value * 10**decimals
    floor = scaled.numerator // scaled.denominator
    rest = scaled - floor
    up = rest > Fraction(1, 2) or (
        rest == Fraction(1, 2) and (rounding == "half-up" or floor % 2 == 1)
    )
    return Decimal(floor + int(up)).scaleb(-decimals)


def shown_decimals(value: float) -> int:
    """The decimals a published number shows (64.29 -> 2, 95.0 -> 1, 64 -> 0)."""
    exponent = Decimal(repr(value)).as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


@dataclass(frozen=True)
class PublishedMatch:
    """One published figure beside the one recomputed and rounded as it was published."""

    published: Published
    recomputed: Score | None  # None: the judge judged nothing in that subset
    shown: Decimal | None  # the recomputed figure on the published scale and rounding
    equal: bool


def published_matches(published: Published, score: Score | None) -> PublishedMatch:
    """Equal when the exact figure, on the published scale, rounded to the published
    decimals (stated, or as many as the value shows), is the published value; rounding
    half-even, also as Python prints the figure's float to those places. A value in full
    float precision (15 or more significant digits) may also be the exact figure computed
    in floats in another order: within 2 ulp of it."""
    if score is None:
        return PublishedMatch(published, None, None, False)
    value = score.value * (100 if published.scale == "percent" else 1)
    decimals = published.decimals
    places = shown_decimals(float(published.value)) if decimals is None else decimals
    shown = round_exact(value, places, published.rounding)
    target = Decimal(repr(published.value))
    equal = shown == target
    if not equal and published.rounding == "half-even":
        # As Python prints the figure's float to those places (round(), f"{x:.2f}"), which
        # differs from the exact figure's rounding only at a tie the float cannot hold.
        printed = Decimal(float(value)).quantize(Decimal(1).scaleb(-places), ROUND_HALF_EVEN)
        equal = printed == target
    digits = len(Decimal(repr(float(published.value))).as_tuple().digits)
    if not equal and decimals is None and digits >= 15:
        as_float = float(published.value)
        equal = abs(float(value) - as_float) <= 2 * math.ulp(as_float)
    return PublishedMatch(published, score, shown, equal)


# --------------------------------------------------------------------------- a benchmark


def credits_of(benchmark: Benchmark) -> Credits:
    s = benchmark.manifest.scoring
    return Credits(exact(s.tie_credit), exact(s.none_credit), exact(s.tie_vote), exact(s.none_vote))


def pairs_of(benchmark: Benchmark) -> dict[str, list[Pair]]:
    """Judge -> its pairs, in the items' order; each judge on the items it judged only."""
    rows: dict[tuple[str, str], dict[int, tuple[str, tuple[float, float] | None]]] = {}
    for j in benchmark.judgements:
        scores = (float(j.scores.A), float(j.scores.B)) if j.scores else None
        rows.setdefault((j.judge, j.item), {})[j.order] = (str(j.verdict), scores)
    out: dict[str, list[Pair]] = {judge: [] for judge in benchmark.judges}
    for item in benchmark.items:
        for judge in out:
            orders = rows.get((judge, item.id))
            if orders is None:
                continue
            ranked = [orders[k] for k in sorted(orders)]
            out[judge].append(
                Pair(
                    item.id,
                    item.subset,
                    item.gold,
                    tuple(v for v, _ in ranked),
                    tuple(s for _, s in ranked),
                    (len(item.inputs.A), len(item.inputs.B)),
                )
            )
    return out


def benchmark_scores(benchmark: Benchmark, rule: str | None = None) -> dict[str, list[Score]]:
    """Judge -> its scores per subset and overall, under `rule` (default: the judge's own)."""
    credits = credits_of(benchmark)
    overall = benchmark.manifest.overall
    return {
        judge: subset_scores(
            judge,
            pairs,
            rule or benchmark.manifest.rule_of(judge),
            credits,
            overall.weighting,
            overall.weights,
        )
        for judge, pairs in pairs_of(benchmark).items()
    }


def benchmark_published(benchmark: Benchmark) -> list[PublishedMatch]:
    """Every published figure of the benchmark beside the one recomputed."""
    pairs = pairs_of(benchmark)
    credits = credits_of(benchmark)
    overall = benchmark.manifest.overall
    found = []
    for row in benchmark.published:
        scores = subset_scores(
            row.judge, pairs[row.judge], row.rule, credits, overall.weighting, overall.weights
        )
        score = next((s for s in scores if s.subset == row.subset), None)
        found.append(published_matches(row, score))
    return found
