"""The pairwise statistics against independent implementations, and adversarial judges.

The figures of a real release are reproduced in regression_tests/test_pairwise.py, from the
replayed rows; here each statistic is checked on random and constructed cases.
"""

from __future__ import annotations

import math
import random

import pytest
import scipy.stats
from sklearn.metrics import cohen_kappa_score

from judges.builtin.pairwise import to_label, to_position
from judges.reports.sections.pairwise import finding, set_reasons
from judges.sets.planted import Gates
from judges.stats.fitness.pairwise import (
    Judged,
    chance_test,
    cohen_kappa,
    figures,
    gated_outcomes,
    llmbar_statistics,
    model_pairs,
    outcomes,
)
from judges.verdicts.pairwise import set_verdict
from judges.verdicts.vocabulary import AT_CHANCE, BETTER, FAIL, NOT_FIT, PASS, WORSE

WINNERS = ("1", "2", None)


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval in closed form (independent of scipy's)."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def _random_items(rng: random.Random, n: int) -> list[Judged]:
    return [
        Judged(f"IT-{i:03d}", "set", rng.choice("12"), rng.choice(WINNERS), rng.choice(WINNERS))
        for i in range(n)
    ]


@pytest.mark.parametrize("seed", range(40))
def test_kappa_is_sklearns_to_the_digit(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 60)
    first = [rng.choice([0, 1, 2]) for _ in range(n)]
    second = [rng.choice([0, 1, 2, 3]) for _ in range(n)]
    if len(set(first) | set(second)) < 2:
        return
    expected = cohen_kappa_score(first, second)
    if math.isnan(expected):
        assert math.isnan(cohen_kappa(first, second))
    else:
        assert cohen_kappa(first, second) == expected


@pytest.mark.parametrize("seed", range(20))
def test_llmbar_statistics_follow_the_papers_code(seed: int) -> None:
    """Recomputed here the long way, as the release's code is described in its README."""
    rng = random.Random(seed)
    items = _random_items(rng, rng.randint(5, 80))
    stats = llmbar_statistics(items)
    n = len(items)
    k_false = sum(j.original == j.gold for j in items)
    k_true = sum(j.swapped == j.gold for j in items)
    assert stats["correct_False"] == f"{k_false} / {n} = {k_false / n * 100}%"
    assert stats["correct_True"] == f"{k_true} / {n} = {k_true / n * 100}%"
    assert stats["correct_average"] == f"{(k_false + k_true) / 2 / n * 100}%"
    equal = sum(j.original == j.swapped for j in items)  # no winner twice counts as equal
    assert stats["equal"] == f"{equal} / {n} = {equal / n * 100}%"
    as_int = [[1 if w == "1" else 0 for w in (j.original, j.swapped)] for j in items]
    gold = [int(j.gold) for j in items]
    assert stats["kappa_False"] == cohen_kappa_score([a for a, _ in as_int], gold)
    assert stats["kappa_agreement"] == cohen_kappa_score(
        [a for a, _ in as_int], [b for _, b in as_int]
    )


@pytest.mark.parametrize("seed", range(20))
def test_figures_are_wilson_rates_of_the_right_counts(seed: int) -> None:
    rng = random.Random(seed)
    items = _random_items(rng, rng.randint(1, 60))
    found = figures("set", items)
    both = sum(j.original == j.gold == j.swapped for j in items)
    agree = sum(j.original is not None and j.original == j.swapped for j in items)
    assert (found.both.successes, found.agreement.successes) == (both, agree)
    assert found.average.n == 2 * len(items)
    for rate in (found.original, found.swapped, found.both, found.average, found.agreement):
        low, high = _wilson(rate.successes, rate.n)
        assert rate.low == pytest.approx(max(low, 0.0), abs=1e-9)
        assert rate.high == pytest.approx(min(high, 1.0), abs=1e-9)


def test_chance_test_is_the_exact_sign_test() -> None:
    test = chance_test(30, 12)
    assert test.p_value == pytest.approx(
        scipy.stats.binomtest(30, 42, alternative="greater").pvalue
    )
    assert finding(test) == BETTER and test.fit
    assert finding(chance_test(12, 30)) == WORSE
    assert finding(chance_test(20, 22)) == AT_CHANCE
    assert not chance_test(0, 0).fit  # nothing decided twice: no evidence
    assert not chance_test(4, 0).fit  # too few: even 4/4 cannot reach p < 0.05


def _judge_on(items: list[tuple[str, str, str, str]], pick: object) -> list[Judged]:
    """A simulated judge: `pick(order, shown_a, shown_b, gold_position)` -> "a" or "b"."""
    out = []
    for item_id, gold, first, second in items:
        winners = []
        for order in ("original", "swapped"):
            a, b = (first, second) if order == "original" else (second, first)
            position = pick(order, a, b, to_position(order, gold))  # type: ignore[operator]
            winners.append(to_label(order, position))
        out.append(Judged(item_id, "set", gold, winners[0], winners[1]))
    return out


def _items(n: int = 120) -> list[tuple[str, str, str, str]]:
    rng = random.Random(7)
    # The gold output is the longer one on half the items: length is no guide to quality.
    items = []
    for i in range(n):
        short, long = "x" * rng.randint(5, 20), "y" * rng.randint(30, 60)
        gold = rng.choice("12")
        good_is_long = i % 2 == 0
        good, bad = (long, short) if good_is_long else (short, long)
        first, second = (good, bad) if gold == "1" else (bad, good)
        items.append((f"IT-{i:03d}", gold, first, second))
    return items


_COIN = random.Random(3)
ADVERSARIAL = {
    "constant first": lambda order, a, b, gold: "a",
    "constant second": lambda order, a, b, gold: "b",
    "random": lambda order, a, b, gold: _COIN.choice("ab"),
    "reversed": lambda order, a, b, gold: "b" if gold == "a" else "a",
    "length-biased": lambda order, a, b, gold: "a" if len(a) >= len(b) else "b",
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_judges_are_never_pass(name: str) -> None:
    judged_items = _judge_on(_items(), ADVERSARIAL[name])
    (outcome,) = outcomes(judged_items, {"min_agreement": 0.6}, {})
    assert set_verdict(outcome) in (NOT_FIT, FAIL), (name, set_reasons(outcome))
    if name == "reversed":
        assert finding(outcome.figures.chance) == WORSE
    if name.startswith("constant"):  # right in exactly one order on every item
        assert outcome.figures.agreement.successes == 0
        assert set_verdict(outcome) == NOT_FIT


def test_a_good_judge_passes_and_a_position_biased_one_fails_agreement() -> None:
    items = _items()
    good = _judge_on(items, lambda order, a, b, gold: gold)
    (outcome,) = outcomes(good, {"min_agreement": 0.6}, {})
    assert set_verdict(outcome) == PASS and outcome.figures.both.rate == 1.0
    # Right when the gold is shown first, else follows position half the time.
    rng = random.Random(5)
    biased = _judge_on(
        items, lambda o, a, b, gold: gold if gold == "a" or rng.random() < 0.3 else "a"
    )
    (outcome,) = outcomes(biased, {"min_agreement": 0.6}, {})
    assert outcome.figures.chance.fit and set_verdict(outcome) == FAIL
    assert "positional agreement" in set_reasons(outcome)[0]


def test_model_pairs_count_discordant_items_per_set() -> None:
    a = [Judged("IT-001", "s", "1", "1", "1"), Judged("IT-002", "s", "1", "2", "2")]
    b = [Judged("IT-001", "s", "1", "2", "1"), Judged("IT-002", "s", "1", "1", "1")]
    (pair,) = model_pairs({"m1": a, "m2": b})
    assert (pair.first, pair.second, pair.test.b, pair.test.c) == ("m1", "m2", 1, 1)
    assert pair.test.p_value == 1.0


def test_positions_map_back_to_labels() -> None:
    for order in ("original", "swapped"):
        for label in ("1", "2"):
            assert to_label(order, to_position(order, label)) == label  # type: ignore[arg-type]
    assert to_label("swapped", "a") == "2" and to_label("original", None) is None


def test_the_test_and_the_report_read_accept_not_fit_alike() -> None:
    """A version's accept_not_fit accepts each of its sets at chance, as the docs say, in the
    test as in the report; pairwise_accepted names sets one by one."""
    # Right in one order, wrong in the other: a position-follower, at chance.
    coin = [Judged(f"NATU-{i:03d}", "natural", "1", "1", "2") for i in range(20)]
    assert not gated_outcomes(coin, None)[0].figures.chance.fit
    assert gated_outcomes(coin, None)[0].accepted == ""
    assert gated_outcomes(coin, Gates(accept_not_fit="a smoke judge"))[0].accepted == (
        "a smoke judge"
    )
    named = Gates(pairwise_accepted={"natural": "known"}, accept_not_fit="all")
    assert gated_outcomes(coin, named)[0].accepted == "known"


def test_a_failing_positional_agreement_never_reads_as_its_floor() -> None:
    # 28 of 47 items named the same winner both ways: 0.596, below a floor of 0.60.
    same = [Judged(f"NATU-{i:03d}", "natural", "1", "1", "1") for i in range(28)]
    flipped = [Judged(f"NATU-{i:03d}", "natural", "1", "1", "2") for i in range(28, 47)]
    (found,) = outcomes(same + flipped, {"min_agreement": 0.6}, {})
    assert "positional agreement 28/47 = 0.596 below min_agreement 0.60" in set_reasons(found)
