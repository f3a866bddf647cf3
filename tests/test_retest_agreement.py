"""The retest-agreement regression gate: this version's main run against its own retest,
compared with the baseline's (judges.stats.regression.stability).

It must be quiet on an unchanged judge under every error structure (independent calls,
errors stuck to items, one facet of several, scores drifting a point), even against a
lucky baseline, and loud on a judge whose errors rise from 10% to 25% without leaning one
way: the case the detection and score gates see only some of the time.
"""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from judges.core.results import JudgementRow, read_jsonl
from judges.core.spec import PROMPTS_ROOT, load_catalog
from judges.sets.planted import load_planted_sets
from judges.stats.regression.family import holm, version_regressions
from judges.stats.regression.gates import Regression
from judges.stats.regression.stability import (
    RETEST_AGREEMENT,
    SEVERAL_DRAWS_SHARE,
    STABILITY_SHARE,
    Draws,
    level_cap,
    retest_agreement_regression,
)
from judges.verdicts.inputs import Sources
from judges.verdicts.regressions import regressions

ROOT = Path(__file__).resolve().parents[1]
MODEL = "local:smollm2-135m"

FACETS = ("a", "b", "c", "d")
TRUTH = 3  # every facet's right score, on a 1-5 scale


def _row(item: str, run: str, scores: dict[str, int], status: str = "ok") -> JudgementRow:
    return JudgementRow(
        judge="j",
        prompt_version="1",
        prompt_hash="h",
        model="local:m",
        item_id=item,
        category="cousin",
        control=False,
        run=run,
        status=status,
        verdict=dict(scores) if status == "ok" else None,
        expect=[],
        met=scores.get("a", TRUTH) <= TRUTH if status == "ok" else None,
    )


# An error model: (rng, items, error rate, hard items) -> one run's scores, items x facets.
Model = Callable[[np.random.Generator, int, float, np.ndarray], np.ndarray]


def _independent(rng: np.random.Generator, n: int, error: float, hard: np.ndarray) -> np.ndarray:
    wrong = rng.random((n, len(FACETS))) < error
    return TRUTH + wrong * rng.choice([-2, -1, 1, 2], size=wrong.shape)


def _drift(rng: np.random.Generator, n: int, error: float, hard: np.ndarray) -> np.ndarray:
    wrong = rng.random((n, len(FACETS))) < error
    return TRUTH + wrong * rng.choice([-1, 1], size=wrong.shape)


def _sticky(rng: np.random.Generator, n: int, error: float, hard: np.ndarray) -> np.ndarray:
    # Twice the error rate of the items are hard, each call on one wrong half the time.
    wrong = (rng.random((n, len(FACETS))) < 0.5) & hard[:, None]
    return TRUTH + wrong * rng.choice([-1, 1], size=wrong.shape)


def _one_facet(rng: np.random.Generator, n: int, error: float, hard: np.ndarray) -> np.ndarray:
    # A wrong call gets one facet of four wrong, at four times the rate per call.
    scores = np.full((n, len(FACETS)), TRUTH)
    wrong = rng.random(n) < min(1.0, len(FACETS) * error)
    facet = rng.integers(0, len(FACETS), size=n)
    scores[wrong, facet[wrong]] += rng.choice([-1, 1], size=int(wrong.sum()))
    return scores


MODELS: dict[str, Model] = {
    "independent": _independent,
    "drift": _drift,
    "item-sticky": _sticky,
    "one-facet": _one_facet,
}


def _draws(scores_main: np.ndarray, *scores_retest: np.ndarray) -> Draws:
    """A version's main run and its retest draws (repeats 0, 1, ...)."""

    def rows(scores: np.ndarray, run: str, repeat: int = 0) -> list[JudgementRow]:
        return [
            _row(f"I-{i:03d}", run, dict(zip(FACETS, map(int, s), strict=True))).model_copy(
                update={"repeat": repeat}
            )
            for i, s in enumerate(scores)
        ]

    retest = [row for k, scores in enumerate(scores_retest) for row in rows(scores, "retest", k)]
    return Draws(rows(scores_main, "main"), retest)


