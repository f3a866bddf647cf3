"""Unit tests for judges.stats.reliability.gates: each figure against a by-hand computation."""

from __future__ import annotations

import json
import math
import statistics
import tomllib
from pathlib import Path
from statistics import NormalDist
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judges.core.results import JudgementRow
from judges.sets.planted import Gates
from judges.sets.sme import SmeLabel, SmeLabelError, load_sme_labels
from judges.stats.estimates.floors import Gate
from judges.stats.estimates.intervals import Estimate, Rate, wilson
from judges.stats.reliability import gates as reliability

FLAG = "product_identity_match"
DIMS = ("faithfulness", "coverage", "coherence", "fluency")


def row(
    item_id: str,
    *,
    run: str = "main",
    repeat: int = 0,
    status: str = "ok",
    model: str = "local:smollm2-135m",
    **verdict: Any,
) -> JudgementRow:
    """A result row; failed rows carry no verdict, as the runner writes them."""
    return JudgementRow(
        judge="product_identity",
        prompt_version="0.3.1",
        prompt_hash="abc123",
        model=model,
        item_id=item_id,
        category="cousin",
        control=False,
        run=run,
        repeat=repeat,
        status=status,  # type: ignore[arg-type]
        verdict=verdict if status == "ok" else None,
        error=None if status == "ok" else "boom",
    )


def close(a: float | None, b: float, tol: float = 1e-9) -> bool:
    return a is not None and math.isclose(a, b, rel_tol=tol, abs_tol=tol)


def average_ranks(values: list[float]) -> list[float]:
    """1-based ranks, ties sharing the mean of their positions."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for m in range(i, j + 1):
            ranks[order[m]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman_by_hand(x: list[float], y: list[float]) -> float:
    rx, ry = average_ranks(x), average_ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy)


def quadratic_kappa_by_hand(a: list[float], b: list[float]) -> float:
    """1 - observed / chance squared disagreement (chance: every a against every b)."""
    n = len(a)
    observed = sum((x - y) ** 2 for x, y in zip(a, b, strict=True)) / n
    expected = sum((x - y) ** 2 for x in a for y in b) / (n * n)
    return 1 - observed / expected


def ordinal_alpha_by_hand(a: list[float], b: list[float]) -> float:
    """Krippendorff's ordinal alpha for two raters with no missing values."""
    values = a + b
    n = len(values)
    cats = sorted(set(values))
    count = {c: values.count(c) for c in cats}

    def delta2(c: float, k: float) -> float:
        lo, hi = min(c, k), max(c, k)
        s = sum(count[g] for g in cats if lo <= g <= hi) - (count[lo] + count[hi]) / 2
        return s * s

    # Each unit holds the ordered pairs (x, y) and (y, x), weighted 1 / (m_u - 1) = 1.
    d_observed = sum(2 * delta2(x, y) for x, y in zip(a, b, strict=True)) / n
    d_expected = sum(count[c] * count[k] * delta2(c, k) for c in cats for k in cats) / (n * (n - 1))
    return 1 - d_observed / d_expected


def mdd_by_hand(sd: float, n: int) -> float:
    z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
    return z * sd * math.sqrt(2 / n)


def json_ready(data: Any) -> None:
    """as_dict output must serialise strictly (no nan) and round-trip unchanged."""
    assert json.loads(json.dumps(data, allow_nan=False)) == data


def assert_within(estimate: Estimate) -> None:
    assert estimate.low <= estimate.value <= estimate.high


# --------------------------------------------------------------------------- noise floor


def noise_rows() -> list[JudgementRow]:
    scores = {
        "PI-01": [5, 5, 5],  # exact
        "PI-02": [4, 4, 4],  # exact
        "PI-03": [3, 5, 4],  # sd 1
    }
    flags = {"PI-01": [True, True, True], "PI-02": [False] * 3, "PI-03": [True, False, True]}
    rows = [
        row(item, run="noise", repeat=r, core_total=value, **{FLAG: flags[item][r]})
        for item, values in scores.items()
        for r, value in enumerate(values)
    ]
    # PI-04: a repeat failed; PI-05: one repeat lacks the dimension and the flag.
    rows += [
        row("PI-04", run="noise", repeat=0, core_total=2, **{FLAG: True}),
        row("PI-04", run="noise", repeat=1, core_total=2, **{FLAG: True}),
        row("PI-04", run="noise", repeat=2, status="transport"),
        row("PI-05", run="noise", repeat=0, core_total=6, **{FLAG: True}),
        row("PI-05", run="noise", repeat=1, core_total=6, **{FLAG: True}),
        row("PI-05", run="noise", repeat=2, **{FLAG: None}),
    ]
    # A main-run row of another item: not part of the noise floor.
    rows.append(row("PI-09", core_total=1))
    return rows


