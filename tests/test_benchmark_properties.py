"""The aggregation rules against a second, independent reading of their definitions
(docs/pairwise-benchmarks.md), on random benchmarks; and a figure published as a
benchmark would print it (exactly rounded, or Python's float formatting) always checks
equal, while one two units off in its last place never does."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction as F

from hypothesis import given
from hypothesis import strategies as st

from judges.sets.benchmark import Published
from judges.sets.benchmark_rules import RULES
from judges.stats.fitness.benchmark import Credits, Pair, published_matches, subset_scores

VERDICTS = ("A", "B", "tie", "none")
HALVES = st.sampled_from([F(0), F(1, 4), F(1, 2), F(1)])
VOTES = st.sampled_from([F(-1), F(-1, 2), F(0), F(1, 2)])


@st.composite
def pairs(draw: st.DrawFn) -> list[Pair]:
    n = draw(st.integers(1, 12))
    return [
        Pair(f"i{i}", draw(st.sampled_from(["s1", "s2", "s3"])), draw(st.sampled_from("AB")) if
             draw(st.booleans()) else "tie", tuple(draw(st.sampled_from(VERDICTS)) for _ in "12"))
        for i in range(n)
    ]  # fmt: skip


def _by_definition(pair: Pair, rule: str, c: Credits) -> F:
    """Each rule read again from its definition, written without the module's helpers."""

    def worth(verdict: str) -> F:
        if verdict == "none":
            return c.none_credit
        if verdict == pair.gold:
            return F(1)
        return c.tie_credit if verdict == "tie" else F(0)

    def votes(verdict: str) -> F:
        if verdict == "none":
            return c.none_vote
        if verdict == pair.gold:
            return F(1)
        return c.tie_vote if verdict == "tie" else F(-1)

    one, two = pair.verdicts
    return {
        "per-judgement": (worth(one) + worth(two)) / 2,
        "vote": F(1) if votes(one) + votes(two) > 0 else F(0),
        "single-order": worth(one),
        "both-orders": F(one == two == pair.gold),
        "consistent-or-tie": worth(one) if one == two else worth("tie"),
    }[rule]


@given(pairs(), HALVES, HALVES, VOTES, VOTES)
def test_every_rule_is_its_definition(
    found: list[Pair], tie_credit: F, none_credit: F, tie_vote: F, none_vote: F
) -> None:
    credits = Credits(tie_credit, none_credit, tie_vote, none_vote)
    for rule in RULES:
        credit = {p.item_id: _by_definition(p, rule, credits) for p in found}
        subsets = sorted({p.subset for p in found})
        means = {
            s: sum(credit[p.item_id] for p in found if p.subset == s)
            / sum(p.subset == s for p in found)
            for s in subsets
        }
        scores = {s.subset: s.value for s in subset_scores("j", found, rule, credits)}
        assert {k: v for k, v in scores.items() if k} == means
        assert scores[None] == sum(credit.values()) / len(found)
        by_subsets = subset_scores("j", found, rule, credits, "subsets")[-1].value
        assert by_subsets == sum(means.values()) / len(means)
        weights = {s: i + 1 for i, s in enumerate(subsets)}
        weighted = subset_scores("j", found, rule, credits, "weights", weights)[-1].value
        assert weighted == sum(weights[s] * means[s] for s in subsets) / sum(weights.values())


@given(st.integers(0, 400), st.integers(1, 400), st.integers(0, 4), st.booleans())
def test_a_figure_printed_as_published_checks_equal_and_two_units_off_never(
    k: int, n: int, places: int, percent: bool
) -> None:
    k = min(k, n)
    score = subset_scores("j", [Pair(f"i{i}", "s", "A", ("A" if i < k else "B",) * 2)
                                for i in range(n)], "vote", Credits())[-1]  # fmt: skip
    value = score.value * (100 if percent else 1)
    scale = "percent" if percent else "fraction"

    def check(shown: float, decimals: int | None = places) -> bool:
        row = {"judge": "j", "rule": "vote", "value": shown, "scale": scale, "decimals": decimals}
        return published_matches(Published.model_validate(row), score).equal

    printed = round(float(value), places)  # what a benchmark's own code would print
    assert check(printed)
    # in full precision, its decimals those it shows: computed in either order
    assert check(float(value), None)
    assert check(float(Decimal(value.numerator) / Decimal(value.denominator)), None)
    assert check(k / n * (100 if percent else 1), None)
    assert not check(printed + 2 * 10.0**-places)
    assert not check(printed - 2 * 10.0**-places)
