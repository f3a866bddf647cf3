"""Time the documented `corpus report` command, loading included, against a plain baseline.

Run by hand: python benchmarks/bench_corpus_command.py --size 1m     (1,000,000 judgements)
          or python benchmarks/bench_corpus_command.py --size 10m    (10,000,000; minutes)
          or python benchmarks/bench_corpus_command.py --quick       (100,000; the test suite)
Options: --memory-limit 1GB (passed to the command), --checkout PATH (time another checkout's
`judges`, e.g. an export of main for the before-figures), --keep DIR (keep the corpus),
--rounds N (interleaved rounds, median of each figure; 1 by default).

The corpus is written to disk in the documented format (corpus.toml, items.jsonl,
judgements.jsonl; untimed), scores in (0, 1): logistic(system + item + noise), the item effect
shared by every system and judge, ~0.5% error rows. Sizes (systems x items x judges):

    quick  50 x 1,000 x 2     =    100,000
    1m     50 x 5,000 x 4     =  1,000,000
    10m   200 x 10,000 x 5    = 10,000,000

Each path runs as its own process, measured by `os.wait4` (CPU and peak resident memory of
that process alone) and `time.perf_counter` (wall):

* command, first run: `python -m judges corpus report bench --corpora ... --reports ...`,
  from the JSONL (the columnar store is converted and cached on this run);
* command, again: the same command with the store cached, into a report folder of its own
  (what a team's second report costs when something else changed; into the same folder
  with nothing changed, the command answers "unchanged" from its remembered fingerprint,
  timed as a fourth path); the same as the first for a checkout without a store;
* baseline: the plain way, the same figures hand-written: DuckDB reads the JSONL and groups
  by (judge, system) for each system's mean, standard error and n, a pivot to the
  systems x items matrix per judge, every pair's paired t test with Holm in numpy, and
  P(first) from a numpy bootstrap of items (2,000 resamples).

The figures must agree: every system's mean and interval in the command's corpus_report.md
equals the baseline's at the report's two decimals. Nothing asserts on time: the numbers
are printed, not judged.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SIZES = {"quick": (50, 1_000, 2), "1m": (50, 5_000, 4), "10m": (200, 10_000, 5)}
NAME = "bench"
N_RESAMPLES = 2000
CONFIDENCE = 0.95


# --- the corpus ----------------------------------------------------------------------------


def write_corpus(folder: Path, n_systems: int, n_items: int, n_judges: int, seed: int) -> int:
    """The documented corpus folder; returns the number of judgements written."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    judges = [f"judge-{k}" for k in range(n_judges)]
    toml = [
        f'name = "{NAME}"',
        'description = "synthetic (benchmarks/bench_corpus_command.py)"',
        'source = "synthetic"',
        'licence = "none (synthetic)"',
        f"seed = {seed}",
        "",
        "[scale]",
        'low = 0\nhigh = 1\nverdict = "side"\nmidpoint = 0.5\nfactor = 100',
    ]
    for judge in judges:
        toml += ["", f'[judges."{judge}"]', f'description = "synthetic {judge}"']
    (folder / "corpus.toml").write_text("\n".join(toml) + "\n", encoding="utf-8")
    items = [f"item-{i:05d}" for i in range(n_items)]
    (folder / "items.jsonl").write_text(
        "".join(f'{{"id": "{item}"}}\n' for item in items), encoding="utf-8"
    )
    systems = [f"system-{s:03d}" for s in range(n_systems)]
    system_effect = rng.normal(0.0, 0.3, n_systems)
    item_effect = rng.normal(0.0, 1.0, n_items)
    with (folder / "judgements.jsonl").open("w", encoding="utf-8") as out:
        for number, judge in enumerate(judges):
            effect = system_effect + number * rng.normal(0.0, 0.05, n_systems)
            noise = rng.normal(0.0, 0.5, (n_systems, n_items))
            scores = 1.0 / (1.0 + np.exp(-(effect[:, None] + item_effect[None, :] + noise)))
            errors = rng.random((n_systems, n_items)) < 0.005
            for s, system in enumerate(systems):
                head = f'{{"system": "{system}", "item": "'
                tail = f'", "judge": "{judge}", '
                out.write(
                    "".join(
                        f'{head}{item}{tail}"error": "timeout"}}\n'
                        if error
                        else f'{head}{item}{tail}"score": {score!r}}}\n'
                        for item, score, error in zip(
                            items, scores[s].tolist(), errors[s].tolist(), strict=True
                        )
                    )
                )
    return n_systems * n_items * n_judges


# --- the baseline (run as its own process: --baseline FOLDER OUT) ---------------------------


