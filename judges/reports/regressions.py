"""A report's regression gates against the accepted baseline, and the judges that answered."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from judges.calls.fingerprint import describe as describe_fingerprint
from judges.core.results import JudgementRow
from judges.reports.sources import Sources
from judges.stats.calibration import sme_dimension
from judges.stats.noise import noise_floor
from judges.stats.regression import (
    Regression,
    baseline_regressions,
    score_regressions,
    sme_regression,
)


def regressions(
    model: str,
    version: str,
    rows: Sequence[JudgementRow],
    sources: Sources,
    baselines: Mapping[str, Sequence[JudgementRow]],
    dimensions: Sequence[str],
    notes: list[str],
) -> dict[str, tuple[Regression, ...]]:
    """The regression gates against the accepted baseline, and the retest run against main."""
    main = [row for row in rows if row.run == "main"]
    retest = [row for row in rows if row.run == "retest"]
    found: dict[str, tuple[Regression, ...]] = {}
    if retest:
        label = f"prompt {version} main run (the retest re-records the same prompt)"
        found["retest_regressions"] = tuple(
            baseline_regressions(main, retest, label, prefix="retest.")
        )
    table = sources.planted.gates.get((model, version)) if sources.planted else None
    if table is None or table.baseline is None or table.baseline == version:
        return found
    baseline = [
        r for r in baselines.get(table.baseline, ()) if r.model == model and r.run == "main"
    ]
    if not baseline:
        notes.append(
            f"regression gates not evaluated: no main-run results of the baseline prompt "
            f"{table.baseline} for {model}"
        )
    label = f"prompt {table.baseline} main run"
    noise = [r for r in baselines.get(table.baseline, ()) if r.model == model and r.run == "noise"]
    noise_sd: dict[str, float] = {}
    if noise:
        floor = noise_floor(noise, dimensions, n_items=len(sources.planted.items))
        noise_sd = {
            d: n.pooled_sd for d, n in floor.dimensions.items() if not math.isnan(n.pooled_sd)
        }
    gates = baseline_regressions(baseline, main, label, table.alpha)
    gates += score_regressions(baseline, main, label, dimensions, noise_sd, table.alpha)
    if sources.sme_labels and version in sources.planted.config.sme_versions:
        labels = list(sources.sme_labels)
        dimension = sme_dimension(dimensions)
        gates.append(sme_regression(baseline, main, labels, dimension, label, table.alpha))
    found["regressions"] = tuple(gates)
    return found


def fingerprints(rows: Sequence[JudgementRow]) -> dict[str, tuple[str, ...]]:
    """Per run, every judge fingerprint its rows were recorded with ("not recorded" if none)."""
    found: dict[str, set[str]] = {}
    for row in rows:
        found.setdefault(row.run, set()).add(describe_fingerprint(row.fingerprint))
    return {run: tuple(sorted(found[run])) for run in sorted(found)}
