"""Does `-n auto` pay off? Whole `pytest regression_tests` processes, with and without xdist.

Run by hand: python benchmarks/bench_xdist.py [--runs 5] [--workers 0,auto] [-- PYTEST ARGS]

Each run is a fresh `python -m pytest regression_tests -q -p no:cacheprovider
--report-dir <tmp>` (reports go to a temporary folder, the committed ones are not touched),
timed from outside: wall time, and the CPU time (user + system) of the process and every
worker it started (`RUSAGE_CHILDREN`), which other load on a shared machine inflates far
less than wall time. The settings are interleaved (0, auto, 0, auto, ...) so that a change
of load hits both alike. Printed per setting: median, min-max spread and each setting's
median as a ratio to the `-n 0` median measured in the same run. A run whose exit code is
not 0 stops the benchmark: a failing gate is not a timing. Nothing asserts on time.
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
BASE = ["regression_tests", "-q", "-p", "no:cacheprovider"]


@dataclass
class Timings:
    workers: str
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(workers: str, extra: list[str]) -> tuple[float, float]:
    """One whole pytest process: (wall seconds, CPU seconds of it and its workers)."""
    with tempfile.TemporaryDirectory(prefix="bench-xdist-") as reports:
        argv = [sys.executable, "-m", "pytest", *BASE, "--report-dir", reports, "-n", workers]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        cpu_before, started = children_cpu(), time.perf_counter()
        done = subprocess.run(argv + extra, cwd=ROOT, env=env, capture_output=True, text=True)
        wall, cpu = time.perf_counter() - started, children_cpu() - cpu_before
    if done.returncode != 0:
        sys.exit(f"-n {workers} exited {done.returncode}:\n{done.stdout[-3000:]}{done.stderr}")
    return wall, cpu


def describe(values: list[float], baseline: float) -> str:
    median = statistics.median(values)
    return (
        f"median {median:6.1f}s  spread {min(values):6.1f}-{max(values):6.1f}s  "
        f"x{median / baseline:.2f} of -n 0"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per setting (default 5)")
    parser.add_argument("--workers", default="0,auto", help="-n values; the first is the base")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments, after --")
    args = parser.parse_args(argv)
    settings = [Timings(w.strip()) for w in args.workers.split(",")]
    print(f"{platform.python_version()} on {os.cpu_count()} CPUs, load {os.getloadavg()}")
    run_once(settings[0].workers, args.pytest_args)  # warm the file cache; not counted
    for run in range(args.runs):
        for timing in settings:
            wall, cpu = run_once(timing.workers, args.pytest_args)
            timing.wall.append(wall)
            timing.cpu.append(cpu)
            print(f"run {run + 1}: -n {timing.workers:4} wall {wall:6.1f}s  cpu {cpu:6.1f}s")
    base = settings[0]
    print(f"\nwhole process, {args.runs} runs each, load now {os.getloadavg()}")
    for timing in settings:
        print(f"-n {timing.workers:4} wall {describe(timing.wall, statistics.median(base.wall))}")
        print(f"-n {timing.workers:4} cpu  {describe(timing.cpu, statistics.median(base.cpu))}")


if __name__ == "__main__":
    main()
