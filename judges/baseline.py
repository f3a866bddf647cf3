"""Accept a recorded baseline: accepted misses and gate thresholds from what the judge did.

`python -m judges baseline <judge>` reads the main-run rows in
`reports/<judge>/<version>/results.jsonl` and writes, beside the planted set:

- `expectations.toml`: every item the judge missed, per judge model and prompt version,
  with the reason (what was expected, what it returned). These become strict xfails.
- `gates.toml`: thresholds set at what the judge achieved, rounded to the next 0.05 in
  the strict direction, so a prompt that detects less (or flags more controls) fails.

Both are meant to be read in review and edited by hand; rerunning overwrites them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from judges.core.checks import describe_verdict
from judges.core.results import JudgementRow
from judges.files import atomic_write_text
from judges.stats.gates import control_false_positive_rate, detection_rates, error_rate
from judges.stats.reliability import gate_statistics
from judges.stats.stats import Rate

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
    return f"expected {expected}; returned {describe_verdict(row)}"[:300]


def accepted_misses(rows: Iterable[JudgementRow]) -> dict[str, str]:
    return {
        row.item_id: miss_reason(row)
        for row in sorted(rows, key=lambda r: r.item_id)
        if row.run == "main" and not (row.status == "ok" and row.met)
    }


def detection_gates(rows: list[JudgementRow]) -> dict[str, Any]:
    main = [row for row in rows if row.run == "main"]
    gates: dict[str, Any] = {
        "min_detection": {c: floor_step(r.rate) for c, r in detection_rates(main).items()},
        "max_error_rate": ceil_step(error_rate(main).rate),
    }
    controls = control_false_positive_rate(main)
    if controls.n:
        gates["max_control_false_positive"] = ceil_step(controls.rate)
    return gates


def reliability_gates(sections: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Thresholds at the achieved noise floor, test-retest, panel and SME statistics."""
    gates: dict[str, dict[str, float]] = {}
    for section, result in sections.items():
        if result is None:
            continue
        table: dict[str, float] = {}
        for key, (statistic, at_least) in sorted(gate_statistics(result).items()):
            value = statistic.rate if isinstance(statistic, Rate) else statistic.value
            if statistic.n and not math.isnan(value):
                table[key] = floor_step(value) if at_least else ceil_step(value)
        if table:
            gates[section] = table
    return gates


def probe_baseline(
    rows: list[JudgementRow], fields: list[str], score: str
) -> tuple[dict[str, float], dict[str, dict[str, str]]]:
    """`max_flip` at each probe's achieved biased rate, and its biased items as accepted."""
    from judges.stats.probes import outcomes_from_rows, probe_effect

    outcomes = outcomes_from_rows(rows, fields, score)
    gates = {p: ceil_step(probe_effect(p, found).biased.rate) for p, found in outcomes.items()}
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
    probed = shown(by_run[(f"probe-{outcome.probe}", outcome.item_id)])
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


# A per-value stability gate needs this many units; fewer would gate on noise.
MIN_UNITS_PER_VALUE = 5


def label_stability_gates(rows: list[JudgementRow], labels: dict[str, str]) -> dict[str, Any]:
    """Minimum shares of labels kept in retest and noise runs, at what the judge achieved."""
    from judges.stats import label_stability

    results = []
    if labels and any(row.run == "retest" for row in rows):
        results.append(label_stability.retest_stability(rows, rows, labels))
    if labels and any(row.run == "noise" for row in rows):
        results.append(label_stability.noise_stability(rows, labels))
    table: dict[str, float] = {}
    for result in results:
        for key, rate in label_stability.gate_statistics(result).items():
            per_value = key.count(".") > 1
            if rate.n and (not per_value or rate.n >= MIN_UNITS_PER_VALUE):
                table[key] = floor_step(rate.rate)
    return {"label_stability": table} if table else {}


def reading_list_gates(rows: list[JudgementRow], planted: Any) -> dict[str, Any]:
    """Minimum reading-list metrics of the judge, at what it achieved."""
    from judges.sets.reading_list import RUN, evaluate_run
    from judges.stats.reading_list import SHOWN

    if planted is None or not planted.reading_list or not any(r.run == RUN for r in rows):
        return {}
    judge = evaluate_run(rows, planted).ranker("judge").metrics
    return {"reading_list": {key: floor_step(judge[key].value) for key in SHOWN}}


def _toml_value(value: Any) -> str:
    if isinstance(value, dict):
        inner = ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)


def _toml_key(key: str) -> str:
    bare = key.replace("_", "").replace("-", "").isalnum()
    return key if bare else json.dumps(key)


def render_tables(header: str, tables: dict[tuple[str, str], dict[str, Any]]) -> str:
    """`["model"."version"]` tables in model and version order."""
    from judges.core.spec import version_key

    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    for model, version in sorted(tables, key=lambda k: (k[0], version_key(k[1]))):
        lines += ["", f'["{model}"."{version}"]']
        lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in tables[(model, version)].items()]
    return "\n".join(lines) + "\n"


def write_baseline(
    folder: Path, rows_by_version: dict[str, list[JudgementRow]], extra_gates: dict[Any, Any]
) -> tuple[Path, Path]:
    misses: dict[tuple[str, str], dict[str, Any]] = {}
    gates: dict[tuple[str, str], dict[str, Any]] = {}
    for version, rows in rows_by_version.items():
        for model in sorted({row.model for row in rows}):
            mine = [row for row in rows if row.model == model]
            missed = accepted_misses(mine)
            if missed:
                misses[(model, version)] = missed
            gates[(model, version)] = detection_gates(mine) | extra_gates.get((model, version), {})
    expectations = folder / "expectations.toml"
    atomic_write_text(
        expectations,
        render_tables(
            "Accepted misses per judge model and prompt version: each is a strict xfail.\n"
            "Written by `python -m judges baseline` from the recorded baseline; edit the\n"
            "reasons by hand. A fixed item shows as XPASS: remove its line.",
            misses,
        ),
    )
    gates_path = folder / "gates.toml"
    atomic_write_text(
        gates_path,
        render_tables(
            "Gate thresholds per judge model and prompt version, set by\n"
            "`python -m judges baseline` at what the judge achieved (rounded to 0.05 in the\n"
            "strict direction): a prompt that detects less or flags more controls fails.",
            gates,
        ),
    )
    return expectations, gates_path
