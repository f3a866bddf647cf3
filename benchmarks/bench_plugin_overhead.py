"""What does the installed plugin cost a pytest run of a project that does not use it?

Run by hand: python benchmarks/bench_plugin_overhead.py [--runs 15]
          or python benchmarks/bench_plugin_overhead.py --quick   (what the test suite runs)

pytest imports the `pytest11` entry point of every installed plugin in every run. This
builds a one-test project unrelated to judges in a temporary folder and times
`python -m pytest -q -p no:cacheprovider` there, with the plugin as installed and with
`-p no:judges` (the plugin blocked), interleaved (with, without, with, ...) so that a change
of load on a shared machine hits both alike. It prints each run, the medians, their
difference and ratio, and the `judges` modules the run with the plugin imported: the
entry point and its options, nothing of the harness.

Both sides run this interpreter with this checkout first on the path (PYTHONPATH), so the
entry point loads from here. The target is a difference within 0.1 s; nothing asserts on
time, only `--quick` exits non-zero when the run imports a module of the harness.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMAND = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
BLOCKED = ["-p", "no:judges"]
# What the entry point may import in a project that does not use the harness.
LIGHT = frozenset({"judges", "judges.pytest_plugin", "judges.pytest_plugin.plugin",
                   "judges.pytest_plugin.options"})  # fmt: skip


def unrelated_project(into: Path) -> Path:
    (into / "test_unrelated.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    return into


def environment() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return dict(os.environ, PYTHONPATH=path)


def timed(project: Path, extra: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [*COMMAND, *extra], cwd=project, env=environment(), capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"pytest {' '.join(extra)} failed:\n{done.stdout}{done.stderr}")
    return elapsed


# pytest in this process, then the `judges` modules it left imported. (`python -X importtime`
# misses the entry point module itself: pytest's assertion rewriter loads it.)
LIST_MODULES = """
import sys, pytest
code = pytest.main(sys.argv[1:])
print("JUDGES-MODULES", *sorted(m for m in sys.modules if m.split(".")[0] == "judges"))
sys.exit(code)
"""


def judges_modules(project: Path, extra: list[str]) -> set[str]:
    """The `judges` modules a pytest run imports, in the same process."""
    done = subprocess.run(
        [sys.executable, "-c", LIST_MODULES, *COMMAND[3:], *extra],
        cwd=project, env=environment(), capture_output=True, text=True, check=False,
    )  # fmt: skip
    listed = [line for line in done.stdout.splitlines() if line.startswith("JUDGES-MODULES")]
    if done.returncode != 0 or not listed:
        raise SystemExit(f"pytest {' '.join(extra)} failed:\n{done.stdout}{done.stderr}")
    return set(listed[0].split()[1:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each side (default 15)")
    parser.add_argument("--quick", action="store_true", help="one run each: the script works")
    args = parser.parse_args()
    runs = 1 if args.quick else args.runs

    with tempfile.TemporaryDirectory() as folder:
        project = unrelated_project(Path(folder))
        timed(project, [])  # warm the file cache and bytecode once, untimed
        with_plugin: list[float] = []
        blocked: list[float] = []
        for run in range(1, runs + 1):
            with_plugin.append(timed(project, []))
            blocked.append(timed(project, BLOCKED))
            print(f"run {run}: plugin {with_plugin[-1]:.3f} s, -p no:judges {blocked[-1]:.3f} s")
        imported = judges_modules(project, [])
        blocked_imports = judges_modules(project, BLOCKED)

    plugin_s, blocked_s = statistics.median(with_plugin), statistics.median(blocked)
    print(f"median wall, plugin:        {plugin_s:.3f} s (n={runs})")
    print(f"median wall, -p no:judges:  {blocked_s:.3f} s (n={runs})")
    print(f"difference plugin - blocked: {plugin_s - blocked_s:+.3f} s (target: within 0.1 s)")
    print(f"ratio plugin / blocked, same run: {plugin_s / blocked_s:.3f}")
    print(
        f"judges modules imported with the plugin: {len(imported)}: {', '.join(sorted(imported))}"
    )
    print(f"judges modules imported with -p no:judges: {len(blocked_imports)}")
    heavy = sorted(imported - LIGHT)
    if heavy:
        print(f"the entry point imported the harness: {', '.join(heavy)}", file=sys.stderr)
        return 1
    print("imports: only the entry point and its options: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