def _version(
    model: Model,
    rng: np.random.Generator,
    n: int,
    error: float,
    hard: np.ndarray,
    retest_draws: int = 1,
) -> Draws:
    return _draws(*(model(rng, n, error, hard) for _ in range(1 + retest_draws)))


def _gate(baseline: Draws, run: Draws) -> Regression:
    gate = retest_agreement_regression(baseline, run, "base", FACETS, None)
    assert gate is not None
    return gate


def test_the_p_value_is_the_exact_sign_flip_mid_p_of_the_per_item_agreement() -> None:
    """Against a brute-force enumeration of all 2^n sign flips of the paired differences in
    fields agreeing per item, written here from the definition."""
    rng = np.random.default_rng(4)
    hard = np.zeros(12, dtype=bool)
    base = _version(_independent, rng, 12, 0.15, hard)
    run = _version(_independent, rng, 12, 0.4, hard)
    gate = _gate(base, run)

    def agreeing(draws: Draws) -> np.ndarray:
        pairs = zip(draws.main, draws.retest, strict=True)
        return np.array(
            [
                (a.met == b.met) + sum(a.verdict[f] == b.verdict[f] for f in FACETS)  # type: ignore[index]
                for a, b in pairs
            ]
        )

    diffs = agreeing(run) - agreeing(base)
    observed = diffs.sum()
    sums = [np.dot(signs, diffs) for signs in itertools.product((-1, 1), repeat=len(diffs))]
    below = sum(s < observed for s in sums) / len(sums)
    equal = sum(s == observed for s in sums) / len(sums)
    assert gate.p_value == pytest.approx(below + equal / 2)
    # The least it could give (every changed item the bad way), for Tarone's rule.
    lowest = min(sums)
    assert gate.min_p == pytest.approx(sum(s == lowest for s in sums) / len(sums) / 2)
    assert gate.result is not None
    assert gate.result.value == pytest.approx(diffs.mean())  # type: ignore[union-attr]


def test_with_several_retest_draws_each_item_counts_every_pair_of_its_draws() -> None:
    """Two retest draws a side: per item, the fields alike summed over the three pairs of
    its draws (main with each retest, the retests with each other), against a brute-force
    enumeration of the sign flips; the change is shown per pair, the cap is alpha / 20."""
    rng = np.random.default_rng(5)
    hard = np.zeros(10, dtype=bool)
    base = _version(_independent, rng, 10, 0.15, hard, retest_draws=2)
    run = _version(_independent, rng, 10, 0.4, hard, retest_draws=2)
    gate = _gate(base, run)

    def agreeing(draws: Draws) -> np.ndarray:
        by_draw = [draws.main] + [
            [r for r in draws.retest if r.repeat == k] for k in range(draws.retest_draws)
        ]
        return np.array(
            [
                sum(
                    (a.met == b.met) + sum(a.verdict[f] == b.verdict[f] for f in FACETS)  # type: ignore[index]
                    for a, b in itertools.combinations([rows[i] for rows in by_draw], 2)
                )
                for i in range(10)
            ]
        )

    diffs = agreeing(run) - agreeing(base)
    sums = [np.dot(signs, diffs) for signs in itertools.product((-1, 1), repeat=len(diffs))]
    below = sum(s < diffs.sum() for s in sums) / len(sums)
    equal = sum(s == diffs.sum() for s in sums) / len(sums)
    assert gate.p_value == pytest.approx(below + equal / 2)
    assert gate.result is not None
    assert gate.result.value == pytest.approx(diffs.mean() / 3)  # type: ignore[union-attr]
    assert gate.level_cap == pytest.approx(0.05 / SEVERAL_DRAWS_SHARE)
    assert "3 pair(s) of its main run and 2 retest draw(s)" in gate.why


