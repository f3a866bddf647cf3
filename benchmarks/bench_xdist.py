"""Does `-n auto` pay off? Whole `pytest regression_tests` processes, with and without xdist.

Run by hand: python benchmarks/bench_xdist.py [--runs 5] [--workers 0,auto]
                 [--baseline CHECKOUT] [-- PYTEST ARGS]
          or python benchmarks/bench_xdist.py --quick   (seconds; what the test suite runs)

Each run is a fresh `python -m pytest regression_tests -q -p no:cacheprovider
--report-dir <tmp>` (reports go to a temporary folder, the committed ones are not touched),
timed from outside: wall time, and the CPU time (user + system) of the process and every
worker it started (`RUSAGE_CHILDREN`), which other load on a shared machine inflates far
less than wall time. The settings are interleaved (0, auto, 0, auto, ...) so that a change
of load hits both alike. Printed per setting: median, min-max spread and each setting's
median as a ratio to the `-n 0` median measured in the same run. A run whose exit code is
not 0 stops the benchmark: a failing gate is not a timing. Nothing asserts on time.

`--baseline CHECKOUT` times another checkout of the project too (e.g. `git worktree add
/tmp/judges-before <commit>`), interleaved with this one setting by setting, and prints
this checkout's medians as a ratio to the baseline's: a before/after figure from one run,
which a busy machine shifts far less than two runs an hour apart. When the two checkouts
name the plugin differently (a module moved), give the baseline its own environment with
`--baseline-python` (a venv where that checkout is installed). `--quick` runs one fast
test once with `-n 0`, no warm-up: it only shows that the script still works.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = ["-q", "-p", "no:cacheprovider"]
TARGET = ["regression_tests"]
QUICK_TARGET = ["regression_tests/test_ranking.py::test_reading_list_baselines"]


@dataclass
class Timings:
    workers: str
    root: Path = ROOT
    python: str = sys.executable
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"-n {self.workers:4}" + ("" if self.root == ROOT else " baseline")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(timing: Timings, target: list[str], extra: list[str]) -> tuple[float, float]:
    """One whole pytest process: (wall seconds, CPU seconds of it and its workers)."""
    with tempfile.TemporaryDirectory(prefix="bench-xdist-") as reports:
        argv = [timing.python, "-m", "pytest", *target, *BASE, "--report-dir", reports]
        argv += ["-n", timing.workers, *extra]
        # The checkout's own package comes first on the path: the plugin loads from there.
        env = dict(os.environ, PYTHONPATH=str(timing.root))
        cpu_before, started = children_cpu(), time.perf_counter()
        done = subprocess.run(argv, cwd=timing.root, env=env, capture_output=True, text=True)
        wall, cpu = time.perf_counter() - started, children_cpu() - cpu_before
    if done.returncode != 0:
        sys.exit(f"{timing.label} exited {done.returncode}:\n{done.stdout[-3000:]}{done.stderr}")
    return wall, cpu


def describe(values: list[float], base: float, name: str) -> str:
    median = statistics.median(values)
    return (
        f"median {median:6.1f}s  spread {min(values):6.1f}-{max(values):6.1f}s  "
        f"x{median / base:.2f} of {name}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per setting (default 5)")
    parser.add_argument("--workers", default="0,auto", help="-n values; the first is the base")
    parser.add_argument(
        "--baseline", type=Path, help="another checkout to time too, interleaved (before/after)"
    )
    parser.add_argument(
        "--baseline-python", default=sys.executable, help="the interpreter for --baseline"
    )
    parser.add_argument("--quick", action="store_true", help="one fast test, once, -n 0")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments, after --")
    args = parser.parse_args(argv)
    target = QUICK_TARGET if args.quick else TARGET
    if args.quick:
        args.runs, args.workers = 1, "0"
    if args.runs < 1:
        parser.error("--runs must be >= 1")
    if args.baseline is not None and not (args.baseline / "regression_tests").is_dir():
        parser.error(f"--baseline {args.baseline}: no regression_tests/ there")
    workers = [w.strip() for w in args.workers.split(",")]
    roots = [(ROOT, sys.executable)]
    if args.baseline is not None:
        roots.insert(0, (args.baseline.resolve(), args.baseline_python))
    settings = [Timings(w, root, python) for w in workers for root, python in roots]
    print(f"{platform.python_version()} on {os.cpu_count()} CPUs, load {os.getloadavg()}")
    if not args.quick:
        for timing in settings[: len(roots)]:  # warm the file cache; not counted
            run_once(timing, target, args.pytest_args)
    for run in range(args.runs):
        for timing in settings:
            wall, cpu = run_once(timing, target, args.pytest_args)
            timing.wall.append(wall)
            timing.cpu.append(cpu)
            print(f"run {run + 1}: {timing.label} wall {wall:6.1f}s  cpu {cpu:6.1f}s")
    print(f"\nwhole process, {args.runs} runs each, load now {os.getloadavg()}")
    first = {timing.root: timing for timing in settings if timing.workers == workers[0]}
    for timing in settings:
        base = first[timing.root]
        name = f"-n {base.workers}" + ("" if timing.root == ROOT else " baseline")
        print(f"{timing.label} wall {describe(timing.wall, statistics.median(base.wall), name)}")
        print(f"{timing.label} cpu  {describe(timing.cpu, statistics.median(base.cpu), name)}")
    if args.baseline is not None:
        print("\nthis checkout against the baseline, same run (median / baseline median):")
        for before, after in zip(settings[::2], settings[1::2], strict=True):
            wall = statistics.median(after.wall) / statistics.median(before.wall)
            cpu = statistics.median(after.cpu) / statistics.median(before.cpu)
            print(f"-n {after.workers:4} wall x{wall:.2f}  cpu x{cpu:.2f}")


if __name__ == "__main__":
    main()
