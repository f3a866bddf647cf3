"""A report's regression gates against the accepted baseline, their power per category, and
the judges that answered; the words a reader sees for what each category's gate can see."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from judges.calls.fingerprint import describe as describe_fingerprint
from judges.core.results import JudgementRow
from judges.reports.format import number
from judges.reports.sections.sources import Sources
from judges.sets.planted import Gates
from judges.stats.estimates.power import POWER, WORTH_DETECTING
from judges.stats.planning.categories import CategoryPower, category_power, discordance_of
from judges.stats.regression.family import version_regressions
from judges.stats.regression.gates import Regression, baseline_regressions
from judges.stats.reliability.calibration import sme_dimension
from judges.stats.reliability.noise import noise_floor


def regressions(
    model: str,
    version: str,
    rows: Sequence[JudgementRow],
    sources: Sources,
    baselines: Mapping[str, Sequence[JudgementRow]],
    dimensions: Sequence[str],
    notes: list[str],
) -> dict[str, tuple[Any, ...]]:
    """The regression gates against the accepted baseline, the retest run against main, and
    what each defect category's detection gate can see (a note for each that is blind to a
    15-point drop)."""
    found = _gates(model, version, rows, sources, baselines, dimensions, notes)
    main = [row for row in rows if row.run == "main"]
    discordance = discordance_of(
        found.get("retest_regressions", ()), "retest against main"
    ) or discordance_of(found.get("regressions", ()), "this run against the baseline")
    alpha = table.alpha if (table := _table(model, version, sources)) else 0.05
    if table is not None and table.accept_regression and table.baseline == version:
        notes.append(
            "accepted as the baseline although significantly worse than the baseline before "
            f"it (gates.toml accept_regression): {table.accept_regression}"
        )
    power = tuple(category_power(main, discordance, alpha))
    notes += [warning for p in power if (warning := category_power_warning(p)) is not None]
    return found | {"category_power": power}


def _table(model: str, version: str, sources: Sources) -> Gates | None:
    return sources.planted.gates.get((model, version)) if sources.planted else None


def _gates(
    model: str,
    version: str,
    rows: Sequence[JudgementRow],
    sources: Sources,
    baselines: Mapping[str, Sequence[JudgementRow]],
    dimensions: Sequence[str],
    notes: list[str],
) -> dict[str, tuple[Regression, ...]]:
    main = [row for row in rows if row.run == "main"]
    retest = [row for row in rows if row.run == "retest"]
    found: dict[str, tuple[Regression, ...]] = {}
    if retest:
        label = f"prompt {version} main run (the retest re-records the same prompt)"
        found["retest_regressions"] = tuple(
            baseline_regressions(main, retest, label, prefix="retest.")
        )
    table = _table(model, version, sources)
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
    sme = None
    if sources.sme_labels and version in sources.planted.run_versions("sme"):
        sme = (list(sources.sme_labels), sme_dimension(dimensions))
    retest = [
        r for r in baselines.get(table.baseline, ()) if r.model == model and r.run == "retest"
    ]
    gates = version_regressions(
        baseline, main, label, dimensions, noise_sd, table.alpha, sme, retest=retest
    )
    found["regressions"] = tuple(gates)
    return found


def fingerprints(rows: Sequence[JudgementRow]) -> dict[str, tuple[str, ...]]:
    """Per run, every judge fingerprint its rows were recorded with ("not recorded" if none)."""
    found: dict[str, set[str]] = {}
    for row in rows:
        found.setdefault(row.run, set()).add(describe_fingerprint(row.fingerprint))
    return {run: tuple(sorted(found[run])) for run in sorted(found)}


def category_power_warning(p: CategoryPower) -> str | None:
    """A sentence for the report when the category cannot see a 15-point drop."""
    if p.sees_worth_detecting:
        return None
    if p.nothing_to_drop:
        return (
            f"category {p.category} ({p.n} items) detects 0/{p.n}: there is no "
            "detection to drop, so no power statement applies"
        )
    seen = "no drop at all" if math.isnan(p.drop) else f"only a drop of {p.drop:.2f} or more"
    return (
        f"category {p.category} ({p.n} items) cannot detect a "
        f"{WORTH_DETECTING * 100:.0f}-point drop in detection: it sees {seen} with "
        f"{POWER:.0%} power "
        f"({p.basis}); `python -m judges plan` says how many items it needs"
    )


def category_power_lines(powers: Sequence[CategoryPower]) -> list[str]:
    """The report's markdown table: what a paired gate can see per category."""
    if not powers:
        return []
    bases = {p.basis for p in powers if not p.nothing_to_drop}
    basis = (
        "nothing detected in any category: no drop to detect"
        if not bases
        else bases.pop()
        if len(bases) == 1
        else "no paired run: discordance assumed 2 r (1 - r) at each category's detection rate r"
    )
    lines = [
        "Smallest detection drop a paired gate detects per category, with 80% power at one-"
        f"sided alpha ({basis}):",
        "",
        "| Category | Items | Discordance | Smallest detectable drop | Sees a 15-point drop |",
        "|---|---|---|---|---|",
    ]
    for p in powers:
        drop = number(p.drop, nan="none at this n")
        drop = "none: nothing detected" if p.nothing_to_drop else drop
        sees = "yes" if p.sees_worth_detecting else "**no**"
        lines.append(f"| {p.category} | {p.n} | {p.discordance:.2f} | {drop} | {sees} |")
    return [*lines, ""]