def test_versions_with_unequal_retest_draws_compare_the_draws_both_have() -> None:
    """A baseline recorded with one retest draw against a run with two: the run's second
    draw is left out of the comparison (two counts of one item must be draws of the same
    thing), and the cap is one draw's, alpha / 5."""
    rng = np.random.default_rng(6)
    hard = np.zeros(30, dtype=bool)
    base = _version(_drift, rng, 30, 0.1, hard, retest_draws=1)
    run = _version(_drift, rng, 30, 0.3, hard, retest_draws=2)
    first_only = Draws(run.main, [r for r in run.retest if r.repeat == 0])
    assert (run.retest_draws, first_only.retest_draws) == (2, 1)
    both, first = _gate(base, run), _gate(base, first_only)
    assert both.p_value == first.p_value and both.why == first.why
    assert both.level_cap == pytest.approx(0.05 / STABILITY_SHARE)


def test_an_item_missing_a_retest_draw_is_left_out_with_the_reason() -> None:
    rng = np.random.default_rng(8)
    hard = np.zeros(12, dtype=bool)
    base = _version(_independent, rng, 12, 0.1, hard, retest_draws=2)
    run = _version(_independent, rng, 12, 0.1, hard, retest_draws=2)
    dropped = Draws(run.main, [r for r in run.retest if (r.item_id, r.repeat) != ("I-003", 1)])
    gate = _gate(base, dropped)
    assert gate.excluded == {"missing from its main run or a retest draw": 1}
    assert gate.result is not None and gate.result.n == 11  # type: ignore[union-attr]


def test_without_a_retest_on_either_side_there_is_no_gate() -> None:
    rng = np.random.default_rng(1)
    hard = np.zeros(20, dtype=bool)
    both = _version(_independent, rng, 20, 0.1, hard)
    main_only = Draws(both.main, ())
    assert retest_agreement_regression(main_only, both, "b", FACETS, None) is None
    assert retest_agreement_regression(both, main_only, "b", FACETS, None) is None


def test_items_left_out_are_counted_by_reason() -> None:
    rng = np.random.default_rng(2)
    hard = np.zeros(10, dtype=bool)
    base = _version(_independent, rng, 10, 0.1, hard)
    run = _version(_independent, rng, 10, 0.1, hard)
    failed = run.retest[0].model_copy(update={"status": "unparseable", "verdict": None})
    run = Draws(run.main[:-1], [failed, *run.retest[1:]])
    gate = _gate(base, run)
    assert gate.excluded == {"failed judgement": 1, "missing from its main run or a retest draw": 1}
    assert gate.result is not None and gate.result.n == 8  # type: ignore[union-attr]


def test_a_steady_judge_agrees_with_itself_and_passes() -> None:
    scores = np.full((30, len(FACETS)), TRUTH)
    scores[:5, 0] = 1  # wrong on the same items, the same way, every time
    steady = _draws(scores, scores)
    gate = _gate(steady, steady)
    assert gate.passed is True and gate.p_value == 1.0 and gate.min_p == 1.0


@pytest.mark.parametrize("draws", [1, 2], ids=["one-retest-draw", "two-retest-draws"])
@pytest.mark.parametrize("name", list(MODELS))
def test_an_unchanged_judge_rarely_fails_even_against_a_lucky_baseline(
    name: str, draws: int
) -> None:
    """30 baselines of a 10% judge on 44 items, 20 honest re-records each: the gate fails
    at most about its cap (alpha / 5 with one retest draw a side, alpha / 20 with two), and
    the re-records of a baseline rarely fail together: three or more of 20 against at most
    two baselines of 30."""
    model = MODELS[name]
    rng = np.random.default_rng(sum(map(ord, name)) + 100 * (draws - 1))
    n, error = 44, 0.1
    together = failed = 0
    for _ in range(30):
        hard = rng.random(n) < 2 * error
        base = _version(model, rng, n, error, hard, draws)
        fails = sum(
            _gate(base, _version(model, rng, n, error, hard, draws)).passed is False
            for _ in range(20)
        )
        failed += fails
        together += fails >= 3
    rate = scipy.stats.binomtest(failed, 30 * 20).proportion_ci(0.95)
    assert rate.low <= level_cap(0.05, draws), (failed, rate)
    assert together <= 2, together


