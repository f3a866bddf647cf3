"""Every benchmark script runs in its `--quick` mode: an API change breaks this test, not the
benchmark months later. Nothing here looks at a time; only that each script still runs to
its end and prints the figures it exists for.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"

# Script -> lines its quick run must print (what a reader of the benchmark looks for).
EXPECTED: dict[str, tuple[str, ...]] = {
    "bench_bootstrap.py": ("speedup:", "interval agreement", ": OK"),
    "bench_corpus.py": ("judgements", "ratio baseline / judges", "figure agreement", ": OK"),
    "bench_corpus_command.py": (
        "100,000 judgements",
        "| command, first run (JSONL in) |",
        "ratio command / baseline",
        "100/100 system means",
        "figure agreement: OK",
    ),
    "bench_plugin_overhead.py": (
        "ratio plugin / blocked",
        "only the entry point and its options: OK",
    ),
    "bench_ranking.py": ("ratio loop / matrix", "interval agreement", ": OK"),
    "bench_record_concurrency.py": ("| 1 |", "| 3 |", "byte-identical"),
    "bench_replay.py": ("floor:", "1 (one cassette per call)", "target (flat in cassette size"),
    "bench_selftest.py": ("run 1: base ", "run 1: this checkout", "this checkout / base, same run"),
    "bench_xdist.py": ("run 1: -n 0", "-n 0    wall median"),
    "screenshot_reports.py": (),  # checked below: it needs a browser
}


def run_quick(script: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--quick", *extra],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_every_benchmark_has_a_quick_run_here() -> None:
    assert sorted(p.name for p in BENCHMARKS.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("script", sorted(name for name, lines in EXPECTED.items() if lines))
def test_quick_run_completes(script: str) -> None:
    done = run_quick(script)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for line in EXPECTED[script]:
        assert line in done.stdout, (line, done.stdout[-3000:])


def test_screenshot_quick_run_renders_a_page_or_names_the_missing_browser(tmp_path: Path) -> None:
    done = run_quick("screenshot_reports.py", "--out", str(tmp_path))
    if shutil.which("chromium") is None and not Path("/usr/bin/chromium").exists():
        assert done.returncode == 2 and "apt-get install -y chromium" in done.stderr
        return
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(list(tmp_path.glob("*.png"))) == 1
