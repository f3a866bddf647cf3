"""Time the reading list's bootstrap over candidates: all resamples at once against a loop.

Run by hand: python benchmarks/bench_ranking.py [--candidates 40 --resamples 1000 ...]
          or python benchmarks/bench_ranking.py --quick   (seconds; what the test suite runs)

The vectorised path is `judges.stats.ranking.reading_list.bootstrap_over_candidates` (every
resample a row of one matrix, `judges.stats.ranking.metrics_matrix.evaluate_rows`); the loop is the
code it replaced, one `evaluate_ranking` call per resample, written out below. Both run in
this process on the same graded candidates with tied and failed scores, interleaved
(loop, matrix, loop, matrix ...) so that a change of load hits both alike; times are this
process's CPU time, median of the rounds. The intervals of the two must agree to 1e-9.
Nothing asserts on time: the numbers are printed, not judged.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np

# Allow running from a checkout without installing the package.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judges.stats.ranking.metrics import evaluate_ranking
from judges.stats.ranking.reading_list import SHOWN, bootstrap_over_candidates

Scores = Mapping[str, float | None]


def loop_bootstrap(
    scores: Scores, labels: Mapping[str, int], n_resamples: int, seed: int
) -> dict[str, tuple[float, float]]:
    """The scalar loop: one dict of copies and one `evaluate_ranking` per resample."""
    ids = sorted(labels)
    rng = np.random.default_rng(seed)
    samples: dict[str, list[float]] = {key: [] for key in SHOWN}
    for _ in range(n_resamples):
        drawn = [ids[j] for j in rng.integers(0, len(ids), len(ids))]
        copies = {f"{cid}#{n}": cid for n, cid in enumerate(drawn)}
        metrics = evaluate_ranking(
            {copy: scores[cid] for copy, cid in copies.items()},
            {copy: labels[cid] for copy, cid in copies.items()},
        )
        for key in SHOWN:
            samples[key].append(metrics[key])
    bounds = {key: np.percentile(np.asarray(v), [2.5, 97.5]) for key, v in samples.items()}
    return {key: (float(low), float(high)) for key, (low, high) in bounds.items()}


def matrix_bootstrap(
    scores: Scores, labels: Mapping[str, int], n_resamples: int, seed: int
) -> dict[str, tuple[float, float]]:
    found = bootstrap_over_candidates(scores, labels, n_resamples=n_resamples, seed=seed)
    return {key: (estimate.low, estimate.high) for key, estimate in found.items()}


def case(n: int, seed: int) -> tuple[dict[str, float | None], dict[str, int]]:
    """n graded candidates; scores in steps of 0.05 (many ties), one in ten failed."""
    rng = np.random.default_rng(seed)
    labels = {f"c{i:03d}": int(rng.integers(0, 5)) for i in range(n)}
    scores: dict[str, float | None] = {
        cid: None if rng.random() < 0.1 else round(float(rng.integers(0, 21)) * 0.05, 2)
        for cid in labels
    }
    return scores, labels


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=40, help="the reading list has 40")
    parser.add_argument("--resamples", type=int, default=1000, help="the report draws 1000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one round")
    args = parser.parse_args(argv)
    if args.quick:
        args.candidates, args.resamples, args.rounds = 12, 30, 1
    if min(args.candidates, args.resamples, args.rounds) < 1:
        parser.error("all sizes must be >= 1")
    scores, labels = case(args.candidates, args.seed)
    matrix_bootstrap(scores, labels, 5, args.seed)  # untimed warm-up of both paths
    loop_bootstrap(scores, labels, 2, args.seed)
    times: dict[str, list[float]] = {"loop": [], "matrix": []}
    results = {}
    for _ in range(args.rounds):
        for name, run in (("loop", loop_bootstrap), ("matrix", matrix_bootstrap)):
            start = time.process_time()
            results[name] = run(scores, labels, args.resamples, args.seed)
            times[name].append(time.process_time() - start)
    worst = max(
        abs(a - b)
        for key in SHOWN
        for a, b in zip(results["loop"][key], results["matrix"][key], strict=True)
    )
    loop, matrix = (statistics.median(times[name]) for name in ("loop", "matrix"))
    print(
        f"{args.candidates} candidates x {args.resamples} resamples, {args.rounds} interleaved "
        f"rounds, CPU time median:"
    )
    print(f"  scalar loop (evaluate_ranking per resample): {loop * 1e3:9.2f} ms")
    print(f"  matrix (evaluate_rows, all resamples):       {matrix * 1e3:9.2f} ms")
    print(f"  ratio loop / matrix: {loop / max(matrix, 1e-9):.1f}x (same process, same data)")
    verdict = "OK" if worst <= 1e-9 else "MISMATCH"
    print(f"interval agreement: max |loop - matrix| = {worst:.2e} (tolerance 1e-9): {verdict}")
    return 0 if verdict == "OK" else 1


if __name__ == "__main__":
    raise SystemExit(main())
