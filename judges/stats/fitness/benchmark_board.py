"""A labelled benchmark's leaderboard: every judge that judged the same items, ranked together
by its figure under its rule (whatever its strategy or prompt), per subset and overall.

Beside each figure, counted apart: ties (a tie verdict), unparsed replies ("none"), and
inconsistent pairs (both orders parsed, different verdicts). Biases and chance are measured
on real picks only (a verdict A or B; a tie or an unparsed reply is no pick):

- position: of the picks, those naming the response shown first (A in order 1, B in order
  2), Wilson interval; tested by the pairs where the first shown was picked in both orders
  against those where the second shown was (exact, two-sided); one-order judges: none;
- length: of the picks on pairs whose responses differ in length, those naming the longer,
  beside the share of such pairs whose gold winner is the longer, with the sign test of
  `judges.stats.fitness.evaluator.preference`; for a judge that gives scores, Spearman's
  rank correlation of each response's score with its length (scipy.stats.spearmanr);
- chance: pairs with a gold winner where every pick was right against those where every
  pick was wrong; a coin, or a judge following position, is as likely to do either
  (`accuracy_vs_chance` at 0.5, one-sided);
- the interval of the figure: Wilson over pairs when every pair scores 0 or 1, else a
  percentile bootstrap over pairs; a figure weighted by subsets has none (its weights are
  the benchmark's, not a sample's).

Judges are ranked in groups: one group per set of items judged, so a judge imported for a
part of a subset is never ranked against judges of all of it. Between neighbours, the
sign test on the pairs both judged (where the upper one's credit is higher against lower).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import scipy.stats

from judges.sets.benchmark import Benchmark
from judges.stats.estimates.intervals import McNemar, Rate, bootstrap_mean, wilson
from judges.stats.fitness.benchmark import (
    Credits,
    Pair,
    Score,
    credits_of,
    pair_credit,
    pairs_of,
    subset_scores,
)
from judges.stats.fitness.chance import ChanceTest, accuracy_vs_chance
from judges.stats.fitness.evaluator import PositionBias, sign_test

PICKS = ("A", "B")


@dataclass(frozen=True)
class LengthBias:
    """P(pick the longer response) beside gold's; and, for score judges, score vs length."""

    longer: Rate  # picks naming the longer response, of picks on pairs differing in length
    gold: Rate  # pairs (with a gold winner, differing in length) whose winner is the longer
    test: McNemar  # b: pairs the judge leans to the longer more than gold does, c: less
    rho: float | None = None  # Spearman, score against length (None: no scores)
    rho_p: float | None = None
    scored: int = 0  # responses scored


@dataclass(frozen=True)
class Entry:
    judge: str
    rule: str
    score: Score
    low: float  # the figure's interval (nan: none)
    high: float
    judgements: int
    ties: int
    unparsed: int
    inconsistent: int | None  # None: judged in one order
    position: PositionBias | None  # None: judged in one order
    length: LengthBias
    chance: ChanceTest


@dataclass(frozen=True)
class Board:
    """One subset (None: overall) of a benchmark: one ranked group of judges."""

    benchmark: str
    subset: str | None
    items: int
    entries: tuple[Entry, ...]  # best figure first
    neighbours: tuple[McNemar, ...]  # neighbours[i]: entries[i] against entries[i + 1]


def _first_shown(order: int, verdict: str) -> bool:
    return (order, verdict) in ((1, "A"), (2, "B"))


def position_on_picks(pairs: Sequence[Pair]) -> PositionBias:
    picks = [
        _first_shown(order, v)
        for p in pairs
        for order, v in enumerate(p.verdicts, start=1)
        if v in PICKS
    ]
    both = [p for p in pairs if len(p.verdicts) == 2 and all(v in PICKS for v in p.verdicts)]
    first = sum(p.verdicts == ("A", "B") for p in both)
    second = sum(p.verdicts == ("B", "A") for p in both)
    return PositionBias(wilson(sum(picks), len(picks)), sign_test(first, second))


