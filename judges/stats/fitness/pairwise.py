"""Pairwise judges: accuracy per order and in both, positional agreement, chance, McNemar.

Pure functions over result rows of a judge whose verdict names `winner_original` and
`winner_swapped` (the item's label each order preferred, or None) and whose items expect
both to equal the gold label (`judges.builtin.pairwise`, `judges.sets.imports`).

Two sets of figures, on the same judgements:

- the harness's own, each k/n with a Wilson interval: accuracy in the original order, in
  the swapped order, in both, their average (k out of 2n judgements: two per item, not
  independent), and positional agreement (the same winner named in both orders);
- LLMBar's (`llmbar_statistics`), computed exactly as the paper's code does, to reproduce
  a release's `statistics.json` to the digit. Its definitions differ in two places: `equal`
  counts an item whose two replies both named no winner as agreeing; and its `kappa_*`
  encode a winner "1" as 1 and anything else ("2" or none) as 0, then compare that with
  the gold label left as 1 or 2, so they are not Cohen's kappa of the judge against the
  gold label (GPT-4's 95% accuracy on Natural gives kappa_False 0.27).

Chance (`chance_test`, `judges.stats.fitness.chance.accuracy_vs_chance` underneath): an exact
sign test on the items decided the same way in both orders, right in both against wrong
in both. A coin, or a judge that only follows position, is as likely to be wrong twice as
right twice, so its expected accuracy is 50%; items right in one order only carry no
evidence either way.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from judges.core.results import JudgementRow
from judges.sets.planted import Gates
from judges.stats.estimates.intervals import McNemar, Rate, mcnemar_exact, wilson
from judges.stats.fitness.chance import ALPHA, ChanceTest, accuracy_vs_chance


@dataclass(frozen=True)
class Judged:
    """One item's gold label and the winner each order named (None: no winner)."""

    item_id: str
    category: str
    gold: str
    original: str | None
    swapped: str | None

    @property
    def right_original(self) -> bool:
        return self.original == self.gold

    @property
    def right_swapped(self) -> bool:
        return self.swapped == self.gold

    @property
    def right_both(self) -> bool:
        return self.right_original and self.right_swapped

    @property
    def wrong_both(self) -> bool:
        return not self.right_original and not self.right_swapped

    @property
    def consistent(self) -> bool:
        """The same winner named in both orders."""
        return self.original is not None and self.original == self.swapped


def gold_of(row: JudgementRow) -> str | None:
    """The gold label: the value the item expects `winner_original` to take."""
    for expectation in row.expect:
        if expectation.field == "winner_original" and expectation.op == "==":
            return str(expectation.value)
    return None


def is_pairwise(rows: Iterable[JudgementRow]) -> bool:
    return any(gold_of(row) is not None for row in rows)


def is_pairwise_set(items: Iterable[Any]) -> bool:
    """Planted items that expect a winner in each order (`judges.builtin.pairwise`)."""
    return any(
        {e.field for e in item.expect} >= {"winner_original", "winner_swapped"} for item in items
    )


def judged(rows: Iterable[JudgementRow]) -> list[Judged]:
    """Main-run rows as judged items; a row without a verdict named no winner at all."""
    out = []
    for row in rows:
        gold = gold_of(row)
        if row.run != "main" or gold is None:
            continue
        verdict = row.verdict or {}
        original, swapped = verdict.get("winner_original"), verdict.get("winner_swapped")
        out.append(Judged(row.item_id, row.category, gold, original, swapped))
    return sorted(out, key=lambda j: j.item_id)


def chance_test(right_both: int, wrong_both: int, alpha: float = ALPHA) -> ChanceTest:
    """Right in both orders against wrong in both: `accuracy_vs_chance` at 0.5 on the items
    decided the same way twice (judges.stats.fitness.chance), so its verdict words are the
    harness's: fit, not fit, worse than chance, too few to test."""
    decided = right_both + wrong_both
    test = accuracy_vs_chance(right_both, decided, 0.5, name="pairwise chance", alpha=alpha)
    return replace(
        test,
        statistic="right when decided alike in both orders",
        detail=f"right in both orders {right_both}, wrong in both {wrong_both}",
    )


@dataclass(frozen=True)
class PairwiseFigures:
    """One judge model on one set (category): the harness's figures with Wilson intervals."""

    category: str
    n: int
    original: Rate
    swapped: Rate
    both: Rate
    average: Rate  # k of 2n judgements
    agreement: Rate  # the same winner named in both orders
    no_winner: int  # judgements (item x order) that named no winner
    chance: ChanceTest

    def as_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "n": self.n,
            "accuracy_original": self.original.as_dict(),
            "accuracy_swapped": self.swapped.as_dict(),
            "accuracy_both": self.both.as_dict(),
            "accuracy_average": self.average.as_dict(),
            "positional_agreement": self.agreement.as_dict(),
            "no_winner": self.no_winner,
            "chance": self.chance.as_dict(),  # the report adds its finding
        }


def figures(category: str, items: Sequence[Judged]) -> PairwiseFigures:
    n = len(items)
    right_original = sum(j.right_original for j in items)
    right_swapped = sum(j.right_swapped for j in items)
    return PairwiseFigures(
        category=category,
        n=n,
        original=wilson(right_original, n),
        swapped=wilson(right_swapped, n),
        both=wilson(sum(j.right_both for j in items), n),
        average=wilson(right_original + right_swapped, 2 * n),
        agreement=wilson(sum(j.consistent for j in items), n),
        no_winner=sum((j.original is None) + (j.swapped is None) for j in items),
        chance=chance_test(sum(j.right_both for j in items), sum(j.wrong_both for j in items)),
    )


