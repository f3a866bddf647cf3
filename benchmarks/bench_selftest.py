"""How long does the README's test command take here, against a base commit, in one run?

Run by hand: python benchmarks/bench_selftest.py --base COMMIT [--runs 3] [--workers auto]
                 [--keep-output DIR] [-- PYTEST ARGS]
          or python benchmarks/bench_selftest.py --quick   (seconds; what the test suite runs)

Times `python -m pytest -n auto` (the README's second command, exactly as typed, plus any
PYTEST ARGS such as `--durations=40`) in this checkout as it stands and in a clean clone of
the base commit (`git clone --shared` into a temporary folder, then `git checkout COMMIT`:
what a new user gets, no caches and no untracked files; the repository itself is not
touched). The two are interleaved (base, this, base, this, ...) so that a change of load on
a shared machine hits both alike, and only their ratio is worth quoting. Each run is timed
from outside: wall time, and the CPU time (user + system) of pytest and every process it
started (`RUSAGE_CHILDREN`). Both run on this interpreter; each checkout's own `judges`
package comes first on the path (PYTHONPATH), so the plugin loads from that checkout. A
run whose exit code is not 0 stops the benchmark: a failing suite is not a timing.

`--quick` runs one small test file with `-n 0`, once each, against a clean clone of HEAD
(or, outside a git checkout, against this checkout itself): it only shows that the script
still works. Nothing asserts on time.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMAND = ["-m", "pytest"]  # the README's second command: python -m pytest -n auto
QUICK = ["-p", "no:cacheprovider", "-q", "tests/test_parsing.py"]
SUMMARY = re.compile(r"^=* ?(\d+ (passed|failed).* in [\d.]+s.*?) ?=*$", re.M)


@dataclass
class Checkout:
    label: str
    root: Path
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def clone(commit: str, into: Path) -> Path:
    """A clean clone of `commit` under `into` (objects shared with this repository)."""
    git = ["git", "-c", "advice.detachedHead=false"]
    sha = subprocess.run(
        [*git, "-C", str(ROOT), "rev-parse", "--verify", f"{commit}^{{commit}}"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    target = into / f"base-{sha[:12]}"
    subprocess.run([*git, "clone", "-q", "--shared", "--no-checkout", str(ROOT), str(target)],
                   check=True)  # fmt: skip
    subprocess.run([*git, "-C", str(target), "checkout", "-q", sha], check=True)
    return target


def is_git_checkout() -> bool:
    if shutil.which("git") is None:
        return False
    found = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", "-q", "HEAD"],
        capture_output=True,
        check=False,
    )
    return found.returncode == 0


def run_once(checkout: Checkout, argv: list[str], keep: Path | None, run: int) -> str:
    """One whole pytest process in the checkout: appends its times, returns its summary."""
    env = dict(os.environ, PYTHONPATH=str(checkout.root))
    cpu_before, started = children_cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, *argv], cwd=checkout.root, env=env, capture_output=True, text=True
    )
    wall, cpu = time.perf_counter() - started, children_cpu() - cpu_before
    if keep is not None:
        (keep / f"{checkout.label}-{run}.txt").write_text(done.stdout + done.stderr, "utf-8")
    if done.returncode != 0:
        tail = done.stdout[-3000:] + done.stderr[-2000:]
        sys.exit(f"{checkout.label} ({checkout.root}) exited {done.returncode}:\n{tail}")
    checkout.wall.append(wall)
    checkout.cpu.append(cpu)
    found = SUMMARY.findall(done.stdout)
    return found[-1][0] if found else "(no summary line)"


def describe(values: list[float]) -> str:
    return (
        f"median {statistics.median(values):6.1f}s  spread {min(values):6.1f}-{max(values):6.1f}s"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="the commit to compare with (a clean clone of it)")
    parser.add_argument("--runs", type=int, default=3, help="runs per checkout (default 3)")
    parser.add_argument("--workers", default="auto", help="the -n value (default auto)")
    parser.add_argument("--keep-output", type=Path, help="write each run's output here")
    parser.add_argument("--quick", action="store_true", help="one small file, once, -n 0")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments, after --")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.workers = 1, "0"
        args.base = args.base or ("HEAD" if is_git_checkout() else None)
    elif args.base is None:
        parser.error("--base COMMIT is required (except with --quick)")
    if args.runs < 1:
        parser.error("--runs must be >= 1")
    pytest_argv = [*COMMAND, "-n", args.workers, *(QUICK if args.quick else []), *args.pytest_args]
    if args.keep_output is not None:
        args.keep_output.mkdir(parents=True, exist_ok=True)
    print(f"{platform.python_version()} on {os.cpu_count()} CPUs, load {os.getloadavg()}")
    print(f"command: python {' '.join(pytest_argv)}")
    with tempfile.TemporaryDirectory(prefix="bench-selftest-") as scratch:
        if args.base is not None:
            base = Checkout(f"base {args.base}", clone(args.base, Path(scratch)))
        else:
            print("not a git checkout: the base is this checkout itself")
            base = Checkout("base (this checkout)", ROOT)
        this = Checkout("this checkout", ROOT)
        for run in range(1, args.runs + 1):
            for checkout in (base, this):
                summary = run_once(checkout, pytest_argv, args.keep_output, run)
                print(
                    f"run {run}: {checkout.label:24} wall {checkout.wall[-1]:6.1f}s  "
                    f"cpu {checkout.cpu[-1]:6.1f}s  ({summary})",
                    flush=True,
                )
    print(f"\n{args.runs} run(s) each, load now {os.getloadavg()}")
    for checkout in (base, this):
        print(f"{checkout.label:24} wall {describe(checkout.wall)}")
        print(f"{checkout.label:24} cpu  {describe(checkout.cpu)}")
    wall = statistics.median(this.wall) / statistics.median(base.wall)
    cpu = statistics.median(this.cpu) / statistics.median(base.cpu)
    print(f"this checkout / base, same run (medians): wall x{wall:.2f}  cpu x{cpu:.2f}")


if __name__ == "__main__":
    main()
