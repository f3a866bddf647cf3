"""Accept a recorded baseline: accepted misses, the baseline run and suggested gate floors,
and the bias probes' ceilings, accepted failures and regression test.

`python -m judges baseline <judge>` reads the main-run rows in
`reports/<judge>/<version>/results.jsonl` and writes, beside the planted set:

- `expectations.toml`: every item the judge missed, per judge model and prompt version,
  with the reason (what was expected, what it returned). These become strict xfails.
- `gates.toml`: which prompt version's main run is the accepted baseline of the regression
  gates, and the absolute floors. Floors are the team's: existing ones are kept; a missing
  one is suggested where the next run of an equally good judge reaches it with probability
  1 - 0.05/20 (never the achieved point value, which one re-recording of the same prompt
  misses by chance half the time, nor a perfect run's value).
- `probe_expectations.toml`: each bias probe's biased items, accepted as strict xfails; its
  `max_flip` ceilings go to gates.toml, and a version more biased than its baseline is
  refused (`probe_regression`).

All are meant to be read in review and edited by hand; `judges.sets.folder` writes them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from judges.core.checks import describe_returned
from judges.core.results import JudgementRow
from judges.core.spec import version_key
from judges.reports.format import p_is
from judges.sets.folder import GATES_FILE, SetFolder
from judges.sets.planted import STABILITY_FLOORS
from judges.sets.probes import run_name
from judges.stats.estimates.floors import (
    RatePrior,
    control_false_positive_rate,
    detection_rates,
    error_rate,
    predicted_bound,
    shared_prior,
)
from judges.stats.estimates.intervals import Estimate, Rate
from judges.stats.reliability.gates import gate_statistics
from judges.verdicts.vocabulary import FIT, NOT_FIT

_STEP = 0.05


def floor_step(value: float) -> float:
    """The largest multiple of 0.05 not above `value` (so the achieved value passes)."""
    step = round(math.floor(value / _STEP + 1e-9) * _STEP, 2)
    return step if step <= value else round(step - _STEP, 2)


def ceil_step(value: float) -> float:
    """The smallest multiple of 0.05 not below `value`."""
    step = round(math.ceil(value / _STEP - 1e-9) * _STEP, 2)
    return step if step >= value else round(step + _STEP, 2)


def miss_reason(row: JudgementRow) -> str:
    expected = " and ".join(str(e) for e in row.expect)
    if row.status != "ok":
        return f"{row.status}: {(row.error or '')[:160]}"
    return f"expected {expected}; returned {describe_returned(row)}"[:300]


def accepted_misses(rows: Iterable[JudgementRow]) -> dict[str, str]:
    return {
        row.item_id: miss_reason(row)
        for row in sorted(rows, key=lambda r: r.item_id)
        if row.run == "main" and not (row.status == "ok" and row.met)
    }


# Each suggested floor is missed by a judge as good as the accepted run at most this often,
# so a table of up to FLOOR_FAMILY floors is met in full at least 95% of the time.
FLOOR_FAMILY = 20
FLOOR_MISS = 0.05 / FLOOR_FAMILY
FLOORS_MET = (
    "each suggested floor is one a judge as good as the accepted run meets with probability "
    f"{1 - FLOOR_MISS:.4f} or more ({FLOOR_FAMILY} such floors all together: 95%), a bound "
    "for the next run, never this run's value; rates only (detection, false positives, "
    "exact matches, flag and label stability): one run cannot bound the next one's sd, "
    "kappa or alpha"
)


def _bound(
    statistic: Rate | Estimate,
    at_least: bool,
    others: Sequence[Rate] = (),
    prior: RatePrior | None = None,
) -> float | None:
    """The suggested floor: the predicted bound (missed with chance FLOOR_MISS) rounded down
    (a ceiling: rounded up).

    None where there is nothing to suggest: no data, an estimate (see predicted_bound), or a
    rate whose floor would be 0.0 (or ceiling 1.0), which no run can fail; a gate that cannot
    fail is no gate.
    """
    predicted = predicted_bound(statistic, at_least, FLOOR_MISS, others, prior)
    if predicted is None or math.isnan(predicted):
        return None
    bound = floor_step(predicted) if at_least else ceil_step(predicted)
    if isinstance(statistic, Rate) and (bound <= 0.0 if at_least else bound >= 1.0):
        return None
    return bound


def detection_floors(rows: list[JudgementRow]) -> dict[str, Any]:
    """Suggested floors from the main run, with its retest pooled in where the version has
    one (both are draws of the judge on the same items): a bound a re-recording meets.

    A detection floor at or below the control false-positive ceiling is below chance (a
    judge flagging everything at that rate passes both): it is not suggested.
    """
    main = [row for row in rows if row.run == "main"]
    retest = [row for row in rows if row.run == "retest" and row.repeat == 0]  # its first draw
    again = _same_items(main, retest)
    false_positives = [control_false_positive_rate(retest)] if again else []
    ceiling = _bound(control_false_positive_rate(main), False, false_positives)
    retest_rates = detection_rates(retest) if again else {}
    draws = {
        c: [r, *([retest_rates[c]] if c in retest_rates else [])]
        for c, r in detection_rates(main).items()
    }
    # The categories are one judge's: what they show together bounds each one's luck.
    prior = shared_prior([
        (sum(r.successes for r in rates), sum(r.n for r in rates)) for rates in draws.values()
    ])  # fmt: skip
    detection = {c: _bound(rates[0], True, rates[1:], prior) for c, rates in draws.items()}
    floors: dict[str, Any] = {
        "min_detection": {
            c: v for c, v in detection.items() if v is not None and (ceiling is None or v > ceiling)
        },
        # A failed call is the harness's or backend's fault, not judge noise: no slack.
        "max_error_rate": ceil_step(error_rate(main).rate) if main else None,
        "max_control_false_positive": ceiling,
    }
    return {key: value for key, value in floors.items() if value not in (None, {})}


def _same_items(main: list[JudgementRow], retest: list[JudgementRow]) -> bool:
    """Whether the retest redrew exactly the main run's items (then its rates pool)."""
    return bool(retest) and sorted(r.item_id for r in retest) == sorted(r.item_id for r in main)