def test_noise_floor_by_hand() -> None:
    result = reliability.noise_floor(noise_rows(), ["core_total"], FLAG, n_items=20)
    assert (result.n_items, result.n_repeats, result.n_rows) == (5, 3, 15)
    assert result.n_errors == 1
    assert result.errors == {"transport": 1}
    assert result.mdd_items == 20

    dim = result.dimensions["core_total"]
    sds = [0.0, 0.0, statistics.stdev([3, 5, 4])]
    assert sds[2] == 1.0
    assert dim.mean_sd.n == 3
    assert close(dim.mean_sd.value, sum(sds) / 3)
    assert_within(dim.mean_sd)
    pooled = math.sqrt(sum(s * s for s in sds) / 3)
    assert close(dim.pooled_sd, pooled)
    assert close(dim.mdd, mdd_by_hand(pooled, 20))
    assert dim.exact_match == wilson(2, 3)
    # Error rows are counted, not dropped: 3 used + 2 excluded = 5 items.
    assert dim.excluded == {"failed repeat": 1, "missing value": 1}
    assert dim.mean_sd.n + sum(dim.excluded.values()) == result.n_items

    # PI-01, PI-02 stable; PI-03 flips; PI-04 failed; PI-05 has no flag on one repeat.
    assert result.flag_stability == wilson(2, 3)
    assert result.flag_excluded == {"failed repeat": 1, "missing value": 1}


def test_noise_floor_as_dict() -> None:
    data = reliability.noise_floor(noise_rows(), ["core_total"], FLAG, n_items=20).as_dict()
    json_ready(data)
    assert set(data) == {
        "n_items",
        "n_repeats",
        "n_rows",
        "n_errors",
        "errors",
        "mdd_items",
        "dimensions",
        "flag",
        "flag_stability",
        "flag_excluded",
    }
    dim = data["dimensions"]["core_total"]
    assert dim["mean_sd"]["value"] == 0.3333
    assert dim["exact_match"] == {**wilson(2, 3).as_dict()}
    assert dim["n_excluded"] == 2
    assert dim["mdd"] == round(mdd_by_hand(math.sqrt(1 / 3), 20), 4)
    assert data["flag"] == FLAG


def test_noise_floor_defaults_and_empty() -> None:
    result = reliability.noise_floor(noise_rows(), ["core_total"])
    assert result.mdd_items == 5  # the noise items, when no planted-set size is given
    assert result.flag_stability is None
    empty = reliability.noise_floor([row("PI-01", core_total=3)], ["core_total"])
    assert (empty.n_items, empty.n_repeats, empty.n_errors) == (0, 0, 0)
    assert empty.dimensions["core_total"].exact_match.n == 0
    assert math.isnan(empty.dimensions["core_total"].mdd)
    json_ready(empty.as_dict())


def test_noise_floor_single_repeat_is_excluded() -> None:
    rows = [row("PI-01", run="noise", core_total=3)]
    dim = reliability.noise_floor(rows, ["core_total"]).dimensions["core_total"]
    assert dim.excluded == {"fewer than 2 repeats": 1}
    assert dim.exact_match.n == 0


# --------------------------------------------------------------------------- test-retest