def baseline(folder: Path, seed: int) -> dict[str, dict[str, list[float]]]:
    """judge -> system -> [mean, low, high, n, errors, P(first)]; also every pair's paired
    t test with Holm (computed, as the report does, and counted)."""
    import duckdb
    import scipy.stats

    con = duckdb.connect()
    source = str(folder / "judgements.jsonl")
    con.execute(
        "CREATE TABLE j AS SELECT judge, system, item, TRY_CAST(score AS DOUBLE) AS score "
        "FROM read_json(?, format = 'newline_delimited', "
        "columns = {judge: 'VARCHAR', system: 'VARCHAR', item: 'VARCHAR', score: 'DOUBLE', "
        "error: 'VARCHAR'})",
        [source],
    )
    groups = con.execute(
        "SELECT judge, system, avg(score), stddev_samp(score), count(score), "
        "count(*) - count(score) FROM j GROUP BY judge, system ORDER BY judge, system"
    ).fetchall()
    ids = con.execute("SELECT DISTINCT item FROM j ORDER BY item").fetchall()
    items = {item: k for k, (item,) in enumerate(ids)}
    found: dict[str, dict[str, list[float]]] = {}
    for judge, system, mean, sd, n, errors in groups:
        half = float(scipy.stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1)) * sd / np.sqrt(n)
        found.setdefault(judge, {})[system] = [mean, mean - half, mean + half, n, errors]
    pairs = 0
    for judge, by_system in found.items():
        systems = sorted(by_system)
        where = {s: k for k, s in enumerate(systems)}
        rows = con.execute(
            "SELECT system, item, score FROM j WHERE judge = ? AND score IS NOT NULL", [judge]
        ).fetchnumpy()
        wide = np.full((len(systems), len(items)), np.nan)
        wide[
            np.fromiter((where[s] for s in rows["system"]), int, len(rows["system"])),
            np.fromiter((items[i] for i in rows["item"]), int, len(rows["item"])),
        ] = rows["score"]
        # Every pair, paired over shared items: a t test per pair, then Holm.
        p_values = []
        for a in range(len(systems) - 1):
            d = wide[a] - wide[a + 1 :]
            both = ~np.isnan(d)
            n = both.sum(axis=1)
            mean = np.nansum(d, axis=1) / n
            sd = np.sqrt(np.nansum((d - mean[:, None]) ** 2, axis=1) / (n - 1))
            t = mean / (sd / np.sqrt(n))
            p_values.append(2 * scipy.stats.t.sf(np.abs(t), n - 1))
        p = np.concatenate(p_values)
        order = np.argsort(p)
        holm = np.empty_like(p)
        holm[order] = np.minimum(1, np.maximum.accumulate(p[order] * (p.size - np.arange(p.size))))
        pairs += p.size
        # P(first): the same item multiplicities as the report's bootstrap.
        rng = np.random.default_rng(seed)
        judged = ~np.isnan(wide)
        filled = np.where(judged, wide, 0.0)
        share = np.zeros(len(systems))
        for start in range(0, N_RESAMPLES, 250):
            counts = np.stack(
                [
                    np.bincount(rng.integers(0, len(items), len(items)), minlength=len(items))
                    for _ in range(min(250, N_RESAMPLES - start))
                ]
            ).astype(float)
            means = (counts @ filled.T) / (counts @ judged.T)
            leaders = means == means.max(axis=1, keepdims=True)
            share += (leaders / leaders.sum(axis=1, keepdims=True)).sum(axis=0)
        for system, first in zip(systems, share / N_RESAMPLES, strict=True):
            by_system[system].append(float(first))
    print(f"baseline: {pairs:,} pairs tested (Holm per judge)")
    return found


# --- measuring a process -------------------------------------------------------------------


@dataclass(frozen=True)
class Measured:
    wall: float
    cpu: float
    peak_gb: float


def measure(command: list[str], env: dict[str, str]) -> Measured:
    start = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    error = process.stderr.read().decode("utf-8", "replace") if process.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(command)} exited {code}:\n{error[-3000:]}")
    # Linux: ru_maxrss in KiB.
    return Measured(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024 / 1e9)


def median(runs: list[Measured]) -> Measured:
    """Each figure's median over the rounds."""
    return Measured(*(statistics.median(values) for values in zip(*(
        (m.wall, m.cpu, m.peak_gb) for m in runs), strict=True)))  # fmt: skip