# Of 40 seeded worse judges, how many the gate alone must fail. Item-sticky errors fall on
# the same hard items every draw, so the items a worse judge adds weigh on detection and
# scores as much as on agreement: the gate alone fails about half (53 of 100 seeded), the
# detection and score gates the rest (the battery's item-sticky cases, 9-10 of 10).
CAUGHT_OF_40 = {"independent": 38, "drift": 38, "item-sticky": 12, "one-facet": 38}


@pytest.mark.parametrize("draws", [1, 2], ids=["one-retest-draw", "two-retest-draws"])
@pytest.mark.parametrize("name", list(MODELS))
def test_a_judge_whose_errors_rise_from_10_to_25_percent_fails(name: str, draws: int) -> None:
    """The same judge model, its error rate up from 10% to 25%: at 44 items (geval's size)
    the gate fails nearly every case (100 of 100 seeded) where the errors do not stick to
    items: at its alpha / 5 cap with one retest draw a side, and at alpha / 20 with two,
    whose three pairs of draws per item pay for the lower cap."""
    model = MODELS[name]
    rng = np.random.default_rng(sum(map(ord, name)) + 1 + 100 * (draws - 1))
    n = 44
    caught = 0
    for _ in range(40):
        base = _version(model, rng, n, 0.1, rng.random(n) < 0.2, draws)
        worse = _version(model, rng, n, 0.25, rng.random(n) < 0.5, draws)
        caught += _gate(base, worse).passed is False
    assert caught >= CAUGHT_OF_40[name], caught


def test_holm_never_fails_a_capped_gate_above_its_cap() -> None:
    """Holm over two gates lets the smaller p fail below 0.025; a gate capped at 0.01 with
    p = 0.02 passes, says at what level it would fail, and ends the step-down as a gate
    that does not fail does in Holm's (the family rejects a subset of what Holm rejects)."""
    capped = Regression(RETEST_AGREEMENT, "b", None, True, "w", {}, p_value=0.02, level_cap=0.01)
    other = Regression("regression.detection", "b", None, True, "w", {}, p_value=0.03)
    assert [g.passed for g in holm([capped, other])] == [
        True,
        True,
    ]
    assert "fails below 0.01" in holm([capped, other])[0].why
    strong = Regression(RETEST_AGREEMENT, "b", None, False, "w", {}, p_value=0.004, level_cap=0.01)
    assert [g.passed for g in holm([strong, other])] == [False, False]


def test_the_family_decides_the_gate_with_the_others() -> None:
    rng = np.random.default_rng(9)
    hard = np.zeros(44, dtype=bool)
    base = _version(_drift, rng, 44, 0.1, hard)
    worse = _version(_drift, rng, 44, 0.4, hard)
    gate = _gate(base, worse)
    family = version_regressions(list(base.main), list(worse.main), "b", FACETS, {}, also=(gate,))
    decided = next(g for g in family if g.name == RETEST_AGREEMENT)
    assert decided.passed is False and "Holm over the version's" in decided.why


# -- in the verdict, on the recorded product_identity runs --------------------------------


def _recorded_family(tmp_path: Path, not_fit: bool) -> Regression:
    """prompt 0.3.1's regression family against 0.3 as its baseline, both recorded on the
    embedded judge with their retests; 0.3's table accepted NOT FIT or not."""
    planted = tmp_path / "planted_sets"
    shutil.copytree(ROOT / "planted_sets", planted)
    accept = 'accept_not_fit = "at chance"\n' if not_fit else ""
    (planted / "product_identity" / "gates.toml").write_text(
        f'["{MODEL}"."0.3"]\n{accept}baseline = "0.3"\n\n["{MODEL}"."0.3.1"]\nbaseline = "0.3"\n'
    )
    catalog = load_catalog(PROMPTS_ROOT)
    loaded = load_planted_sets(planted, catalog)["product_identity"]
    spec = catalog["product_identity"]
    rows = {
        v: read_jsonl(ROOT / "reports" / "product_identity" / v / "results.jsonl")
        for v in ("0.3", "0.3.1")
    }
    notes: list[str] = []
    found = regressions(
        MODEL, "0.3.1", rows["0.3.1"], Sources(spec=spec, planted=loaded), rows,
        spec.config.dimensions, spec.config.flag, notes,
    )  # fmt: skip
    return next(g for g in found["regressions"] if g.name == RETEST_AGREEMENT)


