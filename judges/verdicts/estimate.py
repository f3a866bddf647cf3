"""`python -m judges estimate`: a judge's verdicts on unlabelled outputs, bias-corrected.

What passes is a rule on verdict fields (`--pass-if "factual_accuracy >= 2"`, repeatable;
every condition must hold). By default it is what every control of the planted set expects:
a harmless answer is one the judge should pass. On the planted set's main run of the same
prompt version and model, controls give the TPR (good answers passed) and planted defects
the TNR (bad answers failed); the outputs file gives the raw pass rate. Rows that failed
are counted and left out, never read as a pass or a fail.

Computed here, below the reports: report.md, report.json and the command's output word it
(`judges.reports.sections.estimate`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judges.core.results import Expectation, JudgementRow
from judges.sets.folder import SET_FILE
from judges.sets.planted import PlantedSet
from judges.stats.estimates.prevalence import CorrectedRate, corrected_pass_rate
from judges.storage.files import DuplicateKey, duplicate_key_message, jsonl_lines, strict_json_loads

__all__ = [
    "EstimateError",
    "PassRateEstimate",
    "configured_estimate",
    "default_pass_rule",
    "estimate_pass_rate",
    "parse_condition",
    "read_outputs",
]

_CONDITION = re.compile(r"^\s*([a-z_][a-z0-9_.]*)\s*(==|!=|<=|>=|<|>)\s*(.+?)\s*$")


class EstimateError(ValueError):
    """Input the estimate cannot use; the message names the file or option and the fix."""


def parse_condition(text: str) -> Expectation:
    """`field op value`, the value read as JSON (3, true, "x") or else as a bare string."""
    match = _CONDITION.match(text)
    if match is None:
        raise EstimateError(
            f"--pass-if {text!r}: expected `field op value`, e.g. 'factual_accuracy >= 2' "
            "(op one of == != <= >= < >)"
        )
    field, op, raw = match.groups()
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    # The model checks the op, as it does one read from a set file.
    return Expectation.model_validate({"field": field, "op": op, "value": value})


def default_pass_rule(planted: PlantedSet) -> tuple[Expectation, ...]:
    """The conditions every control of the set expects (a good answer passes them)."""
    controls = [item for item in planted.items if item.control]
    if not controls:
        raise EstimateError(
            f"{planted.path}: the set has no control items, so what passes is not defined; "
            "pass --pass-if 'field op value'"
        )
    shared = set.intersection(*({str(e) for e in item.expect} for item in controls))
    rule = tuple(e for e in controls[0].expect if str(e) in shared)
    if not rule:
        raise EstimateError(
            f"{planted.path}: the controls expect different things, so no pass rule is shared; "
            "pass --pass-if 'field op value'"
        )
    return rule


def passes(verdict: dict[str, Any], rule: Sequence[Expectation]) -> bool:
    return all(condition.holds(verdict) for condition in rule)


def read_outputs(path: Path) -> tuple[list[dict[str, Any]], Counter[str]]:
    """Verdicts of a JSONL file: results rows (status ok only), `{"verdict": ...}` objects or
    bare verdict objects; the lines left out, by reason."""
    verdicts: list[dict[str, Any]] = []
    left_out: Counter[str] = Counter()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise EstimateError(f"--outputs {path}: {error.strerror or error}") from error
    for number, line in enumerate(jsonl_lines(text), start=1):
        if not line.strip():
            continue
        try:
            data = strict_json_loads(line)
        except DuplicateKey as duplicate:
            raise EstimateError(duplicate_key_message(path, duplicate, number)) from None
        except json.JSONDecodeError as error:
            raise EstimateError(f"{path}:{number}: not JSON ({error.msg})") from error
        if not isinstance(data, dict):
            raise EstimateError(f"{path}:{number}: expected a JSON object per line")
        if "status" in data and "judge" in data:
            try:
                row = JudgementRow.model_validate(data)
            except ValidationError as error:
                raise EstimateError(f"{path}:{number}: not a results row: {error}") from error
            if row.status != "ok" or row.verdict is None:
                left_out[f"failed judgement ({row.status})"] += 1
                continue
            verdicts.append(row.verdict)
        elif isinstance(data.get("verdict"), dict):
            verdicts.append(data["verdict"])
        else:
            verdicts.append(data)
    if not verdicts:
        raise EstimateError(
            f"--outputs {path}: no usable verdict ({sum(left_out.values())} left out)"
        )
    return verdicts, left_out


@dataclass(frozen=True)
class PassRateEstimate:
    """The corrected pass rate of one version and model's outputs under a pass rule."""

    judge: str
    version: str
    model: str
    rule: tuple[Expectation, ...]
    rate: CorrectedRate
    outputs_left_out: dict[str, int]
    labelled_left_out: int  # planted rows that failed

    @property
    def dropped_share(self) -> float:
        """The share of bootstrap draws left out with TPR + TNR <= 1."""
        return self.rate.dropped / (self.rate.resamples + self.rate.dropped)


def estimate_pass_rate(
    judge: str,
    version: str,
    model: str,
    main: Sequence[JudgementRow],
    verdicts: Sequence[dict[str, Any]],
    rule: Sequence[Expectation],
    outputs_left_out: Counter[str] | None = None,
    seed: int = 0,
) -> PassRateEstimate:
    """TPR and TNR from the planted main run under `rule`, applied to the outputs."""
    ok = [row for row in main if row.status == "ok" and row.verdict is not None]
    controls = [passes(row.verdict or {}, rule) for row in ok if row.control]
    defects = [not passes(row.verdict or {}, rule) for row in ok if not row.control]
    if not controls or not defects:
        raise EstimateError(
            f"{judge} {version} {model}: the main run needs answered controls and planted "
            f"defects to measure TPR and TNR (has {len(controls)} and {len(defects)}); record "
            "it first"
        )
    passed = sum(passes(v, rule) for v in verdicts)
    try:
        rate = corrected_pass_rate(
            passed,
            len(verdicts),
            (sum(controls), len(controls)),
            (sum(defects), len(defects)),
            seed=seed,
        )
    except ValueError as error:
        raise EstimateError(f"{judge} {version} {model}: {error}") from error
    return PassRateEstimate(
        judge,
        version,
        model,
        tuple(rule),
        rate,
        dict(outputs_left_out or {}),
        len(main) - len(ok),
    )


def configured_estimate(
    judge: str,
    version: str,
    model: str,
    main: Sequence[JudgementRow],
    planted: PlantedSet | None,
    notes: list[str],
) -> PassRateEstimate | None:
    """The corrected pass rate of the outputs file set.toml names for this version, if any;
    a note (never silence) when it cannot be computed."""
    if planted is None or version not in planted.config.outputs:
        return None
    path = planted.path / planted.config.outputs[version]
    try:
        pass_if = planted.config.pass_if
        rule = tuple(map(parse_condition, pass_if)) if pass_if else default_pass_rule(planted)
        verdicts, left_out = read_outputs(path)
        return estimate_pass_rate(judge, version, model, main, verdicts, rule, left_out)
    except EstimateError as error:
        notes.append(f"pass-rate estimate not computed ({SET_FILE} outputs): {error}")
        return None