def length_bias(pairs: Sequence[Pair]) -> LengthBias:
    chosen = named = toward = away = gold = considered = 0
    for p in pairs:
        a, b = p.lengths
        if a == b:
            continue
        longer = "A" if a > b else "B"
        picks = [v for v in p.verdicts if v in PICKS]
        chosen += sum(v == longer for v in picks)
        named += len(picks)
        if p.gold in PICKS:
            considered += 1
            gold += p.gold == longer
            if picks:
                share = sum(v == longer for v in picks) / len(picks)
                toward += share > (p.gold == longer)
                away += share < (p.gold == longer)
    points = [
        (score, length)
        for p in pairs
        for pair_scores in p.scores
        if pair_scores is not None
        for score, length in zip(pair_scores, p.lengths, strict=True)
    ]
    rho = rho_p = None
    if points:
        rho, rho_p = math.nan, math.nan
        scores, lengths = zip(*points, strict=True)
        if len(points) >= 3 and len(set(scores)) > 1 and len(set(lengths)) > 1:
            found = scipy.stats.spearmanr(scores, lengths)
            rho, rho_p = float(found.statistic), float(found.pvalue)
    return LengthBias(
        wilson(chosen, named),
        wilson(gold, considered),
        sign_test(toward, away),
        rho,
        rho_p,
        len(points),
    )


def chance_on_picks(pairs: Sequence[Pair]) -> ChanceTest:
    right = wrong = 0
    for p in pairs:
        picks = [v for v in p.verdicts if v in PICKS]
        if p.gold not in PICKS or not picks:
            continue
        right += all(v == p.gold for v in picks)
        wrong += all(v != p.gold for v in picks)
    return accuracy_vs_chance(right, right + wrong, 0.5, name="benchmark chance")


def _interval(score: Score, credits: Sequence[float], weighted: bool) -> tuple[float, float]:
    if weighted:  # the subsets' weights are the benchmark's, not a sample's
        return math.nan, math.nan
    if score.binary:
        rate = wilson(score.right, score.pairs)
        return rate.low, rate.high
    estimate = bootstrap_mean(list(credits))
    return estimate.low, estimate.high


def entry(
    judge: str,
    rule: str,
    score: Score,
    pairs: Sequence[Pair],
    credits: Credits,
    weighted: bool = False,
) -> Entry:
    verdicts = [v for p in pairs for v in p.verdicts]
    two = all(len(p.verdicts) == 2 for p in pairs)
    inconsistent = sum(len(set(p.verdicts)) > 1 and "none" not in p.verdicts for p in pairs if two)
    low, high = _interval(score, [float(pair_credit(p, rule, credits)) for p in pairs], weighted)
    return Entry(
        judge=judge,
        rule=rule,
        score=score,
        low=low,
        high=high,
        judgements=len(verdicts),
        ties=verdicts.count("tie"),
        unparsed=verdicts.count("none"),
        inconsistent=inconsistent if two and pairs else None,
        position=position_on_picks(pairs) if two and pairs else None,
        length=length_bias(pairs),
        chance=chance_on_picks(pairs),
    )


def _neighbour(
    upper: Entry, lower: Entry, pairs: dict[str, list[Pair]], credits: Credits, subset: str | None
) -> McNemar:
    def credit_by_item(judge: str, rule: str) -> dict[str, float]:
        return {
            p.item_id: float(pair_credit(p, rule, credits))
            for p in pairs[judge]
            if subset is None or p.subset == subset
        }

    mine, theirs = credit_by_item(upper.judge, upper.rule), credit_by_item(lower.judge, lower.rule)
    shared = sorted(set(mine) & set(theirs))
    return sign_test(
        sum(mine[i] > theirs[i] for i in shared), sum(mine[i] < theirs[i] for i in shared)
    )


def boards(benchmark: Benchmark) -> list[Board]:
    """Per subset, then overall: one board per group of judges that judged the same items."""
    pairs = pairs_of(benchmark)
    credits = credits_of(benchmark)
    overall = benchmark.manifest.overall
    scores = {
        judge: subset_scores(
            judge,
            mine,
            benchmark.manifest.rule_of(judge),
            credits,
            overall.weighting,
            overall.weights,
        )
        for judge, mine in pairs.items()
    }
    found = []
    for subset in (*benchmark.subsets, None):
        groups: dict[tuple[str, ...], list[Entry]] = {}
        for judge, mine in pairs.items():
            here = [p for p in mine if subset is None or p.subset == subset]
            score = next((s for s in scores[judge] if s.subset == subset), None)
            if not here or score is None:
                continue
            key = tuple(p.item_id for p in here)
            rule = benchmark.manifest.rule_of(judge)
            weighted = subset is None and overall.weighting != "items"
            found_entry = entry(judge, rule, score, here, credits, weighted)
            groups.setdefault(key, []).append(found_entry)
        for key, entries in sorted(groups.items(), key=lambda g: (-len(g[0]), g[0])):
            entries.sort(key=lambda e: (-e.score.value, e.judge))
            neighbours = tuple(
                _neighbour(upper, lower, pairs, credits, subset)
                for upper, lower in itertools.pairwise(entries)
            )
            found.append(
                Board(benchmark.manifest.name, subset, len(key), tuple(entries), neighbours)
            )
    return found
