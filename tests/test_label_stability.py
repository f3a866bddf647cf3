"""Per-value stability of categorical verdicts (relevance labels and levels) over retest and
noise runs, checked against a direct count and scipy's Wilson interval."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binomtest

from judges.core.label_paths import read_labels
from judges.core.results import JudgementRow
from judges.core.spec import JudgeConfig
from judges.stats.reliability.label_stability import (
    evaluate_stability,
    noise_stability,
    retest_stability,
)

LABELS = {"level": "level", "criterion_label": "judgements[criterion].relevance"}
VALUES = ("Perfectly Relevant", "Somewhat Relevant", "Not Relevant")
CRITERIA = ("a", "b", "c")


def row(item_id: str, run: str, labels: list[str] | None, level: int = 1, repeat: int = 0):
    ok = labels is not None
    verdict: dict[str, Any] | None = None
    if ok:
        pairs = zip(CRITERIA, labels, strict=True)
        judgements = [{"criterion": c, "relevance": v} for c, v in pairs]
        verdict = {"level": level, "judgements": judgements}
    return JudgementRow(
        judge="relevance", prompt_version="1.0", prompt_hash="h", model="local:m",
        item_id=item_id, category="perfect", control=False, run=run, repeat=repeat,
        status="ok" if ok else "unparseable", verdict=verdict, error=None if ok else "boom",
    )  # fmt: skip


def test_read_labels_paths() -> None:
    verdict = {"level": 2, "judgements": [{"criterion": "a", "relevance": "Not Relevant"}]}
    assert read_labels(verdict, "level") == {"": "2"}
    assert read_labels(verdict, "judgements[criterion].relevance") == {"a": "Not Relevant"}
    assert read_labels({}, "level") is None
    with pytest.raises(ValueError, match=r"judgements\[criterion\]\.relevance"):
        JudgeConfig(name="x", module="m", baseline_model="local:m", labels={"l": "a.b.c"})


labels_lists = st.lists(st.sampled_from(VALUES), min_size=3, max_size=3)


@given(st.lists(st.tuples(labels_lists, labels_lists), min_size=1, max_size=12))
def test_retest_rates_match_a_direct_count(pairs) -> None:
    main = [row(f"I-{i}", "main", a) for i, (a, _) in enumerate(pairs)]
    retest = [row(f"I-{i}", "retest", b) for i, (_, b) in enumerate(pairs)]
    result = retest_stability(main, retest, LABELS).fields["criterion_label"]
    units = [(x, x == y) for a, b in pairs for x, y in zip(a, b, strict=True)]
    assert result.overall.n == len(units) == 3 * len(pairs)
    assert result.overall.successes == sum(same for _, same in units)
    for value in VALUES:
        mine = [same for first, same in units if first == value]
        if not mine:
            assert value not in result.per_value
            continue
        rate = result.per_value[value]
        low, high = binomtest(sum(mine), len(mine)).proportion_ci(0.95, method="wilson")
        assert (rate.successes, rate.n) == (sum(mine), len(mine))
        assert rate.low == pytest.approx(low) and rate.high == pytest.approx(high)


def test_failed_judgements_are_counted_not_agreed() -> None:
    main = [row("I-1", "main", list(VALUES)), row("I-2", "main", list(VALUES))]
    retest = [row("I-1", "retest", list(VALUES)), row("I-2", "retest", None)]
    field = retest_stability(main, retest, LABELS).fields["criterion_label"]
    assert field.overall.n == 3 and field.excluded == {"failed judgement": 1}


def test_noise_counts_a_unit_stable_only_when_every_repeat_agrees() -> None:
    same = ["Not Relevant"] * 3
    rows = [row("I-1", "noise", same, repeat=r) for r in range(4)]
    flips = [same, same, ["Somewhat Relevant", *same[1:]]]
    rows += [row("I-2", "noise", labels, repeat=r) for r, labels in enumerate(flips)]
    field = noise_stability(rows, LABELS).fields["criterion_label"]
    assert (field.overall.successes, field.overall.n) == (5, 6)
    assert field.per_value["Not Relevant"].successes == 5


def _gates(result_rows: tuple[list[JudgementRow], list[JudgementRow]], threshold: float):
    result = retest_stability(*result_rows, LABELS)
    keys = {"retest.criterion_label": threshold, "retest.level": threshold}
    return evaluate_stability([result], keys)


def test_a_judge_that_draws_labels_at_random_fails_the_gates() -> None:
    rng = random.Random(3)
    draw = [[rng.choice(VALUES) for _ in CRITERIA] for _ in range(60)]
    redraw = [[rng.choice(VALUES) for _ in CRITERIA] for _ in range(60)]
    main = [row(f"I-{i}", "main", a, level=rng.randrange(4)) for i, a in enumerate(draw)]
    retest = [row(f"I-{i}", "retest", b, level=rng.randrange(4)) for i, b in enumerate(redraw)]
    gates = _gates((main, retest), 0.8)
    assert [g.passed for g in gates] == [False, False]
    stable = [row(f"I-{i}", "retest", a, level=1) for i, a in enumerate(draw)]
    relabel = [row(f"I-{i}", "main", a, level=1) for i, a in enumerate(draw)]
    assert all(g.passed for g in _gates((relabel, stable), 0.8))


def test_unknown_gate_keys_are_refused() -> None:
    result = retest_stability([row("I-1", "main", list(VALUES))], [], LABELS)
    with pytest.raises(ValueError, match="unknown threshold key"):
        evaluate_stability([result], {"retest.colour": 0.5})


def test_a_value_that_no_longer_occurs_is_not_evaluated() -> None:
    result = retest_stability(
        [row("I-1", "main", list(VALUES))], [row("I-1", "retest", list(VALUES))], LABELS
    )
    (gate,) = evaluate_stability([result], {"retest.level.3": 0.5})
    assert gate.passed is None and gate.value.n == 0


def test_the_report_section_lists_every_value_with_its_interval() -> None:
    from judges.reports.sections.label_stability import label_stability_md

    main = [row("I-1", "main", list(VALUES)), row("I-2", "main", None)]
    retest = [row("I-1", "retest", list(VALUES)), row("I-2", "retest", list(VALUES))]
    text = "\n".join(label_stability_md(retest_stability(main, retest, LABELS)))
    assert "| criterion_label | all | 1.00 [0.44, 1.00] n=3 | failed judgement: 1 |" in text
    for value in VALUES:
        assert f"| criterion_label | {value} | 1.00" in text


def test_a_constant_field_is_called_out() -> None:
    from judges.reports.sections.label_stability import label_stability_md

    same = ["Not Relevant"] * 3
    main = [row(f"I-{i}", "main", same) for i in range(3)]
    retest = [row(f"I-{i}", "retest", same) for i in range(3)]
    text = "\n".join(label_stability_md(retest_stability(main, retest, LABELS)))
    assert "level, criterion_label: every unit has one and the same value" in text


def test_the_baseline_gates_values_seen_often_enough() -> None:
    from judges.cli.baseline import MIN_UNITS_PER_VALUE, label_stability_gates

    often, rare = ["Not Relevant"] * 3, ["Somewhat Relevant", "Not Relevant", "Not Relevant"]
    main = [row(f"I-{i}", "main", often if i else rare) for i in range(MIN_UNITS_PER_VALUE)]
    retest = [row(f"I-{i}", "retest", often) for i in range(MIN_UNITS_PER_VALUE)]
    table = label_stability_gates(main + retest, LABELS)["label_stability"]

    def floor(kept: int, n: int) -> float:
        """The suggested floor: the count the next run keeps with probability 0.9975 under
        scipy's Jeffreys beta-binomial predictive, as a share, rounded down to 0.05."""
        count = scipy.stats.betabinom(n, kept + 0.5, n - kept + 0.5).ppf(0.0025)
        return math.floor(count / n * 20 + 1e-9) / 20

    # A floor an equally stable judge meets next time, never the point value (14/14 -> 0.6).
    assert table["retest.criterion_label.Not Relevant"] == floor(14, 14)
    assert "retest.criterion_label.Somewhat Relevant" not in table  # one unit: too few
    assert table["retest.criterion_label"] == floor(14, 15)  # 14 of 15 kept
    assert label_stability_gates(main + retest, {}) == {}