def retest_rows() -> tuple[list[JudgementRow], list[JudgementRow]]:
    main_scores = {"PI-01": 5, "PI-02": 4, "PI-03": 6, "PI-04": 3, "PI-05": 2}
    retest_scores = {"PI-01": 5, "PI-02": 5, "PI-03": 4, "PI-04": 3, "PI-05": 2}
    main_score = {"PI-01": 0.5, "PI-02": 0.25, "PI-03": 0.75, "PI-04": 1.0, "PI-05": 0.1}
    retest_score = {"PI-01": 0.5, "PI-02": 0.5, "PI-03": 0.75, "PI-04": 1.0}
    main_flags = {"PI-01": True, "PI-02": True, "PI-03": False, "PI-04": None, "PI-05": True}
    retest_flags = {"PI-01": True, "PI-02": False, "PI-03": False, "PI-04": True, "PI-05": True}
    main = [
        row(i, core_total=v, score=main_score[i], **{FLAG: main_flags[i]})
        for i, v in main_scores.items()
    ]
    retest = []
    for i, v in retest_scores.items():
        extra = {"score": retest_score[i]} if i in retest_score else {}
        retest.append(row(i, run="retest", core_total=v, **extra, **{FLAG: retest_flags[i]}))
    main += [
        row("PI-06", core_total=4),  # retest failed
        row("PI-07", core_total=4),  # never retested
        row("PI-09", status="unparseable"),  # both failed
    ]
    retest += [
        row("PI-06", run="retest", status="transport"),
        row("PI-08", run="retest", core_total=4),  # no main row
        row("PI-09", run="retest", status="unparseable"),
    ]
    return main, retest


def test_test_retest_by_hand() -> None:
    main, retest = retest_rows()
    result = reliability.test_retest(main, retest, ["core_total", "score"], FLAG)
    assert result.n_pairs == 5
    assert result.excluded == {
        "both failed": 1,
        "no main row": 1,
        "no retest row": 1,
        "retest failed": 1,
    }
    assert result.n_excluded == 4
    assert result.n_pairs + result.n_excluded == 9  # every item accounted for
    assert result.n_errors == 3
    assert result.errors == {
        "main": {"unparseable": 1},
        "retest": {"transport": 1, "unparseable": 1},
    }

    a, b = [5, 4, 6, 3, 2], [5, 5, 4, 3, 2]
    core = result.dimensions["core_total"]
    assert core.exact_match == wilson(3, 5)
    assert close(core.mean_abs_delta.value, (0 + 1 + 2 + 0 + 0) / 5)
    assert core.mean_abs_delta.n == 5
    assert_within(core.mean_abs_delta)
    assert core.kappa is not None
    assert close(core.kappa.value, quadratic_kappa_by_hand(a, b))
    assert close(core.spearman.value, spearman_by_hand(a, b))
    assert core.n_missing == 0

    # A float dimension: no kappa; PI-05's retest lacks it.
    score = result.dimensions["score"]
    assert score.kappa is None
    assert score.n_missing == 1
    assert score.exact_match == wilson(3, 4)
    assert close(score.mean_abs_delta.value, 0.25 / 4)

    # Flags: PI-01 same, PI-02 flips, PI-03 same, PI-04 missing in main, PI-05 same.
    assert result.flag_stability == wilson(3, 4)
    assert result.flag_missing == 1
    # Each side reads only its own run, so a whole results file can be passed to both.
    both = main + retest
    assert reliability.test_retest(both, both, ["core_total", "score"], FLAG) == result


def test_test_retest_as_dict() -> None:
    main, retest = retest_rows()
    data = reliability.test_retest(main, retest, ["core_total", "score"], FLAG).as_dict()
    json_ready(data)
    assert data["n_pairs"] == 5
    assert data["n_excluded"] == 4
    assert data["dimensions"]["core_total"]["mean_abs_delta"]["value"] == 0.6
    assert data["dimensions"]["score"]["kappa"] is None
    assert set(data["dimensions"]["core_total"]) == {
        "n_missing",
        "exact_match",
        "mean_abs_delta",
        "kappa",
        "spearman",
    }


def test_test_retest_rejects_mixed_sources_and_duplicates() -> None:
    main = [row("PI-01", core_total=3), row("PI-02", core_total=3, model="local:other")]
    with pytest.raises(ValueError, match="mixes judge/prompt version/model"):
        reliability.test_retest(main, [], ["core_total"])
    twice = [row("PI-01", core_total=3), row("PI-01", core_total=4)]
    with pytest.raises(ValueError, match="two rows for item 'PI-01'"):
        reliability.test_retest(twice, [], ["core_total"])


@st.composite
def runs(draw: st.DrawFn) -> list[JudgementRow]:
    n = draw(st.integers(min_value=1, max_value=12))
    rows = []
    for i in range(n):
        verdict = {
            "core_total": draw(st.integers(min_value=0, max_value=9)),
            "score": draw(st.floats(min_value=0, max_value=1, allow_nan=False)),
            FLAG: draw(st.sampled_from([True, False, None])),
        }
        rows.append(row(f"PI-{i:02d}", **verdict))
    return rows