def test_the_verdict_compares_the_recorded_retests_and_a_not_fit_baseline_decides_nothing(
    tmp_path: Path,
) -> None:
    """0.3's main and retest agree on 2.87 of 6 fields per item, 0.3.1's on 0.07 more
    (p = 0.58): no worse, so the gate passes, with its figures. With 0.3 accepted NOT FIT,
    as the embedded judge is, the gate is shown but decides nothing, as its stability
    floors are not inherited."""
    fit = _recorded_family(tmp_path / "fit", not_fit=False)
    assert fit.decides and fit.passed is True and fit.p_value == pytest.approx(0.5826, abs=1e-4)
    assert (
        "over 61 items" in fit.why
        and "of 6 (the verdict, 4 score dimension(s), the flag)" in fit.why
    )
    steady = _recorded_family(tmp_path / "not_fit", not_fit=True)
    assert steady.decides is False and steady.passed is None
    assert steady.why.startswith("decides nothing: prompt 0.3, the baseline, was accepted NOT FIT")


def test_a_verdict_only_judge_shows_the_gate_and_decides_by_detection(tmp_path: Path) -> None:
    """pairwise gives its verdict alone: each of its errors is a defect missed, which the
    detection gate tests on the same items. Against a baseline whose main and retest
    agreed on every item, a version whose two draws disagree on 80 of 326 (detection
    nearly the same: 286 against 293) is a run the gate alone would fail; it is shown with
    its p and decides nothing, and the family is detection's alone."""
    planted = tmp_path / "planted_sets"
    shutil.copytree(ROOT / "planted_sets", planted)
    (planted / "pairwise" / "gates.toml").write_text(
        f'["{MODEL}"."0.1"]\nbaseline = "0.1"\n\n["{MODEL}"."1.0"]\nbaseline = "0.1"\n'
    )
    (planted / "pairwise" / "set.toml").write_text('kind = "planted"\nretest = true\n')
    catalog = load_catalog(PROMPTS_ROOT)
    loaded = load_planted_sets(planted, catalog)["pairwise"]
    spec = catalog["pairwise"]
    items = [item.id for item in loaded.items]

    def rows(version: str, run: str, missed: set[int]) -> list[JudgementRow]:
        row = _row("", run, {}).model_copy(
            update={"judge": "pairwise", "prompt_version": version, "model": MODEL}
        )
        return [
            row.model_copy(update={"item_id": item, "met": i not in missed})
            for i, item in enumerate(items)
        ]

    steady = set(range(0, 326, 10))  # the same 33 misses in both draws
    before = rows("0.1", "main", steady) + rows("0.1", "retest", steady)
    after = rows("1.0", "main", set(range(0, 40))) + rows("1.0", "retest", set(range(40, 80)))
    notes: list[str] = []
    found = regressions(
        MODEL, "1.0", after, Sources(spec=spec, planted=loaded), {"0.1": before, "1.0": after},
        spec.config.dimensions, spec.config.flag, notes,
    )  # fmt: skip
    gate = next(g for g in found["regressions"] if g.name == RETEST_AGREEMENT)
    assert gate.decides is False and gate.passed is None
    assert gate.p_value is not None and gate.p_value < 0.0001
    assert gate.why.startswith("decides nothing: the judge gives its verdict alone")
    deciding = [g for g in found["regressions"] if g.passed is not None]
    assert deciding and all(g.passed for g in deciding), [g.why for g in deciding]
    assert all("Holm over the version's 1 regression gates" in g.why for g in deciding)
