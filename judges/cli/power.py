"""`python -m judges plan` and `python -m judges estimate`: set sizes, corrected pass rates."""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judges.core.results import JudgementRow
from judges.core.spec import JudgeSpec
from judges.sets.folder import GATES_FILE

# A file that exists, so the example runs as printed (tests/test_hostile_inputs.py runs it).
ESTIMATE_EXAMPLE = (
    "python -m judges estimate product_identity --version 0.3.1 "
    "--outputs reports/product_identity/0.3.1/results.jsonl"
)


def _fail(command: str, message: str) -> int:
    print(f"python -m judges {command}: {message}", file=sys.stderr)
    return 2


def _version_rows(
    command: str, args: argparse.Namespace, spec: JudgeSpec, default: str | None = None
) -> tuple[str, str, list[JudgementRow]] | str:
    """(version, model, rows) of the chosen prompt version (else `default`, else the newest),
    or an error message."""
    from judges.reports.model.folders import Results, ResultsMissing

    version = args.version or default or spec.versions[-1]
    if version not in spec.versions:
        return (
            f"--version {version}: not a prompt version of {spec.name} ({', '.join(spec.versions)})"
        )
    try:
        rows = Results(args.reports).rows(spec.name, version)
    except ResultsMissing as error:
        return str(error)
    models = sorted({row.model for row in rows if row.run == "main"})
    model = args.model or (models[0] if len(models) == 1 else spec.config.baseline_model)
    if model not in models:
        return f"--model {model}: no main run of {spec.name} {version} ({', '.join(models)})"
    return version, model, rows


def _plan(args: argparse.Namespace) -> int:
    from judges.stats.planning.set_sizes import plan_set
    from judges.stats.reliability.agreement import quadratic_kappa
    from judges.stats.reliability.calibration import judge_and_human, sme_dimension
    from judges.stats.reliability.noise import noise_floor
    from judges.verdicts.inputs import load_sources
    from judges.verdicts.set_design import weak_set_lines

    catalog = args.catalog
    spec = catalog[args.judge]
    sources = load_sources(args.judge, catalog, args.planted_sets)
    baseline = _accepted_baseline(spec, sources.planted, args.model)
    found = _version_rows("plan", args, spec, baseline)
    if isinstance(found, str):
        return _fail("plan", found)
    version, model, rows = found
    dimensions = spec.config.dimensions
    noise = [r for r in rows if r.run == "noise" and r.model == model]
    floor = noise_floor(noise, dimensions) if noise else None
    noise_sd = {
        d: n.pooled_sd
        for d, n in (floor.dimensions.items() if floor else ())
        if not math.isnan(n.pooled_sd)
    }
    kappa = None
    if sources.sme_labels and dimensions:
        main = [r for r in rows if r.run == "main" and r.model == model]
        pairs = judge_and_human(main, list(sources.sme_labels), sme_dimension(dimensions))
        values = [v for pair in pairs.values() for v in pair]
        if len(pairs) >= 2 and all(float(v).is_integer() for v in values):
            kappa = quadratic_kappa([j for j, _ in pairs.values()], [h for _, h in pairs.values()])
    config = sources.planted.config if sources.planted else None
    try:
        plan = plan_set(
            args.judge, version, model, rows, dimensions,
            noise_sd=noise_sd,
            noise_items=floor.n_items if floor else 0,
            noise_repeats=floor.n_repeats if floor else (config.noise_repeats if config else 5),
            kappa=kappa, drop=args.drop, power=args.power, alpha=args.alpha,
            scales=spec.score_scales(version),
        )  # fmt: skip
    except ValueError as error:
        return _fail("plan", str(error))
    # The plan itself says how many items a weak category needs: no pointer back to it.
    weak = weak_set_lines(sources.planted, suggest_plan=False) if sources.planted else []
    chosen = _chosen(args.version, version, baseline)
    gates = _paired_gates(args, spec, sources, version, model, rows)
    lines = [chosen, *plan.lines(), *(gate.line() for gate in gates), *weak]
    extra = {"paired_gates": [gate.as_dict() for gate in gates]}
    _emit(args, plan.as_dict() | extra | {"set_design": weak}, lines)
    return 0


@dataclass(frozen=True)
class _GateNeed:
    sensitivity: Any  # judges.stats.regression.sensitivity.Sensitivity

    def line(self) -> str:
        """The figure every report gated against this version states, and what sees --drop."""
        from judges.reports.sections import sensitivity

        found = self.sensitivity
        need = sensitivity.needs(found) if found.blind else "enough"
        return (
            f"- {found.gate} regression gate (as versions gated against this one decide it): "
            f"{sensitivity.seen(found)}; {need} ({sensitivity.basis(found)})"
        )

    def as_dict(self) -> dict[str, Any]:
        return dict(self.sensitivity.as_dict())


def _paired_gates(
    args: argparse.Namespace,
    spec: JudgeSpec,
    sources: Any,
    version: str,
    model: str,
    rows: list[JudgementRow],
) -> list[_GateNeed]:
    """The paired gates' drops (detection, control false positives), as the reports of
    versions gated against this one state them (judges.verdicts.regressions), at --drop,
    --alpha and --power."""
    from judges.sets.planted import Gates
    from judges.verdicts.regressions import baseline_sensitivity

    if sources.planted is None:
        return []
    table = sources.planted.gates.get((model, version)) or Gates()
    table = table.model_copy(update={"alpha": args.alpha, "min_detectable_drop": args.drop})
    mine = [r for r in rows if r.model == model]
    fields = (tuple(spec.config.dimensions), spec.config.flag)
    found, _ = baseline_sensitivity(model, version, mine, sources, fields, table, args.power)
    return [_GateNeed(gate) for gate in found]


