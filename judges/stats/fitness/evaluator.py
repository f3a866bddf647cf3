"""A pairwise judge model's evaluator figures on one set, the ones teams compare judges by.

AlpacaEval's evaluator leaderboard publishes, per judge: agreement with the human label,
P(prefer the first output shown), P(prefer the longer output), P(prefer lists), the share
of parsed replies, price and time per 1,000 judgements. Here each comes with its n, an
interval and, for a bias, an exact test, all from the same judged items
(`judges.stats.fitness.pairwise.Judged`) and the items' two outputs.

A judgement is one item shown in one order; every item is judged in both. Rates over
judgements (P(first), P(longer), parsed) carry a Wilson interval over judgements, as
AlpacaEval counts them (the two orders of an item are not independent, so the interval is
somewhat narrow). Every test is on items, which are independent:

- agreement: the item's share of its two judgements that name the gold winner (0, 1/2 or
  1); its mean is LLMBar's `correct_average`, with a percentile bootstrap interval over
  items;
- position: an item whose two judgements name the output shown first both times, against
  one naming the output shown second both times; with no position bias both are equally
  likely (exact two-sided binomial test at 0.5). P(first) - 0.5 is exactly
  (first twice - second twice) / judgements, so this tests P(first) = 0.5;
- length and lists: on items where one output is longer (or alone has a list), the judge's
  share of judgements preferring that output, beside the gold label's share of items; the
  test pairs them per item: items where the judge leans to the longer output more than
  the gold label does, against less (exact two-sided sign test at 0.5).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import scipy.stats

from judges.calls.backends import is_imported
from judges.core.results import JudgementRow
from judges.stats.estimates.intervals import Estimate, McNemar, Rate, bootstrap_mean, wilson
from judges.stats.fitness.pairwise import Judged

# A list: two or more lines starting with a bullet or a number ("- a", "2. b", "3) c").
_LIST_LINE = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+\S", re.MULTILINE)

Outputs = Mapping[str, tuple[str, str]]  # item id -> (output_1, output_2)


def has_list(text: str) -> bool:
    return len(_LIST_LINE.findall(text)) >= 2


def sign_test(toward: int, away: int) -> McNemar:
    """Exact two-sided binomial test of `toward` out of `toward + away` at 0.5 (McNemar's
    exact test when each item's difference is one of two kinds)."""
    n = toward + away
    p = 1.0 if n == 0 else float(scipy.stats.binomtest(toward, n, 0.5).pvalue)
    return McNemar(b=toward, c=away, n=n, p_value=min(p, 1.0))


@dataclass(frozen=True)
class PositionBias:
    """P(the judge names the output shown first), and its test against 0.5."""

    first: Rate  # judgements naming the output shown first, of those naming a winner
    test: McNemar  # b: items first-shown both times, c: second-shown both times

    def as_dict(self) -> dict[str, Any]:
        return {
            "p_first": self.first.as_dict(),
            "first_both_orders": self.test.b,
            "second_both_orders": self.test.c,
            "p_value_two_sided": self.test.as_dict()["p_value"],
        }


@dataclass(frozen=True)
class Preference:
    """P(the judge prefers the output with a feature) beside the gold label's own P."""

    feature: str  # "longer", "list"
    judge: Rate  # judgements preferring the output with it, of those naming a winner
    gold: Rate  # items whose gold winner has it
    test: McNemar  # b: items where the judge leans to it more than gold, c: less

    @property
    def difference(self) -> float:
        return self.judge.rate - self.gold.rate if self.judge.n and self.gold.n else math.nan

    def as_dict(self) -> dict[str, Any]:
        return {
            "feature": self.feature,
            "judge": self.judge.as_dict(),
            "gold": self.gold.as_dict(),
            "items_judge_leans_more": self.test.b,
            "items_judge_leans_less": self.test.c,
            "p_value_two_sided": self.test.as_dict()["p_value"],
        }


@dataclass(frozen=True)
class Spend:
    """Price and time per 1,000 judgements, or why they are unknown."""

    judgements: int
    usd_per_1000: float | None
    seconds_per_1000: float | None
    cost_unknown: str = ""  # why the price is unknown
    time_unknown: str = ""  # why the time is unknown

    def as_dict(self) -> dict[str, Any]:
        return {
            "judgements": self.judgements,
            "usd_per_1000": self.usd_per_1000,
            "seconds_per_1000": self.seconds_per_1000,
            "cost_unknown": self.cost_unknown,
            "time_unknown": self.time_unknown,
        }


IMPORTED_COST = "unknown: imported, the release published no usage or price"
IMPORTED_TIME = "unknown: imported, the release published no latency"
REPLAY_TIME = "not recorded: cassettes keep no latency"


def spend(rows: Sequence[JudgementRow]) -> Spend:
    """Price per 1,000 judgements from the rows' recorded cost; unknown for imported rows.

    Time: a replayed row's latency is the replay's, not the judge's, and it is never
    written to results.jsonl, so it is unknown unless every row was judged live here.
    """
    calls = sum(row.usage.calls for row in rows)
    imported = any(is_imported(row.model) for row in rows)
    if imported:
        return Spend(calls, None, None, IMPORTED_COST, IMPORTED_TIME)
    if not calls:
        return Spend(0, None, None, "no calls", "no calls")
    usd = round(1000 * math.fsum(r.usage.cost_usd for r in rows) / calls, 4)
    if rows and all(row.live for row in rows):
        seconds = round(1000 * math.fsum(r.latency_s for r in rows) / calls, 1)
        return Spend(calls, usd, seconds)
    return Spend(calls, usd, None, time_unknown=REPLAY_TIME)


@dataclass(frozen=True)
class EvaluatorFigures:
    """One judge model on one set: the leaderboard's figures."""

    model: str
    category: str
    items: int
    agreement: Estimate  # mean per-item share of judgements naming the gold winner
    right: int  # judgements naming the gold winner, of 2 x items
    parsed: Rate  # judgements naming a winner
    position: PositionBias
    length: Preference
    lists: Preference | None  # None: no item has a list in one output only
    spend: Spend

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "category": self.category,
            "items": self.items,
            "agreement": self.agreement.as_dict(),
            "right_judgements": self.right,
            "parsed": self.parsed.as_dict(),
            "position": self.position.as_dict(),
            "length": self.length.as_dict(),
            "lists": self.lists.as_dict() if self.lists else None,
            "spend": self.spend.as_dict(),
        }