def report_means(markdown: str) -> dict[str, dict[str, str]]:
    """judge -> system -> the 'mean [low, high]' cell of the report's ranking tables."""
    found: dict[str, dict[str, str]] = {}
    judge = ""
    for line in markdown.splitlines():
        if line.startswith("## ") and not line.startswith("## Judge change"):
            judge = line[3:].strip()
        elif judge and line.startswith("| ") and "system-" in line and "n=" in line:
            cells = [c.strip() for c in line.strip("|").split("|")]
            if cells[0].isdigit():
                found.setdefault(judge, {})[cells[1]] = cells[2].split(" n=")[0]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="1m")
    parser.add_argument("--quick", action="store_true", help="--size quick (100,000)")
    parser.add_argument("--memory-limit", help="passed to the command, e.g. 1GB")
    parser.add_argument("--checkout", type=Path, default=ROOT, help="whose judges to time")
    parser.add_argument("--keep", type=Path, help="write the corpus here and keep it")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds (median)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.baseline:
        folder, out = args.baseline
        out.write_text(json.dumps(baseline(folder, args.seed)), encoding="utf-8")
        return 0
    size = "quick" if args.quick else args.size
    n_systems, n_items, n_judges = SIZES[size]
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-corpus-"))
    try:
        folder = work / "corpora" / NAME
        start = time.perf_counter()
        n = write_corpus(folder, n_systems, n_items, n_judges, args.seed)
        megabytes = (folder / "judgements.jsonl").stat().st_size / 1e6
        print(
            f"corpus: {n_systems} systems x {n_items:,} items x {n_judges} judges = {n:,} "
            f"judgements, judgements.jsonl {megabytes:,.0f} MB, written in "
            f"{time.perf_counter() - start:.1f} s (untimed); load average "
            f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
        )
        env = dict(
            os.environ,
            PYTHONPATH=str(args.checkout),
            JUDGES_CACHE_DIR=str(work / "cache"),
        )
        command = [
            *(sys.executable, "-m", "judges", "corpus", "report", NAME),
            *("--corpora", str(work / "corpora"), "--reports", str(work / "reports")),
        ]
        if args.memory_limit:
            command += ["--memory-limit", args.memory_limit]
        figures = work / "baseline.json"
        baseline_command = [
            *(sys.executable, str(Path(__file__).resolve()), "--baseline", str(folder)),
            *(str(figures), "--seed", str(args.seed)),
        ]
        # Interleaved round by round (first run, again, baseline, first run, ...), so that a
        # change of load hits all three alike; the first run starts from an empty cache.
        # "Again" writes to a report folder of its own, emptied first: the same command into
        # the first run's folder answers "unchanged" from its remembered fingerprint without
        # computing (timed apart, as "unchanged").
        again_command = [*command]
        again_command[again_command.index(str(work / "reports"))] = str(work / "reports-again")
        names = ("first", "again", "unchanged", "baseline")
        runs: dict[str, list[Measured]] = {name: [] for name in names}
        for _ in range(args.rounds):
            shutil.rmtree(work / "cache", ignore_errors=True)
            shutil.rmtree(work / "reports-again", ignore_errors=True)
            runs["first"].append(measure(command, env))
            runs["again"].append(measure(again_command, env))
            runs["unchanged"].append(measure(command, env))
            runs["baseline"].append(measure(baseline_command, dict(os.environ)))
        first, again, unchanged, plain = (median(runs[name]) for name in names)
        print(
            f"{n:,} judgements, one process each (wall, CPU, peak resident memory), median "
            f"of {args.rounds} round(s); load average now {os.getloadavg()[0]:.2f}:"
        )
        print("| path | wall s | CPU s | peak GB |")
        print("|---|---:|---:|---:|")
        for name, m in (
            ("command, first run (JSONL in)", first),
            ("command, again (store cached)", again),
            ("command, unchanged (answer remembered)", unchanged),
            ("baseline: DuckDB group-by + numpy", plain),
        ):
            print(f"| {name} | {m.wall:.2f} | {m.cpu:.2f} | {m.peak_gb:.2f} |")
        print(f"ratio command / baseline, wall: first run {first.wall / plain.wall:.2f}x, "
              f"again {again.wall / plain.wall:.2f}x; CPU: first run "
              f"{first.cpu / plain.cpu:.2f}x, again {again.cpu / plain.cpu:.2f}x")  # fmt: skip

        markdown = (work / "reports" / NAME / "corpus_report.md").read_text(encoding="utf-8")
        shown = report_means(markdown)
        expected = {
            judge: {
                system: f"{v[0] * 100:.2f} [{v[1] * 100:.2f}, {v[2] * 100:.2f}]"
                for system, v in by_system.items()
            }
            for judge, by_system in json.loads(figures.read_text(encoding="utf-8")).items()
        }
        differing = [
            (judge, system, shown.get(judge, {}).get(system), cell)
            for judge, by_system in expected.items()
            for system, cell in by_system.items()
            if shown.get(judge, {}).get(system) != cell
        ]
        count = sum(len(v) for v in expected.values())
        print(f"figures, report vs baseline: {count - len(differing)}/{count} system means and "
              f"intervals equal at two decimals")  # fmt: skip
        for judge, system, ours, theirs in differing[:5]:
            print(f"  {judge} {system}: report {ours!r}, baseline {theirs!r}")
        print(f"figure agreement: {'OK' if not differing and count else 'MISMATCH'}")
        return 0 if not differing and count else 1
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
