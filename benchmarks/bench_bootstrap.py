"""Time the vectorised bootstrap of column means against its pure-Python loop twin.

Run by hand: python benchmarks/bench_bootstrap.py [--items 750 --dimensions 4 ...]
          or python benchmarks/bench_bootstrap.py --quick   (seconds; what the test suite runs)
Both implementations are timed in the same process on the same data, so the speedup is a
like-for-like ratio on this machine, not a number carried over from elsewhere.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

# Allow running from a checkout without installing the package.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judges.stats.estimates.intervals import Estimate, bootstrap_means_loop, bootstrap_means_matrix


def best_of(repeat: int, fn: Callable[[], list[Estimate]]) -> tuple[float, list[Estimate]]:
    """Best wall time of `repeat` runs (the least disturbed by other processes)."""
    best = float("inf")
    result: list[Estimate] = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=750)
    parser.add_argument("--dimensions", type=int, default=4)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--loop-resamples",
        type=int,
        default=10_000,
        help="resamples for the slow loop; below --resamples its time is scaled linearly",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="400x2, 500 resamples, one round")
    args = parser.parse_args(argv)
    if args.quick:
        args.items, args.dimensions, args.resamples = 400, 2, 500
        args.loop_resamples, args.repeat = 500, 1
    if min(args.dimensions, args.resamples, args.repeat, args.loop_resamples) < 1:
        parser.error("all sizes must be >= 1")
    if args.items < 2:
        parser.error("--items must be >= 2: a bootstrap interval needs two items")

    scores = (
        np.random.default_rng(args.seed)
        .integers(1, 6, size=(args.items, args.dimensions))
        .astype(float)
    )
    shape = f"{args.items}x{args.dimensions}"
    # Untimed warm-up of both paths, so one-off costs (lazy imports, first large allocations)
    # do not land in whichever implementation happens to run first.
    bootstrap_means_matrix(scores, n_resamples=50, seed=args.seed)
    bootstrap_means_loop(scores, n_resamples=5, seed=args.seed)

    vec_time, vec = best_of(
        args.repeat,
        lambda: bootstrap_means_matrix(scores, n_resamples=args.resamples, seed=args.seed),
    )
    print(
        f"vectorised bootstrap_means_matrix: {vec_time:.3f} s "
        f"(best of {args.repeat}, {shape}, {args.resamples} resamples)"
    )

    loop_time, loop = best_of(
        args.repeat,
        lambda: bootstrap_means_loop(scores, n_resamples=args.loop_resamples, seed=args.seed),
    )
    if args.loop_resamples == args.resamples:
        loop_scaled = loop_time
        print(
            f"python loop bootstrap_means_loop: {loop_time:.3f} s "
            f"(best of {args.repeat}, {shape}, {args.loop_resamples} resamples)"
        )
    else:
        # The loop's cost is linear in the number of resamples, so scale to compare like for like.
        loop_scaled = loop_time * args.resamples / args.loop_resamples
        print(
            f"python loop bootstrap_means_loop: {loop_time:.3f} s measured at "
            f"{args.loop_resamples} resamples (best of {args.repeat}, {shape}); "
            f"SCALED linearly to {args.resamples} resamples: {loop_scaled:.3f} s"
        )

    worst = max(
        max(abs(v.low - lp.low), abs(v.high - lp.high)) for v, lp in zip(vec, loop, strict=True)
    )
    verdict = "OK" if worst <= 0.05 else "MISMATCH"
    print(
        f"interval agreement: max |vectorised - loop| bound difference = {worst:.4f} "
        f"(tolerance 0.05): {verdict}"
    )
    print(f"speedup: {loop_scaled / vec_time:.0f}x (vectorised vs loop, same run)")
    return 0 if verdict == "OK" else 1


if __name__ == "__main__":
    raise SystemExit(main())