@settings(max_examples=40, deadline=None)
@given(main=runs())
def test_identical_runs_agree_perfectly(main: list[JudgementRow]) -> None:
    retest = [r.model_copy(update={"run": "retest"}) for r in main]
    result = reliability.test_retest(main, retest, ["core_total", "score"], FLAG)
    assert result.n_pairs == len(main)
    for dim in result.dimensions.values():
        assert dim.exact_match.rate == 1.0
        assert dim.mean_abs_delta.value == 0.0
    core = result.dimensions["core_total"]
    assert core.kappa is not None
    if len({r.verdict["core_total"] for r in main if r.verdict}) > 1:
        assert close(core.kappa.value, 1.0)
    else:
        assert math.isnan(core.kappa.value)  # one category: no chance disagreement
    stability = result.flag_stability
    assert stability is not None
    assert stability.n == sum(r.verdict is not None and r.verdict[FLAG] is not None for r in main)
    if stability.n:
        assert stability.rate == 1.0


# --------------------------------------------------------------------------- panel


def panel_rows() -> tuple[list[JudgementRow], list[JudgementRow]]:
    primary = [
        row("GE-01", **dict(zip(DIMS, [5, 4, 4, 5], strict=True)), overall=4.5, **{FLAG: True}),
        row("GE-02", **dict(zip(DIMS, [3, 3, 3, 3], strict=True)), overall=3, **{FLAG: False}),
        row("GE-03", **dict(zip(DIMS, [2, 2, 2, 2], strict=True)), overall=2.0, **{FLAG: True}),
        row("GE-04", **dict(zip(DIMS, [4, 4, 4, 4], strict=True)), overall=4.0),
    ]
    cross = [
        # No overall field: the mean of the dimensions, 4.25.
        row("GE-01", run="panel", **dict(zip(DIMS, [5, 4, 3, 5], strict=True)), **{FLAG: False}),
        row(
            "GE-02",
            run="panel",
            **dict(zip(DIMS, [5, 5, 4, 4], strict=True)),
            overall=4.5,
            **{FLAG: False},
        ),
        row("GE-03", run="panel", **dict(zip(DIMS, [2, 3, 2, 2], strict=True)), overall=2.5),
        row("GE-04", run="panel", status="cost_cap"),
    ]
    return primary, cross


def test_panel_by_hand() -> None:
    primary, cross = panel_rows()
    result = reliability.panel_agreement(
        primary,
        cross,
        DIMS,
        primary_label="local:smollm2-135m T=0.3",
        cross_label="local:smollm2-135m greedy T=0",
        flag=FLAG,
    )
    # Listing the aggregate as a dimension (as geval's judge.toml does) changes nothing.
    with_overall = reliability.panel_agreement(
        primary,
        cross,
        [*DIMS, "overall"],
        primary_label="local:smollm2-135m T=0.3",
        cross_label="local:smollm2-135m greedy T=0",
        flag=FLAG,
    )
    assert with_overall == result
    assert result.primary_label == "local:smollm2-135m T=0.3"
    assert result.cross_label == "local:smollm2-135m greedy T=0"
    assert result.n_pairs == 3
    assert result.excluded == {"cross failed": 1}
    assert (result.n_errors, result.errors) == (1, {"primary": {}, "cross": {"cost_cap": 1}})

    # Within one point: GE-01 4/4, GE-02 2/4 (3 vs 5 twice), GE-03 4/4.
    assert result.agreement == wilson(10, 12)
    assert result.agreement_by_dimension == {
        "faithfulness": wilson(2, 3),
        "coverage": wilson(2, 3),
        "coherence": wilson(3, 3),
        "fluency": wilson(3, 3),
    }

    overalls = {item.item_id: (item.primary, item.cross) for item in result.items}
    assert overalls == {"GE-01": (4.5, 4.25), "GE-02": (3.0, 4.5), "GE-03": (2.0, 2.5)}
    # GE-03 differs by exactly 0.5: not more than the threshold, so not contested.
    assert result.contested == ["GE-02"]
    assert result.contested_rate == wilson(1, 3)
    assert close(result.mean_overall["primary"].value, (4.5 + 3 + 2) / 3)
    assert close(result.mean_overall["cross"].value, (4.25 + 4.5 + 2.5) / 3)
    assert close(result.overall_difference.value, (9.5 - 11.25) / 3)
    assert result.contested_overall is True

    # Share flagged False: primary GE-02 of 3; cross GE-01, GE-02 of 2 (GE-03 has no flag).
    assert result.flag_rate == {"primary": wilson(1, 3), "cross": wilson(2, 2)}
    assert result.flag_agreement == wilson(1, 2)