def _accepted_baseline(spec: JudgeSpec, planted: Any, model: str | None) -> str | None:
    """The prompt version gates.toml accepts as the baseline of the model (the judge's
    baseline model by default), as the newest version's table says; None when none."""
    if planted is None:
        return None
    gates = planted.gates.get((model or spec.config.baseline_model, spec.versions[-1]))
    baseline = gates.baseline if gates is not None else None
    return baseline if baseline in spec.versions else None


def _chosen(asked: str | None, version: str, baseline: str | None) -> str:
    """Which prompt version the plan is for, and why that one."""
    if asked is not None:
        return f"prompt {version} (--version)"
    if baseline is not None:
        return f"prompt {version}: the accepted baseline in {GATES_FILE} (--version V for another)"
    return f"prompt {version}: the newest; {GATES_FILE} names no baseline (--version V for another)"


def _estimate(args: argparse.Namespace) -> int:
    from judges.reports.sections.estimate import estimate_dict, estimate_lines
    from judges.sets.planted import PlantedSetError, load_planted_set
    from judges.verdicts.estimate import (
        EstimateError,
        default_pass_rule,
        estimate_pass_rate,
        parse_condition,
        read_outputs,
    )

    spec = args.catalog[args.judge]
    found = _version_rows("estimate", args, spec)
    if isinstance(found, str):
        return _fail("estimate", found)
    version, model, rows = found
    try:
        if args.pass_if:
            rule = tuple(parse_condition(text) for text in args.pass_if)
        else:
            rule = default_pass_rule(load_planted_set(args.planted_sets, spec))
        verdicts, left_out = read_outputs(args.outputs)
        main = [r for r in rows if r.run == "main" and r.model == model]
        result = estimate_pass_rate(
            args.judge, version, model, main, verdicts, rule, left_out, seed=args.seed
        )
    except (EstimateError, PlantedSetError) as error:
        return _fail("estimate", str(error))
    _emit(args, estimate_dict(result), estimate_lines(result))
    return 0


def _emit(args: argparse.Namespace, data: dict[str, Any], lines: list[str]) -> None:
    if args.json:
        print(json.dumps(data, indent=2, sort_keys=True))
    else:
        print("\n".join(lines))


def _common(parser: argparse.ArgumentParser, judge_type: Any) -> None:
    parser.add_argument("judge", type=judge_type, help="judge name, e.g. product_identity")
    parser.add_argument("--version", help="prompt version (default: the newest)")
    parser.add_argument(
        "--model", "--judge-model", help="judge model (default: the only one recorded)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument(
        "--reports",
        "--report-dir",
        type=Path,
        help="reports folder (default: reports/ beside the pytest ini)",
    )
    parser.add_argument(
        "--planted-sets",
        type=Path,
        help="planted sets folder (default: the ini's, or planted_sets)",
    )


def _share(text: str) -> float:
    value = float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text}")
    return value


def add_power_commands(commands: Any, judge_type: Any) -> None:
    """Register `plan` and `estimate` on the top-level subparsers."""
    plan = commands.add_parser(
        "plan",
        help="items per category, noise repeats and SME labels needed to detect a drop",
        description="From a prompt version's recorded runs (their own flips and spread), "
        "how many planted items each category and score gate, how many noise-floor repeats "
        "and how many SME labels the set needs for its regression gates to detect a drop "
        "of --drop with --power (one-sided at --alpha). See "
        "`python -m judges docs statistics-power`.",
    )
    _common(plan, judge_type)
    plan.add_argument("--drop", type=_share, default=0.1, help="drop to detect (default 0.1)")
    plan.add_argument("--power", type=_share, default=0.8, help="power (default 0.8)")
    plan.add_argument("--alpha", type=_share, default=0.05, help="one-sided alpha (0.05)")
    plan.set_defaults(run=_plan)
    estimate = commands.add_parser(
        "estimate",
        help="bias-corrected pass rate of the judge's verdicts on unlabelled outputs",
        description="Turn the judge's verdicts on unlabelled outputs (a results.jsonl or a "
        "JSONL of verdicts) into a pass rate corrected for the judge's TPR (controls it "
        "passes) and TNR (planted defects it fails) on the planted set's main run of the "
        "same version (Rogan-Gladen), with a bootstrap interval that includes the "
        "uncertainty of TPR and TNR. See `python -m judges docs statistics-power`.",
        epilog=f"example (from the harness's own repository; a results file stands in for "
        f"unlabelled outputs):\n  {ESTIMATE_EXAMPLE}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(estimate, judge_type)
    estimate.add_argument(
        "--outputs", type=Path, required=True, help="JSONL: results rows or verdict objects"
    )
    estimate.add_argument(
        "--pass-if",
        action="append",
        metavar="CONDITION",
        help="what passes, e.g. 'factual_accuracy >= 2' (repeatable; all must hold; "
        "default: what every control of the planted set expects)",
    )
    estimate.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    estimate.set_defaults(run=_estimate)