def by_category(items: Sequence[Judged]) -> dict[str, list[Judged]]:
    out: dict[str, list[Judged]] = {}
    for item in items:
        out.setdefault(item.category, []).append(item)
    return dict(sorted(out.items()))


# --------------------------------------------------------------------------- LLMBar's figures


def cohen_kappa(first: Sequence[Any], second: Sequence[Any]) -> float:
    """Cohen's kappa, 1 - observed / chance-expected disagreement, over the labels either
    rater used; computed in the order scikit-learn does, so its floats are the same."""
    labels = sorted(set(first) | set(second))
    index = {label: i for i, label in enumerate(labels)}
    confusion = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for a, b in zip(first, second, strict=True):
        confusion[index[a], index[b]] += 1
    columns, rows = confusion.sum(axis=0), confusion.sum(axis=1)
    expected = np.outer(columns, rows) / np.sum(columns)
    disagree = np.ones((len(labels), len(labels)), dtype=int)
    disagree.flat[:: len(labels) + 1] = 0
    return float(1 - np.sum(disagree * confusion) / np.sum(disagree * expected))


def _as_llmbar_kappa_input(winner: str | None) -> int:
    # The paper's code: int(winner) if winner in ("0", "1") else 0; so "2" and none are 0.
    return int(winner) if winner in ("0", "1") else 0


def _share(k: int, n: int) -> str:
    return f"{k} / {n} = {k / n * 100}%"


def llmbar_statistics(items: Sequence[Judged]) -> dict[str, Any]:
    """A release's `statistics.json`, recomputed from the judged items as its code does."""
    n = len(items)
    right_original = sum(j.right_original for j in items)
    right_swapped = sum(j.right_swapped for j in items)
    gold = [int(j.gold) for j in items]
    original = [_as_llmbar_kappa_input(j.original) for j in items]
    swapped = [_as_llmbar_kappa_input(j.swapped) for j in items]
    stats: dict[str, Any] = {
        "correct_False": _share(right_original, n),
        "correct_True": _share(right_swapped, n),
        "correct_average": f"{(right_original + right_swapped) / 2 / n * 100}%",
        "correct_both": _share(sum(j.right_both for j in items), n),
        # LLMBar's `equal`: two replies without a winner count as the same winner.
        "equal": _share(sum(j.original == j.swapped for j in items), n),
    }
    stats["kappa_False"] = cohen_kappa(original, gold)
    stats["kappa_True"] = cohen_kappa(swapped, gold)
    stats["kappa_average"] = (stats["kappa_False"] + stats["kappa_True"]) / 2
    stats["kappa_agreement"] = cohen_kappa(original, swapped)
    return stats


# --------------------------------------------------------------------------- between models


@dataclass(frozen=True)
class ModelPair:
    """Two judge models on the same items: right in both orders, paired per item."""

    category: str
    first: str
    second: str
    first_right: int
    second_right: int
    test: McNemar  # b: first right, second wrong; c: the reverse

    def as_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "first": self.first,
            "second": self.second,
            "first_right": self.first_right,
            "second_right": self.second_right,
            **self.test.as_dict(),
        }


def model_pairs(by_model: Mapping[str, Sequence[Judged]]) -> list[ModelPair]:
    """Exact McNemar between every two models, per category, on the items both judged."""
    pairs = []
    for first, second in itertools.combinations(sorted(by_model), 2):
        left = {j.item_id: j for j in by_model[first]}
        right = {j.item_id: j for j in by_model[second]}
        common = sorted(set(left) & set(right))
        categories = sorted({left[i].category for i in common})
        for category in categories:
            ids = [i for i in common if left[i].category == category]
            a = [left[i].right_both for i in ids]
            b = [right[i].right_both for i in ids]
            pairs.append(ModelPair(category, first, second, sum(a), sum(b), mcnemar_exact(a, b)))
    return pairs


# --------------------------------------------------------------------------- gates


@dataclass(frozen=True)
class SetOutcome:
    """One judge model on one set: fitness against chance, then the team's floors."""

    figures: PairwiseFigures
    min_agreement: float | None
    accepted: str  # why a NOT FIT or FAIL is accepted (gates.toml), or ""

    @property
    def agreement_passed(self) -> bool | None:
        if self.min_agreement is None or self.figures.n == 0:
            return None
        return self.figures.agreement.rate >= self.min_agreement

    def as_dict(self) -> dict[str, Any]:
        """The figures; the report adds the verdict word and its reasons
        (judges.reports.sections.pairwise)."""
        return {
            **self.figures.as_dict(),
            "min_agreement": self.min_agreement,
            "accepted": self.accepted,
        }


def outcomes(
    items: Sequence[Judged],
    floors: dict[str, float],
    accepted: dict[str, str],
    accept_not_fit: str = "",
) -> list[SetOutcome]:
    """Every set's outcome; `floors`, `accepted` (pairwise_accepted) and `accept_not_fit` come
    from the version's gates.toml table."""
    found = []
    for category, judged_items in by_category(items).items():
        set_figures = figures(category, judged_items)
        # accept_not_fit keeps the whole version though NOT FIT, on whichever sets it is.
        why = accepted.get(category) or ("" if set_figures.chance.fit else accept_not_fit)
        found.append(SetOutcome(set_figures, floors.get("min_agreement"), why))
    return found


def gated_outcomes(items: Sequence[Judged], table: Gates | None) -> list[SetOutcome]:
    """Every set's outcome under one model and version's gates.toml table: what the report
    shows and the test asserts, one reading of pairwise_accepted and accept_not_fit."""
    if table is None:
        return outcomes(items, {}, {})
    return outcomes(items, table.pairwise, table.pairwise_accepted, table.accept_not_fit)