def test_panel_threshold_and_as_dict() -> None:
    primary, cross = panel_rows()
    result = reliability.panel_agreement(
        primary, cross, DIMS, primary_label="p", cross_label="c", contested_threshold=0.2
    )
    assert result.contested == ["GE-01", "GE-02", "GE-03"]
    assert result.flag_rate == {}
    assert result.flag_agreement is None
    data = result.as_dict()
    json_ready(data)
    assert data["contested"] == ["GE-01", "GE-02", "GE-03"]
    assert data["items"][0] == {
        "item_id": "GE-01",
        "primary": 4.5,
        "cross": 4.25,
        "difference": 0.25,
        "contested": True,
    }
    assert data["overall_difference"]["value"] == round((9.5 - 11.25) / 3, 4)
    assert (data["primary_label"], data["cross_label"]) == ("p", "c")
    with pytest.raises(ValueError, match="contested_threshold"):
        reliability.panel_agreement(
            primary, cross, DIMS, primary_label="p", cross_label="c", contested_threshold=-1
        )


def test_panel_overall_missing_is_counted() -> None:
    primary = [row("GE-01", faithfulness=4)]  # no coverage, no overall
    cross = [row("GE-01", run="panel", faithfulness=4, coverage=4)]
    result = reliability.panel_agreement(
        primary, cross, ["faithfulness", "coverage"], primary_label="p", cross_label="c"
    )
    assert result.overall_missing == 1
    assert result.items == ()
    assert result.agreement == wilson(1, 1)
    assert result.contested_overall is None


# --------------------------------------------------------------------------- SME


def sme_rows() -> list[JudgementRow]:
    def verdict(fa: int, co: int, cr: int, flag: bool | None) -> dict[str, Any]:
        parts = {"factual_accuracy": fa, "completeness": co, "causal_reasoning": cr}
        return {**parts, "core_total": fa + co + cr, FLAG: flag}

    return [
        row("Q-01", **verdict(3, 3, 3, True)),  # 9
        row("Q-02", **verdict(1, 2, 2, True)),  # 5
        row("Q-03", **verdict(1, 1, 2, False)),  # 4
        row("Q-04", status="unparseable"),
        row("Q-06", **verdict(2, 2, 2, True)),
        row("Q-07", **verdict(3, 2, 3, True)),  # 8
        row("Q-99", **verdict(3, 3, 3, True)),  # not labelled
    ]


def sme_labels() -> list[SmeLabel]:
    def label(item_id: str, **scores: Any) -> SmeLabel:
        return SmeLabel(item_id=item_id, labeller="sme-1", method="blind", **scores)

    return [
        label("Q-01", core_total=9, **{FLAG: True}),
        # Components only: core_total derived as 2 + 2 + 1 = 5.
        label("Q-02", factual_accuracy=2, completeness=2, causal_reasoning=1, **{FLAG: True}),
        label("Q-03", core_total=6, **{FLAG: True}),  # judge 4: a disagreement of 2
        label("Q-04", core_total=3),  # judge row failed
        label("Q-05", core_total=3),  # never judged
        label("Q-06", factual_accuracy=2, note_only=True),  # incomplete: no core_total
        label("Q-07", core_total=7),
    ]


def test_sme_calibration_by_hand() -> None:
    result = reliability.sme_calibration(sme_rows(), sme_labels(), "core_total", flag=FLAG)
    judge, human = [9.0, 5.0, 4.0, 8.0], [9.0, 5.0, 6.0, 7.0]
    assert (result.n_labels, result.n_pairs) == (7, 4)
    assert result.excluded == {
        "human missing value": 1,
        "judge failed": 1,
        "no judge row": 1,
    }
    assert result.n_pairs + result.n_excluded == result.n_labels
    assert (result.n_errors, result.errors) == (1, {"unparseable": 1})
    assert close(result.spearman.value, spearman_by_hand(judge, human))
    assert result.kappa is not None
    assert close(result.kappa.value, quadratic_kappa_by_hand(judge, human))
    assert close(result.alpha.value, ordinal_alpha_by_hand(judge, human))
    assert result.spearman.n == result.kappa.n == result.alpha.n == 4
    assert close(result.mean_difference.value, (0 + 0 - 2 + 1) / 4)
    # Q-01 agree, Q-02 agree, Q-03 disagree; Q-07 has no human flag.
    assert result.flag_agreement == wilson(2, 3)
    assert [d.as_dict() for d in result.disagreements] == [
        {"item_id": "Q-03", "judge": 4.0, "human": 6.0, "labeller": "sme-1"}
    ]
    data = result.as_dict()
    json_ready(data)
    assert data["n_excluded"] == 3
    assert data["disagreements"][0]["item_id"] == "Q-03"


