"""Time the corpus report's statistics at scale against a plain numpy loop baseline.

Run by hand: python benchmarks/bench_corpus.py [--systems 25 --items 2000 --rounds 3 ...]
          or python benchmarks/bench_corpus.py --quick   (seconds; what the test suite runs)

The corpus is synthetic and in memory (a `judges.corpus.rows.Corpus` of `Judgement` rows,
no files): by default 25 systems x 2,000 items x 2 judges = 100,000 judgements on a 0-1
preference scale, with an item effect every system shares, a per-system effect the second
judge shifts a little, and a few error rows (NaN cells; one system errs more often).

Three things are timed in the same process on the same corpus, interleaved round by round
(judges, same figures, baseline, judges, ...) so that a change of load hits all alike;
wall time by `time.perf_counter`, median of the rounds:

* judges: `judges.corpus.report.build_report(corpus)`, the whole report from the rows
  (score matrices, system scores with intervals, every paired difference with Holm, P(first)
  by the item bootstrap, the change between the two judges with its rank correlations,
  verdict agreement and kappa, the review queue). Its first step, `score_matrices` (rows ->
  arrays), is also timed alone.
* judges, same figures: only the figures the baseline computes, from the score matrices
  (built untimed, as the baseline's long arrays are), by the functions `build_report` calls
  (`judges.corpus.estimates`): the like-for-like ratio.
* baseline: the naive way, from the rows as long arrays (system, item, judge, score): a
  group-by per (judge, system) with boolean masks for the mean and its t interval, a pivot,
  one `scipy.stats.ttest_rel` per pair of systems in a Python loop with Holm by hand, a
  Python loop over the bootstrap resamples of items (one `np.nanmean` per resample) for
  P(first), and Spearman's rho between the two judges' system means from ranks.

The baseline is numpy only, plus `scipy.stats` for the t distribution: pandas is installed
here but is not a declared dependency of the project (pyproject.toml), so it is not used.

The figures must agree: means, standard errors, t intervals, paired differences and their
p-values (raw and Holm) and Spearman's rho to 1e-9; P(first) within Monte Carlo tolerance
(the baseline draws its resamples from the same seeded generator in the same order as
`resampled_means`, so with today's code the two agree exactly, which is printed too).
Nothing asserts on time: the numbers are printed, not judged.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import scipy.stats

# Allow running from a checkout without installing the package.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judges.corpus.estimates import (
    CONFIDENCE,
    N_RESAMPLES,
    paired_differences,
    probability_first,
    resampled_means,
    system_scores,
)
from judges.corpus.manifest import CorpusManifest
from judges.corpus.report import CorpusReport, build_report
from judges.corpus.rows import Corpus, CorpusItem, Judgement
from judges.corpus.table import ScoreMatrix, score_matrices

JUDGES = ("judge-a", "judge-b")
TOLERANCE = 1e-9
T = TypeVar("T")


# --- the corpus ----------------------------------------------------------------------------


def synthetic_corpus(n_systems: int, n_items: int, seed: int) -> Corpus:
    """Scores in (0, 1): logistic(system + item + noise); the item effect is shared by every
    system and both judges. ~0.5% error rows, 5% for the last system."""
    rng = np.random.default_rng(seed)
    manifest = CorpusManifest.model_validate(
        {
            "name": "bench-corpus",
            "source": "synthetic (benchmarks/bench_corpus.py)",
            "licence": "none (synthetic)",
            "scale": {"low": 0, "high": 1, "verdict": "side", "midpoint": 0.5, "factor": 100},
            "judges": {name: {"description": f"synthetic {name}"} for name in JUDGES},
            "seed": seed,
        }
    )
    systems = [f"system-{s:03d}" for s in range(n_systems)]
    item_ids = [f"item-{i:05d}" for i in range(n_items)]
    system_effect = rng.normal(0.0, 0.3, n_systems)
    item_effect = rng.normal(0.0, 1.0, n_items)
    error_rate = np.full((n_systems, 1), 0.005)
    error_rate[-1] = 0.05
    rows: list[Judgement] = []
    for number, judge in enumerate(JUDGES):
        effect = system_effect + number * rng.normal(0.0, 0.05, n_systems)
        logit = effect[:, None] + item_effect[None, :] + rng.normal(0.0, 0.5, (n_systems, n_items))
        scores = 1.0 / (1.0 + np.exp(-logit))
        errors = rng.random((n_systems, n_items)) < error_rate
        for s, system in enumerate(systems):
            for i, item in enumerate(item_ids):
                if errors[s, i]:
                    rows.append(Judgement(system=system, item=item, judge=judge, error="timeout"))
                else:
                    score = float(scores[s, i])
                    rows.append(Judgement(system=system, item=item, judge=judge, score=score))
    items = tuple(CorpusItem(id=item) for item in item_ids)
    return Corpus(Path("<in memory>"), manifest, items, (), tuple(rows), (), ())


@dataclass(frozen=True)
class LongRows:
    """The rows as a long table: one entry per judgement, NaN score for an error row."""

    systems: tuple[str, ...]
    n_items: int
    system: np.ndarray
    item: np.ndarray
    judge: np.ndarray
    score: np.ndarray


def long_rows(corpus: Corpus) -> LongRows:
    systems = corpus.systems
    where = {s: k for k, s in enumerate(systems)}
    columns = {item.id: k for k, item in enumerate(corpus.items)}
    judges = {name: k for k, name in enumerate(corpus.manifest.judges)}
    rows = corpus.judgements
    return LongRows(
        systems,
        len(corpus.items),
        np.array([where[j.system] for j in rows]),
        np.array([columns[j.item] for j in rows]),
        np.array([judges[j.judge] for j in rows]),
        np.array([math.nan if j.score is None else float(j.score) for j in rows]),
    )


# --- the baseline --------------------------------------------------------------------------


@dataclass(frozen=True)
class Figures:
    """judge -> system -> (mean, standard error, low, high, n, errors)."""

    scores: dict[str, dict[str, tuple[float, float, float, float, int, int]]]
    # judge -> (better, worse) -> (difference, standard error, n, p, p Holm)
    differences: dict[str, dict[tuple[str, str], tuple[float, float, int, float, float]]]
    first: dict[str, dict[str, float]]  # judge -> system -> P(first)
    spearman: float  # between the two judges' system means


def holm_by_hand(p: np.ndarray) -> np.ndarray:
    order = np.argsort(p)
    m = p.size
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted


def baseline(rows: LongRows, n_resamples: int, seed: int) -> Figures:
    t_quantile = scipy.stats.t.ppf
    scores: dict[str, dict[str, tuple[float, float, float, float, int, int]]] = {}
    differences: dict[str, dict[tuple[str, str], tuple[float, float, int, float, float]]] = {}
    first: dict[str, dict[str, float]] = {}
    for j, judge in enumerate(JUDGES):
        # Group by system: one boolean mask per (judge, system).
        of_judge = rows.judge == j
        judged = [s for s in range(len(rows.systems)) if np.any(of_judge & (rows.system == s))]
        scores[judge] = {}
        for s in judged:
            group = rows.score[of_judge & (rows.system == s)]
            x = group[~np.isnan(group)]
            mean, se = float(x.mean()), float(x.std(ddof=1) / np.sqrt(x.size))
            half = float(t_quantile(0.5 + CONFIDENCE / 2, x.size - 1)) * se
            errors = int(group.size - x.size)
            scores[judge][rows.systems[s]] = (mean, se, mean - half, mean + half, x.size, errors)
        # Pivot to systems x items, then every pair in a Python loop.
        wide = np.full((len(rows.systems), rows.n_items), np.nan)
        wide[rows.system[of_judge], rows.item[of_judge]] = rows.score[of_judge]
        wide = wide[judged]
        names = [rows.systems[s] for s in judged]
        pairs, found = [], []
        for a, b in combinations(range(len(names)), 2):
            both = ~np.isnan(wide[a]) & ~np.isnan(wide[b])
            d = wide[a][both] - wide[b][both]
            p = float(scipy.stats.ttest_rel(wide[a][both], wide[b][both]).pvalue)
            sign = 1.0 if d.mean() >= 0 else -1.0
            pairs.append((names[a], names[b]) if sign > 0 else (names[b], names[a]))
            se = float(d.std(ddof=1) / np.sqrt(d.size))
            found.append((sign * float(d.mean()), se, d.size, p))
        holm = holm_by_hand(np.array([f[3] for f in found]))
        differences[judge] = {
            pair: (*f, float(q)) for pair, f, q in zip(pairs, found, holm, strict=True)
        }
        # P(first): one resample of items per iteration, the same draws as resampled_means.
        rng = np.random.default_rng(seed)
        share = np.zeros(len(names))
        for _ in range(n_resamples):
            columns = rng.integers(0, rows.n_items, rows.n_items)
            means = np.nanmean(wide[:, columns], axis=1)
            leaders = means == np.nanmax(means)
            share += leaders / leaders.sum()
        first[judge] = dict(zip(names, (share / n_resamples).tolist(), strict=True))
    common = [s for s in scores[JUDGES[0]] if s in scores[JUDGES[1]]]
    ranks = [
        np.argsort(np.argsort([scores[judge][s][0] for s in common])).astype(float)
        for judge in JUDGES
    ]
    spearman = float(np.corrcoef(ranks[0], ranks[1])[0, 1])
    return Figures(scores, differences, first, spearman)


# --- judges --------------------------------------------------------------------------------


def main_matrices(corpus: Corpus) -> list[ScoreMatrix]:
    return [m for (_, run), m in score_matrices(corpus).items() if run == 0]


def same_figures(mains: list[ScoreMatrix], manifest: CorpusManifest) -> None:
    """What the baseline computes, by the functions build_report calls, from the matrices."""
    scale = manifest.scale
    for m in mains:
        system_scores(m.systems, m.scores, m.errors, scale, manifest.seed)
        paired_differences(
            m.systems, m.scores, scale.higher_is_better, scale.high - scale.low, manifest.seed
        )
        probability_first(
            resampled_means(m.scores, N_RESAMPLES, manifest.seed), scale.higher_is_better
        )
    before, after = (np.nanmean(m.scores, axis=1) for m in mains)
    scipy.stats.spearmanr(before, after)


def report_figures(report: CorpusReport) -> Figures:
    scores = {
        summary.judge: {
            s.system: (
                s.score.mean, s.score.standard_error, s.score.low, s.score.high, s.score.n,
                s.errors,
            )
            for s in summary.scores
        }
        for summary in report.judges
    }  # fmt: skip
    differences = {
        summary.judge: {
            (d.better, d.worse): (
                d.difference.mean, d.difference.standard_error, d.difference.n, d.p_value,
                d.p_holm,
            )
            for d in summary.differences
        }
        for summary in report.judges
    }  # fmt: skip
    first = {summary.judge: dict(summary.first) for summary in report.judges}
    assert report.change is not None, "two judges: the report compares them"
    return Figures(scores, differences, first, report.change.spearman.value)


# --- the comparison ------------------------------------------------------------------------


Table = Mapping[Any, tuple[float, ...]]


def gap(a: float, b: float) -> float:
    """|a - b|; two NaNs (a figure undefined on both sides) agree, one NaN does not."""
    if math.isnan(a) or math.isnan(b):
        return 0.0 if math.isnan(a) and math.isnan(b) else math.inf
    return abs(a - b)


def worst_gap(ours: Table, theirs: Table) -> float:
    """The largest gap over the same keys; inf when the keys differ."""
    if ours.keys() != theirs.keys():
        return math.inf
    return max(
        (gap(a, b) for key in ours for a, b in zip(ours[key], theirs[key], strict=True)),
        default=0.0,
    )


def as_rows(shares: dict[str, float]) -> dict[str, tuple[float]]:
    return {system: (share,) for system, share in shares.items()}


def agreement(judged: Figures, base: Figures, report: CorpusReport, n_resamples: int) -> bool:
    checks: list[tuple[str, float, float]] = []
    for judge in JUDGES:
        worst = worst_gap(judged.scores[judge], base.scores[judge])
        checks.append((f"{judge} system means, SEs, t intervals, n, errors", worst, TOLERANCE))
        worst = worst_gap(judged.differences[judge], base.differences[judge])
        checks.append((f"{judge} paired differences, SEs, n, p, p Holm", worst, TOLERANCE))
        # Two independent bootstraps would differ by about sqrt(2 p (1 - p) / R): allow 5 of
        # those (at the largest p(1 - p)) plus one resample's worth.
        pooled = [(p + base.first[judge].get(s, p)) / 2 for s, p in judged.first[judge].items()]
        spread = max((p * (1 - p) for p in pooled), default=0.0)
        tolerance = 5 * math.sqrt(2 * spread / n_resamples) + 1 / n_resamples
        worst = worst_gap(as_rows(judged.first[judge]), as_rows(base.first[judge]))
        checks.append((f"{judge} P(first)", worst, tolerance))
    # The change recomputes each judge's P(first) on the same matrices with the same seed.
    assert report.change is not None
    again = (report.change.first_before, report.change.first_after)
    worst = max(
        worst_gap(as_rows(shares), as_rows(judged.first[judge]))
        for judge, shares in zip(JUDGES, again, strict=True)
    )
    checks.append(("the change's P(first) = the summaries' (both in the report)", worst, TOLERANCE))
    worst = gap(judged.spearman, base.spearman)
    checks.append(("Spearman's rho, judge-a vs judge-b", worst, TOLERANCE))
    ok = True
    for name, worst, tolerance in checks:
        verdict = "ok" if worst <= tolerance else "MISMATCH"
        ok = ok and verdict == "ok"
        print(f"  {name}: largest gap {worst:.2e} (tolerance {tolerance:.1e}) {verdict}")
    exact = all(judged.first[j] == base.first[j] for j in JUDGES)
    print(f"  P(first) identical with the same resample indices: {'yes' if exact else 'no'}")
    return ok


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=25)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="10 systems x 500 items, one round")
    args = parser.parse_args(argv)
    if args.quick:
        args.systems, args.items, args.rounds = 10, 500, 1
    if args.systems < 3 or args.items < 3 or args.rounds < 1:
        parser.error("--systems and --items must be >= 3 (a rank correlation), --rounds >= 1")

    # Untimed warm-up of every path on a tiny corpus: lazy imports (ppi_py) and first
    # calls do not land in whichever path happens to run first.
    tiny = synthetic_corpus(4, 30, args.seed)
    build_report(tiny)
    same_figures(main_matrices(tiny), tiny.manifest)
    baseline(long_rows(tiny), 20, args.seed)

    build_start = time.perf_counter()
    corpus = synthetic_corpus(args.systems, args.items, args.seed)
    rows = long_rows(corpus)
    mains = main_matrices(corpus)
    n = len(corpus.judgements)
    n_errors = sum(j.score is None for j in corpus.judgements)
    print(
        f"corpus: {args.systems} systems x {args.items:,} items x {len(JUDGES)} judges = "
        f"{n:,} judgements ({n_errors} error rows), {N_RESAMPLES} resamples; "
        f"built in memory in {time.perf_counter() - build_start:.1f} s (untimed)"
    )

    times: dict[str, list[float]] = {"report": [], "matrices": [], "same": [], "baseline": []}
    for _ in range(args.rounds):
        seconds, report = timed(lambda: build_report(corpus))
        times["report"].append(seconds)
        times["matrices"].append(timed(lambda: score_matrices(corpus))[0])
        times["same"].append(timed(lambda: same_figures(mains, corpus.manifest))[0])
        seconds, base = timed(lambda: baseline(rows, N_RESAMPLES, corpus.manifest.seed))
        times["baseline"].append(seconds)
    median = {name: statistics.median(values) for name, values in times.items()}

    print(f"{n:,} judgements, wall time (perf_counter), median of {args.rounds} round(s):")
    print("| path | seconds |")
    print("|---|---:|")
    print(f"| judges: build_report (the whole report, from the rows) | {median['report']:.3f} |")
    print(f"| judges: of which score_matrices (rows -> arrays) | {median['matrices']:.3f} |")
    print(f"| judges: the baseline's figures only (from the matrices) | {median['same']:.3f} |")
    print(f"| baseline: numpy loops (from long arrays) | {median['baseline']:.3f} |")
    print(
        f"ratio baseline / judges build_report: {median['baseline'] / median['report']:.2f}x "
        "(the report computes more than the baseline: kappa, Kendall, intervals, queue)"
    )
    print(
        f"ratio baseline / judges same figures: {median['baseline'] / median['same']:.2f}x "
        "(like for like; above 1: judges is faster)"
    )

    print("figures, judges report vs baseline (largest absolute gap):")
    ok = agreement(report_figures(report), base, report, N_RESAMPLES)
    print(f"figure agreement: {'OK' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
