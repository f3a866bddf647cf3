"""The aggregation rules of a labelled pairwise benchmark: one entry each, the only place a
rule is named and computed.

A rule turns one pair's judgements (the verdict of each order against the gold label) into
the pair's credit, in [0, 1]; a benchmark's figure is the mean of its pairs' credits
(`judges.stats.fitness.benchmark`). An entry holds the rule's name (benchmark.toml's
`rule`, published.jsonl's `rule`), how many orders it needs, and its computation, exactly,
as a `Fraction`. The reader of the benchmark files (`judges.sets.benchmark`) and the
statistics ask this registry; adding a rule is one entry here, its row in
docs/pairwise-benchmarks.md and its tests.

A judgement is right when its verdict is the gold label (a tie verdict on a tie pair
included), a tie when the judge said tie on a pair with a winner, unparsed when it said
nothing readable ("none"), and wrong otherwise (a pick against the gold, or any pick on a
tie pair).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

Outcome = Literal["right", "wrong", "tie", "none"]


@dataclass(frozen=True)
class Credits:
    """What a tie and an unparsed reply are worth (`[scoring]` of benchmark.toml)."""

    tie_credit: Fraction = Fraction(0)
    none_credit: Fraction = Fraction(0)
    tie_vote: Fraction = Fraction(0)
    none_vote: Fraction = Fraction(0)


def outcome(gold: str, verdict: str) -> Outcome:
    if verdict == "none":
        return "none"
    if verdict == gold:
        return "right"
    return "tie" if verdict == "tie" else "wrong"


def credit(result: Outcome, credits: Credits) -> Fraction:
    """A judgement's credit: right 1, wrong 0, a tie `tie_credit`, unparsed `none_credit`."""
    values = {"right": Fraction(1), "wrong": Fraction(0)}
    values |= {"tie": credits.tie_credit, "none": credits.none_credit}
    return values[result]


def vote(result: Outcome, credits: Credits) -> Fraction:
    """A judgement's vote: right +1, wrong -1, a tie `tie_vote`, unparsed `none_vote`."""
    values = {"right": Fraction(1), "wrong": Fraction(-1)}
    values |= {"tie": credits.tie_vote, "none": credits.none_vote}
    return values[result]


# -- the rules: gold label, each order's verdict, credits -> the pair's credit -------------

PairCredit = Callable[[str, Sequence[str], Credits], Fraction]


def per_judgement(gold: str, verdicts: Sequence[str], credits: Credits) -> Fraction:
    """The mean over the orders of each judgement's credit (LLMBar's `correct_average`)."""
    total = sum((credit(outcome(gold, v), credits) for v in verdicts), Fraction(0))
    return total / len(verdicts)


def single_order(gold: str, verdicts: Sequence[str], credits: Credits) -> Fraction:
    """The credit of the first order's judgement alone (a reward model, a judge judged once)."""
    return credit(outcome(gold, verdicts[0]), credits)


def two_order_vote(gold: str, verdicts: Sequence[str], credits: Credits) -> Fraction:
    """1 when the orders' votes sum above zero, else 0."""
    return Fraction(int(sum((vote(outcome(gold, v), credits) for v in verdicts), Fraction(0)) > 0))


def both_orders(gold: str, verdicts: Sequence[str], credits: Credits) -> Fraction:
    """1 when every order is right, else 0 (LLMBar's `correct_both`)."""
    return Fraction(int(all(outcome(gold, v) == "right" for v in verdicts)))


def consistent_or_tie(gold: str, verdicts: Sequence[str], credits: Credits) -> Fraction:
    """The two orders' verdict when they agree, else a tie (MT-Bench's reading of a swap);
    its credit is that verdict's, as a judgement's."""
    first, second = verdicts
    return credit(outcome(gold, first if first == second else "tie"), credits)


@dataclass(frozen=True)
class BenchmarkRule:
    """One aggregation rule: its name, the orders a pair must have, its computation."""

    name: str
    pair_credit: PairCredit
    two_orders: bool  # each pair must be judged in both orders (a judge judged once cannot)


# In this order in error messages and docs/pairwise-benchmarks.md's table.
RULES: dict[str, BenchmarkRule] = {
    rule.name: rule
    for rule in (
        BenchmarkRule("per-judgement", per_judgement, two_orders=False),
        BenchmarkRule("vote", two_order_vote, two_orders=True),
        BenchmarkRule("single-order", single_order, two_orders=False),
        BenchmarkRule("both-orders", both_orders, two_orders=True),
        BenchmarkRule("consistent-or-tie", consistent_or_tie, two_orders=True),
    )
}
TWO_ORDER_RULES = frozenset(name for name, rule in RULES.items() if rule.two_orders)


def known_rule(name: str) -> str:
    """`name` if a rule is registered under it; else an error naming every rule."""
    if name not in RULES:
        raise ValueError(f"unknown rule {name!r}; the rules are {', '.join(RULES)}")
    return name


def rule_credit(
    name: str, item: str, gold: str, verdicts: Sequence[str], credits: Credits
) -> Fraction:
    """The credit of one pair (`item`) under the rule `name`, in [0, 1]."""
    rule = RULES[known_rule(name)]
    if not verdicts:
        raise ValueError(f"item {item}: no verdict")
    if rule.two_orders and len(verdicts) != 2:
        raise ValueError(f"rule {name!r} needs 2 orders; item {item} has {len(verdicts)}")
    return rule.pair_credit(gold, verdicts, credits)