def test_sme_custom_derivation_and_duplicate_labels() -> None:
    rows = [row("Q-01", a=1, b=2), row("Q-02", a=2, b=2), row("Q-03", a=0, b=1)]
    labels = [
        SmeLabel(item_id="Q-01", labeller="x", method="m", a=1, b=1),
        SmeLabel(item_id="Q-02", labeller="x", method="m", total=4),
        SmeLabel(item_id="Q-03", labeller="x", method="m", total=3),
    ]
    result = reliability.sme_calibration(rows, labels, "total", derived={"total": ("a", "b")})
    assert result.n_pairs == 3
    assert [(d.item_id, d.judge, d.human) for d in result.disagreements] == [("Q-03", 1.0, 3.0)]
    assert result.flag_agreement is None
    twice = [*labels, SmeLabel(item_id="Q-01", labeller="y", method="m", total=2)]
    with pytest.raises(ValueError, match="several labels"):
        reliability.sme_calibration(rows, twice, "total")


def test_load_sme_labels(tmp_path: Path) -> None:
    good = tmp_path / "sme.jsonl"
    good.write_text(
        '{"item_id": "Q-01", "labeller": "sme-1", "method": "blind", "core_total": 7}\n'
        "\n"
        '{"item_id": "Q-02", "labeller": "sme-1", "method": "blind", "note": "x",'
        ' "factual_accuracy": 1, "completeness": 2, "causal_reasoning": 3}\n',
        encoding="utf-8",
    )
    labels = load_sme_labels(good)
    assert [label.item_id for label in labels] == ["Q-01", "Q-02"]
    assert labels[0].scores == {"core_total": 7}
    assert labels[1].note == "x"

    cases = {
        "not JSON": '{"item_id": "Q-01",',
        "expected a JSON object": "[1, 2]",
        "field 'labeller'": '{"item_id": "Q-01", "method": "blind"}',
        "already labelled on line 1": (
            '{"item_id": "Q-01", "labeller": "a", "method": "m"}\n'
            '{"item_id": "Q-01", "labeller": "a", "method": "m"}'
        ),
    }
    for message, text in cases.items():
        bad = tmp_path / "bad.jsonl"
        bad.write_text(text + "\n", encoding="utf-8")
        line = text.count("\n") + 1
        with pytest.raises(SmeLabelError, match=rf"bad\.jsonl:{line}: .*{message}"):
            load_sme_labels(bad)


# --------------------------------------------------------------------------- gates


def by_name(gates: list[reliability.Gate]) -> dict[str, bool | None]:
    return {gate.name: gate.passed for gate in gates}


def test_noise_floor_gates_from_toml() -> None:
    table = tomllib.loads(
        'noise_floor = { "min_exact_match.core_total" = 0.6, "max_sd.core_total" = 0.3,'
        ' "min_flag_stability" = 0.5 }'
    )
    gates_model = Gates.model_validate(table)
    result = reliability.noise_floor(noise_rows(), ["core_total"], FLAG)
    gates = reliability.evaluate_reliability("noise_floor", result, gates_model.noise_floor)
    # exact 2/3 >= 0.6 passes; mean sd 1/3 > 0.3 fails; flag stability 2/3 >= 0.5 passes.
    assert by_name(gates) == {
        "noise_floor.max_sd.core_total": False,
        "noise_floor.min_exact_match.core_total": True,
        "noise_floor.min_flag_stability": True,
    }
    sd_gate = gates[0]
    assert isinstance(sd_gate, Gate)
    # Value, bootstrap interval, n and threshold all appear in the description.
    low, high = sd_gate.value.low, sd_gate.value.high
    assert sd_gate.describe() == (
        f"noise_floor.max_sd.core_total: 0.33 [{low:.2f}, {high:.2f}] n=3 (gate <= 0.30)"
    )
    assert isinstance(gates[1], Gate)
    data = sd_gate.as_dict()
    json_ready(data)
    assert data["value"] == 0.3333
    assert (data["n"], data["threshold"], data["direction"], data["passed"]) == (
        3,
        0.3,
        "<=",
        False,
    )