def _below_chance(key: str, bound: float) -> bool:
    """An agreement floor (kappa, Spearman, alpha) at or below 0 passes a judge at chance
    (about half the time at exactly 0): it says nothing about fitness."""
    return key.split(".")[0] in ("min_kappa", "min_spearman", "min_alpha") and bound <= 0


def reliability_floors(sections: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Suggested floors from the interval bounds of the noise floor, retest, panel and SME."""
    floors: dict[str, dict[str, float]] = {}
    for section, result in sections.items():
        if result is None:
            continue
        table: dict[str, float] = {}
        for key, (statistic, at_least) in sorted(gate_statistics(result).items()):
            bound = _bound(statistic, at_least)
            if bound is not None and not _below_chance(key, bound):
                table[key] = bound
        if table:
            floors[section] = table
    return floors


def _drop_below_chance(table: dict[str, Any]) -> list[str]:
    """Remove floors below chance from a merged table (gates.toml would refuse them)."""
    notes = []
    ceiling = table.get("max_control_false_positive")
    detection = table.get("min_detection") or {}
    for category, floor in sorted(detection.items()):
        if ceiling is not None and floor <= ceiling:
            del detection[category]
            notes.append(
                f"min_detection.{category} = {floor} dropped: at or below "
                f"max_control_false_positive = {ceiling}, a judge flagging at random passes it"
            )
    if "min_detection" in table and not detection:
        del table["min_detection"]
    for section in ("sme", "test_retest", "panel", "noise_floor"):
        for key, floor in sorted((table.get(section) or {}).items()):
            if _below_chance(key, floor):
                del table[section][key]
                notes.append(f"{section}.{key} = {floor} dropped: at or below chance (0)")
    return notes


# The gates.toml keys a suggestion can set: what --reset-floors replaces.
SUGGESTED = (
    "min_detection", "max_control_false_positive", "max_error_rate", "noise_floor",
    "test_retest", "panel", "sme", "label_stability", "reading_list", "max_flip",
)  # fmt: skip


def merge_floors(
    existing: dict[str, Any], suggested: dict[str, Any], *, reset: bool
) -> tuple[dict[str, Any], list[str]]:
    """The team's floors kept (unless `reset`), suggestions only where none is set.

    `reset` replaces every floor a suggestion could set: one with no suggestion now (a
    detection floor at chance, say) is dropped, and said, never kept to fail the run.
    Returns the merged table and one line per kept floor that differs from its suggestion.
    """
    merged = {key: (dict(v) if isinstance(v, dict) else v) for key, v in existing.items()}
    notes: list[str] = []
    for key in SUGGESTED if reset else ():
        value = merged.pop(key, None)
        fresh = suggested.get(key)
        for name, floor in value.items() if isinstance(value, dict) else [("", value)]:
            if floor is not None and (fresh is None or (name and name not in fresh)):
                shown = f"{key}.{name}" if name else key
                notes.append(f"{shown} = {floor} dropped (--reset-floors: nothing to suggest)")
    for key, value in suggested.items():
        if isinstance(value, dict):
            table = {} if reset else dict(merged.get(key) or {})
            for name, floor in value.items():
                kept = table.setdefault(name, floor)
                if kept != floor:
                    notes.append(f"{key}.{name} = {kept} kept (suggested {floor})")
            merged[key] = dict(sorted(table.items()))
        elif reset or key not in merged:
            merged[key] = value
        elif merged[key] != value:
            notes.append(f"{key} = {merged[key]} kept (suggested {value})")
    return merged, notes


# A per-value stability gate needs this many units; fewer would gate on noise.
MIN_UNITS_PER_VALUE = 5


def label_stability_gates(rows: list[JudgementRow], labels: dict[str, str]) -> dict[str, Any]:
    """Suggested minimum shares of labels kept in retest and noise runs (lower Wilson bound)."""
    from judges.stats.reliability import label_stability

    results = []
    if labels and any(row.run == "retest" for row in rows):
        results.append(label_stability.retest_stability(rows, rows, labels))
    if labels and any(row.run == "noise" for row in rows):
        results.append(label_stability.noise_stability(rows, labels))
    table: dict[str, float] = {}
    for result in results:
        for key, rate in label_stability.gate_statistics(result).items():
            per_value = key.count(".") > 1
            bound = _bound(rate, True)
            if bound is not None and (not per_value or rate.n >= MIN_UNITS_PER_VALUE):
                table[key] = bound
    return {"label_stability": table} if table else {}


def reading_list_gates(rows: list[JudgementRow], sources: Any) -> dict[str, Any]:
    """Suggested minimum reading-list metrics of the judge (lower bootstrap bound)."""
    from judges.sets.reading_list import RUN
    from judges.stats.ranking.reading_list import SHOWN, evaluate_run
    from judges.verdicts.inputs import reading_list_candidates

    planted, reading_list = sources.planted, sources.reading_list
    if planted is None or reading_list is None or not any(r.run == RUN for r in rows):
        return {}
    candidates = reading_list_candidates(planted)
    judge = evaluate_run(rows, reading_list, candidates).ranker("judge").metrics
    bounds = {key: _bound(judge[key], True) for key in SHOWN}
    return {"reading_list": {key: b for key, b in bounds.items() if b is not None}}


_ORDER = (
    "accept_not_fit",
    "accept_regression",
    "accept_undecided",
    "baseline",
    "alpha",
    "min_detection",
    "max_error_rate",
    "max_control_false_positive",
)


def _ordered(table: dict[str, Any]) -> dict[str, Any]:
    first = [key for key in _ORDER if key in table]
    return {key: table[key] for key in first + sorted(set(table) - set(first))}


# What a team accepts by name, per version: never inherited by the next version.
ACCEPTANCES = ("accept_not_fit", "accept_regression", "accept_undecided", "pairwise_accepted")


def inherited_table(
    existing: dict[tuple[str, str], dict[str, Any]], model: str, version: str
) -> tuple[dict[str, Any], list[str]]:
    """The newest earlier version's table of `model`: the floors `version` inherits, and a
    note per floor section left behind (STABILITY_FLOORS of a table accepted NOT FIT)."""
    earlier = [v for (m, v) in existing if m == model and version_key(v) < version_key(version)]
    if not earlier:
        return {}, []
    source = max(earlier, key=version_key)
    table = dict(existing[(model, source)])
    table.pop("baseline", None)  # set below from --accept
    notes = []
    if table.get("accept_not_fit"):
        for section in STABILITY_FLOORS:
            if table.pop(section, None):
                notes.append(
                    f"{section} of prompt {source} not inherited: it was accepted NOT FIT, "
                    "and a judge at chance is steadier than a good one"
                )
    # Never inherited: a new prompt version proves itself, or is accepted by name.
    for acceptance in (
        "accept_not_fit",
        "accept_regression",
        "accept_undecided",
        "pairwise_accepted",
    ):
        table.pop(acceptance, None)
    return table, notes


def write_baseline(
    folder: SetFolder,
    rows_by_version: dict[str, list[JudgementRow]],
    reliability: dict[Any, Any],
    *,
    accept: str,
    existing: dict[tuple[str, str], dict[str, Any]],
    reset_floors: bool = False,
    not_fit: dict[tuple[str, str], str | None] | None = None,
    undecided: dict[tuple[str, str], str] | None = None,
    regressed: dict[tuple[str, str], str] | None = None,
    miss_reasons: Mapping[tuple[str, str], Mapping[str, str]] | None = None,
) -> tuple[Path, Path, list[str]]:
    """Accept prompt `accept`'s main run as the baseline of the regression gates.

    Versions from `accept` on are gated against it. Only the tables of the models accepted,
    from `accept` on, change: an older version's table and another model's (an imported
    judge's, say) stay as the team left them.

    Accepted misses are rewritten from the rows. Gate floors the team set in `existing` are
    kept (all replaced with suggestions when `reset_floors`); other keys are left alone.
    `not_fit`: (model, version) -> the accept_not_fit reason to write, or None to remove it
    (a judge that is fit must not be accepted as unfit: its strict xfail would XPASS).
    `regressed`: (model, version) -> why a version worse than the baseline before it is
    accepted all the same (accept_regression); the accepted version's stale reason goes.
    `undecided`: (model, version) -> why a version no chance test could decide is accepted
    all the same (accept_undecided); likewise.
    `miss_reasons`: (model, version) -> item -> why a control miss or an item without a
    verdict is accepted (--accept-control-miss, --accept-no-verdict), kept beside its miss.
    """
    misses: dict[tuple[str, str], dict[str, Any]] = {}
    gates = {key: dict(table) for key, table in existing.items()}
    notes: list[str] = []
    accepted_models = {row.model for row in rows_by_version.get(accept, [])}
    for version, rows in rows_by_version.items():
        for model in sorted({row.model for row in rows}):
            mine = [row for row in rows if row.model == model]
            missed = accepted_misses(mine)
            for item, why in (miss_reasons or {}).get((model, version), {}).items():
                if item in missed:
                    missed[item] = f"{missed[item]} (accepted: {why})"
            if missed:
                misses[(model, version)] = missed
            if model not in accepted_models or version_key(version) < version_key(accept):
                continue
            suggested = detection_floors(mine) | reliability.get((model, version), {})
            if (not_fit or {}).get((model, version)):
                # Accepted NOT FIT: its steadiness bounds a judge at chance, not a good one.
                suggested = {k: v for k, v in suggested.items() if k not in STABILITY_FLOORS}
            own = existing.get((model, version))
            # A version without a table of its own was gated by an earlier version's floors:
            # its new table starts from those, so accepting it drops no floor the team meant.
            start, left = (
                (own, []) if own is not None else inherited_table(existing, model, version)
            )
            notes += [f'["{model}"."{version}"] {line}' for line in left]
            table, kept = merge_floors(start, suggested, reset=reset_floors)
            kept += _drop_below_chance(table)
            notes += [f'["{model}"."{version}"] {line}' for line in kept]
            table["baseline"] = accept
            if (model, version) in (not_fit or {}):
                reason = (not_fit or {})[(model, version)]
                table.pop("accept_not_fit", None)
                table |= {"accept_not_fit": reason} if reason else {}
            if version == accept:
                table.pop("accept_regression", None)
                if (model, version) in (regressed or {}):
                    table["accept_regression"] = (regressed or {})[(model, version)]
                table.pop("accept_undecided", None)
                if (model, version) in (undecided or {}):
                    table["accept_undecided"] = (undecided or {})[(model, version)]
            gates[(model, version)] = _ordered(table)
    # Gates first: a value the writer refuses (a NaN floor) leaves both files as they were.
    gates_path = folder.write_gates(gates)
    return folder.write_expectations(misses), gates_path, notes


def fitness_lines(judge: str, version: str, models: Iterable[Any]) -> list[str]:
    """One line per model of a report folder: its verdict word and what is at chance."""
    lines = []
    for m in models:
        line = f"fitness: {judge} {version} on {m.model}: {FIT if m.fit else NOT_FIT}"
        if not m.fit:
            line += "; " + "; ".join(m.fitness_reasons())
            if m.accept_not_fit:
                line += f" (accepted in {GATES_FILE}: {m.accept_not_fit})"
        lines.append(line)
    return lines


# ------------------------------------------------------------------ the bias probes


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