def _winners(item: Judged) -> tuple[tuple[str | None, str], ...]:
    """(winner, label shown first) per order: output_1 first, then output_2 first."""
    return ((item.original, "1"), (item.swapped, "2"))


def item_scores(items: Sequence[Judged]) -> list[float]:
    """Each item's share of its two judgements that name the gold winner."""
    return [(item.right_original + item.right_swapped) / 2 for item in items]


def position_bias(items: Sequence[Judged]) -> PositionBias:
    named = [(w, first) for item in items for w, first in _winners(item) if w is not None]
    first = sum(w == shown for w, shown in named)
    both = [item for item in items if item.original is not None and item.swapped is not None]
    first_both = sum(item.original == "1" and item.swapped == "2" for item in both)
    second_both = sum(item.original == "2" and item.swapped == "1" for item in both)
    return PositionBias(wilson(first, len(named)), sign_test(first_both, second_both))


def preference(feature: str, items: Sequence[Judged], owner: Mapping[str, str]) -> Preference:
    """`owner`: item id -> the label ("1" or "2") of the output with the feature, for the
    items where exactly one output has it."""
    chosen = named = toward = away = gold = 0
    considered = [item for item in items if item.item_id in owner]
    for item in considered:
        label = owner[item.item_id]
        winners = [w for w, _ in _winners(item) if w is not None]
        chosen += sum(w == label for w in winners)
        named += len(winners)
        gold += item.gold == label
        if winners:
            share = sum(w == label for w in winners) / len(winners)
            toward += share > (item.gold == label)
            away += share < (item.gold == label)
    return Preference(feature, wilson(chosen, named), wilson(gold, len(considered)),
                      sign_test(toward, away))  # fmt: skip


def longer_owner(outputs: Outputs) -> dict[str, str]:
    """Item id -> the label of the longer output (characters); ties left out."""
    return {
        item_id: "1" if len(one) > len(two) else "2"
        for item_id, (one, two) in outputs.items()
        if len(one) != len(two)
    }


def list_owner(outputs: Outputs) -> dict[str, str]:
    """Item id -> the label of the one output with a list; items with none or both left out."""
    return {
        item_id: "1" if has_list(one) else "2"
        for item_id, (one, two) in outputs.items()
        if has_list(one) != has_list(two)
    }


def evaluator_figures(
    model: str,
    category: str,
    items: Sequence[Judged],
    outputs: Outputs,
    rows: Sequence[JudgementRow],
) -> EvaluatorFigures:
    """The figures of `model` on one set: `items` judged, their outputs, and its main-run
    rows on the set (for price and time)."""
    mine = {item.item_id: outputs[item.item_id] for item in items if item.item_id in outputs}
    lists = list_owner(mine)
    named = sum((item.original is not None) + (item.swapped is not None) for item in items)
    return EvaluatorFigures(
        model=model,
        category=category,
        items=len(items),
        agreement=bootstrap_mean(item_scores(items)),
        right=sum(item.right_original + item.right_swapped for item in items),
        parsed=wilson(named, 2 * len(items)),
        position=position_bias(items),
        length=preference("longer", items, longer_owner(mine)),
        lists=preference("list", items, lists) if lists else None,
        spend=spend(rows),
    )
