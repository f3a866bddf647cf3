"""`judges baseline` and the bias probes: suggested ceilings, accepted failures, and the
test that stops a version more biased than its baseline from being accepted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judges.cli.baseline import _bound, _toml_key, _toml_value
from judges.core.results import JudgementRow
from judges.reports.format import p_is
from judges.sets.probes import run_name
from judges.storage.files import atomic_write_text


def probe_baseline(
    rows: list[JudgementRow], fields: list[str], score: str
) -> tuple[dict[str, float], dict[str, dict[str, str]]]:
    """Suggested `max_flip` per probe, and its biased items as accepted (strict xfails).

    The ceiling is the biased rate's upper Wilson bound rounded up, as for the other floors.
    A ceiling of 1.0 could never fail, so none is suggested: a probe the judge fails on
    every item is guarded by its accepted items alone, each of which XPASSes when fixed.
    """
    from judges.stats.reliability.probes import outcomes_from_rows, probe_effect

    outcomes = outcomes_from_rows(rows, fields, score)
    bounds = {p: _bound(probe_effect(p, found).biased, False) for p, found in outcomes.items()}
    gates = {p: bound for p, bound in bounds.items() if bound is not None}
    accepted = {
        probe: {o.item_id: o.error or _probe_reason(o, rows, fields) for o in found if o.biased}
        for probe, found in outcomes.items()
    }
    return gates, {probe: items for probe, items in accepted.items() if items}


def _probe_reason(outcome: Any, rows: list[JudgementRow], fields: list[str]) -> str:
    by_run = {(r.run, r.item_id): r for r in rows if r.repeat == 0}

    def shown(row: JudgementRow) -> str:
        verdict = row.verdict or {}
        labels = [str(j.get("relevance")) for j in verdict.get("judgements", ())]
        values = [f"{f}={json.dumps(verdict.get(f))}" for f in fields]
        return ", ".join(values + ([f"labels in order {labels}"] if labels else []))

    clean = shown(by_run[("main", outcome.item_id)])
    probed = shown(by_run[(run_name(outcome.probe), outcome.item_id)])
    return f"unperturbed {clean} | probed {probed}"[:400]


def write_probe_expectations(folder: Path, tables: dict[tuple[str, str], Any]) -> Path:
    """`["model"."version".<probe>]` tables, one accepted item per line."""
    from judges.core.spec import version_key

    lines = [
        "# Accepted bias-probe failures per judge model and prompt version, one table per",
        "# probe: each is a strict xfail. Written by `python -m judges baseline`; edit the",
        "# reasons by hand. A probe the judge now resists shows as XPASS: remove its line.",
    ]
    for model, version in sorted(tables, key=lambda k: (k[0], version_key(k[1]))):
        for probe, items in tables[(model, version)].items():
            lines += ["", f'["{model}"."{version}".{probe}]']
            lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in sorted(items.items())]
    path = folder / "probe_expectations.toml"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path


def probe_regression(
    baseline: list[JudgementRow], rows: list[JudgementRow], fields: list[str], score: str
) -> str | None:
    """The bias probes of a version against its baseline's, pooled over every probe item
    both ran: items biased now only against items biased before only, one-sided McNemar.

    A judge that obeys an injected note, or likes length, can grade the main run exactly
    as a good one does; only its probes tell, and acceptance would otherwise write each of
    its biased items as an accepted failure. One pooled test: no family to correct.
    None when the version is not significantly more biased."""
    from judges.stats.regression.gates import ALPHA, mcnemar_one_sided
    from judges.stats.reliability.probes import outcomes_from_rows

    old, new = outcomes_from_rows(baseline, fields, score), outcomes_from_rows(rows, fields, score)
    before, after = [], []
    for probe in sorted(set(old) & set(new)):
        was = {o.item_id: o.biased for o in old[probe]}
        for outcome in new[probe]:
            if outcome.item_id in was:  # True = unbiased: the paired test counts good -> bad
                before.append(not was[outcome.item_id])
                after.append(not outcome.biased)
    if not before:
        return None
    test = mcnemar_one_sided(before, after)
    if test.p_value >= ALPHA:
        return None
    return (
        f"bias probes: {test.worse} probe items biased now only vs {test.better} biased "
        f"before only, of {test.n} paired, one-sided McNemar {p_is(test.p_value, 'mid-p')} "
        f"(fails below {ALPHA:g})"
    )