def test_test_retest_and_sme_gates() -> None:
    main, retest = retest_rows()
    result = reliability.test_retest(main, retest, ["core_total", "score"], FLAG)
    kappa = quadratic_kappa_by_hand([5, 4, 6, 3, 2], [5, 5, 4, 3, 2])
    gates = reliability.evaluate_reliability(
        "test_retest",
        result,
        {
            "min_exact_match.core_total": 0.6,
            "max_mean_abs_delta.core_total": 0.5,
            "min_kappa.core_total": kappa - 0.01,
            "min_flag_stability": 0.8,
            "max_mean_abs_delta.score": 0.1,
        },
    )
    assert by_name(gates) == {
        "test_retest.max_mean_abs_delta.core_total": False,  # 0.6 > 0.5
        "test_retest.max_mean_abs_delta.score": True,  # 0.0625
        "test_retest.min_exact_match.core_total": True,  # 0.6 >= 0.6
        "test_retest.min_flag_stability": False,  # 0.75 < 0.8
        "test_retest.min_kappa.core_total": True,
    }
    with pytest.raises(ValueError, match=r"'min_kappa\.score'.*integer"):
        reliability.evaluate_reliability("test_retest", result, {"min_kappa.score": 0.5})

    sme = reliability.sme_calibration(sme_rows(), sme_labels(), "core_total")
    rho = spearman_by_hand([9, 5, 4, 8], [9, 5, 6, 7])
    gates = reliability.evaluate_reliability(
        "sme", sme, {"min_spearman": rho + 0.01, "min_kappa": 0.0}
    )
    assert by_name(gates) == {"sme.min_kappa": True, "sme.min_spearman": False}


def test_panel_gates() -> None:
    primary, cross = panel_rows()
    result = reliability.panel_agreement(primary, cross, DIMS, primary_label="p", cross_label="c")
    gates = reliability.evaluate_reliability(
        "panel", result, {"min_adjacent_agreement": 0.8, "max_contested_rate": 0.25}
    )
    # 10/12 agreement passes; 1/3 contested exceeds 0.25.
    assert by_name(gates) == {
        "panel.max_contested_rate": False,
        "panel.min_adjacent_agreement": True,
    }


def test_unknown_keys_and_wrong_sections() -> None:
    result = reliability.noise_floor(noise_rows(), ["core_total"])
    with pytest.raises(ValueError) as caught:
        reliability.evaluate_reliability("noise_floor", result, {"min_exact_match.coverage": 0.5})
    message = str(caught.value)
    assert "'min_exact_match.coverage'" in message
    assert "max_sd.core_total" in message and "min_exact_match.core_total" in message
    # No flag was given, so flag stability cannot be gated.
    with pytest.raises(ValueError, match="min_flag_stability"):
        reliability.evaluate_reliability("noise_floor", result, {"min_flag_stability": 0.9})
    with pytest.raises(ValueError, match="unknown reliability section 'noise'"):
        reliability.evaluate_reliability("noise", result, {})
    with pytest.raises(ValueError, match="takes a Panel, got NoiseFloor"):
        reliability.evaluate_reliability("panel", result, {})
    with pytest.raises(ValueError, match="must be a number"):
        reliability.evaluate_reliability("noise_floor", result, {"max_sd.core_total": "1"})  # type: ignore[dict-item]
    assert reliability.evaluate_reliability("noise_floor", result, {}) == []


def test_metric_gate_undefined_and_empty() -> None:
    undefined = Gate("x", Estimate(float("nan"), float("nan"), float("nan"), 4), 0.5, True)
    assert undefined.passed is None
    assert "undefined" in undefined.describe()
    empty = Gate("y", wilson(0, 0), 0.5, False)
    assert empty.passed is None
    assert "no data" in empty.describe()
    no_threshold = Gate("z", Rate(1, 2, 0.5, 0.1, 0.9), None, True)
    assert no_threshold.passed is None
    assert no_threshold.describe() == "z: 1/2 = 0.50 [0.10, 0.90] n=2 (no threshold)"
    json_ready(undefined.as_dict())
    assert Gate("r", wilson(3, 4), 0.75, True).passed is True
