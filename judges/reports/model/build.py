"""A folder's report from its merged rows: detection, reliability, gates, failures, usage."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from judges.core.results import DamagedLine, JudgementRow, Usage
from judges.core.spec import JudgeSpec, prompt_hash
from judges.reports.model.data import RUNS, Failure, FolderReport, ModelReport, UsageLine
from judges.reports.sections.coercions import coercion_line
from judges.reports.sections.completeness import missing_items, missing_runs
from judges.reports.sections.estimate import configured_estimate
from judges.reports.sections.fitness import model_fitness, retest_from_fitness, sme_from_fitness
from judges.reports.sections.pairwise import PairwiseReport, outputs_of, pairwise_report
from judges.reports.sections.probes import ProbeReport, probe_report, probe_score
from judges.reports.sections.regressions import fingerprints, regressions
from judges.reports.sections.sources import Sources
from judges.sets.planted import Gates, PlantedSet
from judges.sets.probes import NOISE_RUN
from judges.sets.reading_list import RUN
from judges.sets.tables import load_tables
from judges.stats.estimates.floors import Gate, detected, evaluate
from judges.stats.estimates.intervals import wilson
from judges.stats.estimates.memo import Memo
from judges.stats.fitness.judge import accepted_not_fit
from judges.stats.fitness.pairwise import is_pairwise
from judges.stats.ranking.ranker import queries_from_rows, summarise
from judges.stats.ranking.reading_list import ReadingListResult, evaluate_run, gate_failures
from judges.stats.regression.comparison import Comparison, compare_versions, numeric
from judges.stats.reliability.calibration import sme_dimension
from judges.stats.reliability.gates import (
    evaluate_reliability,
    noise_floor,
    panel_agreement,
    sme_calibration,
    test_retest,
)
from judges.stats.reliability.label_stability import (
    LabelStability,
    evaluate_stability,
    noise_stability,
    retest_stability,
)


def dimensions_of(spec: JudgeSpec | None, rows: Sequence[JudgementRow]) -> tuple[str, ...]:
    if spec is not None:
        return tuple(spec.config.dimensions)
    # Without a spec, every numeric field of a verdict is a dimension.
    found = {
        key
        for row in rows
        if row.run == "main" and row.status == "ok"
        for key in (row.verdict or {})
        if numeric(row.verdict, key) is not None
    }
    return tuple(sorted(found))


def _status_by_run(rows: Sequence[JudgementRow]) -> dict[str, dict[str, int]]:
    counts: dict[str, Counter[str]] = {}
    for row in rows:
        counts.setdefault(row.run, Counter())[row.status] += 1
    order = {run: index for index, run in enumerate(RUNS)}
    return {
        run: dict(sorted(counts[run].items()))
        for run in sorted(counts, key=lambda r: (order.get(r, len(order)), r))
    }


def _reliability(
    model: str,
    version: str,
    rows: Sequence[JudgementRow],
    folder_rows: Sequence[JudgementRow],
    sources: Sources,
    dimensions: tuple[str, ...],
    flag: str | None,
    notes: list[str],
) -> dict[str, Any]:
    """Noise floor, test-retest, panel and SME calibration, each where its rows exist."""
    planted, spec = sources.planted, sources.spec
    main = [row for row in rows if row.run == "main"]
    runs = {row.run for row in rows}
    due: dict[str, Callable[[], Any]] = {}
    if "noise" in runs:
        n_items = len(planted.items) if planted else len({row.item_id for row in main}) or None
        due["noise_floor"] = lambda: noise_floor(rows, dimensions, flag=flag, n_items=n_items)
    if "retest" in runs and main:
        due["test_retest"] = lambda: test_retest(main, rows, dimensions, flag=flag)
    panel = planted.config.panel if planted else None
    # The cross-check may be another model; its rows then carry that model's name.
    cross_model = (panel.model if panel else None) or model
    cross = [r for r in folder_rows if r.run == "panel" and r.model == cross_model]
    if cross and main:
        temperature = spec.config.sampling.temperature if spec else None
        due["panel"] = lambda: panel_agreement(
            main,
            cross,
            dimensions,
            primary_label=f"{model} T={temperature}",
            cross_label=panel.label if panel else f"{cross_model} panel run",
            flag=flag,
        )
    labels = sources.sme_labels
    sme_due = planted is not None and version in planted.run_versions("sme")
    if labels is not None and sme_due and main and dimensions:
        dimension = sme_dimension(dimensions)
        due["sme"] = lambda: sme_calibration(main, labels, dimension, flag=flag)
    found: dict[str, Any] = {}
    for section, compute in due.items():
        try:
            found[section] = compute()
        except ValueError as error:  # e.g. a label file naming an item twice
            notes.append(f"{section} not computed: {error}")
    return found


def _gates(
    model: str,
    version: str,
    main: Sequence[JudgementRow],
    reliability: Mapping[str, Any],
    sources: Sources,
    notes: list[str],
) -> tuple[list[Gate], str | None]:
    planted = sources.planted
    table = planted.gates.get((model, version)) if planted else None
    where = None
    if planted is not None:
        source = planted.inherited_gates.get((model, version))
        table_key = f'["{model}"."{source or version}"]'
        where = f"{sources.planted_root}/{planted.judge}/gates.toml {table_key}"
        if source is not None:
            where += f" (inherited: prompt {version} has no table of its own)"
        if table is None:
            notes.append(f"no thresholds for this model and prompt version: add {where}")
            where = None
    gates: list[Gate] = list(evaluate(list(main), table))
    for section, result in reliability.items():
        if table is not None:
            try:
                gates += evaluate_reliability(section, result, getattr(table, section))
            except ValueError as error:
                notes.append(f"gates.toml: {error}")
    return gates, where


def _scores(
    main: Sequence[JudgementRow], dimensions: tuple[str, ...]
) -> dict[str, tuple[float, ...]]:
    return {
        dim: tuple(
            sorted(
                value
                for row in main
                if row.status == "ok" and (value := numeric(row.verdict, dim)) is not None
            )
        )
        for dim in dimensions
    }


def _rates(main: Sequence[JudgementRow]) -> dict[str, Any]:
    """Detection per category and overall, control false positives and the error rate."""
    defects = [row for row in main if not row.control]
    controls = [row for row in main if row.control and row.status == "ok"]
    categories: dict[str, list[bool]] = {}
    for row in defects:
        categories.setdefault(row.category, []).append(detected(row))
    return {
        "detection": {c: wilson(sum(hits), len(hits)) for c, hits in sorted(categories.items())},
        "all_defects": wilson(sum(detected(row) for row in defects), len(defects)),
        "control_false_positive": wilson(sum(not row.met for row in controls), len(controls)),
        "error_rate": wilson(sum(row.status != "ok" for row in main), len(main)),
    }


def _model_report(
    model: str,
    version: str,
    rows: Sequence[JudgementRow],
    folder_rows: Sequence[JudgementRow],
    sources: Sources,
    dimensions: tuple[str, ...],
    flag: str | None,
    comparison: Comparison | None,
    previous: tuple[str, Sequence[JudgementRow]] | None = None,
    baselines: Mapping[str, Sequence[JudgementRow]] | None = None,
) -> ModelReport:
    notes: list[str] = []
    planted = sources.planted
    main = [row for row in rows if row.run == "main"]
    by_item = {row.item_id: row for row in main}
    asked = [item.id for item in planted.main_items(version, model)] if planted else []
    pin = planted.pins.get((model, version)) if planted else None
    if pin is not None and pin.rerecorded:  # the accepted baseline, recorded again on purpose
        notes.append(f"accepted baseline (pinned {pin.pinned}), re-recorded {pin.rerecorded}")
    missing = missing_items(asked, main, notes)
    lacking = missing_runs(planted, version, model, rows, folder_rows, notes)
    reliability = _reliability(model, version, rows, folder_rows, sources, dimensions, flag, notes)
    fitness = model_fitness(rows, version, sources, dimensions, flag, notes)
    # One statistic, one value: the sections show the chance tests' figures.
    if "sme" in reliability:
        reliability["sme"] = sme_from_fitness(reliability["sme"], fitness)
    if "test_retest" in reliability:
        reliability["test_retest"] = retest_from_fitness(reliability["test_retest"], fitness)
    gates, where = _gates(model, version, main, reliability, sources, notes)
    fields = (*dimensions, *([flag] if flag else []))
    probes = _probes(model, version, rows, sources, fields, previous)
    gates += probes.gates if probes is not None else ()
    stability = _label_stability(rows, sources.spec)
    reading = _reading_list(rows, planted, notes, sources.memo)
    table = planted.gates.get((model, version)) if planted else None
    if table is not None:
        gates += _extra_gates(table, stability, reading, notes)
    misses = planted.accepted_misses.get((model, version), {}) if planted else {}
    # Before the report is built: the regression gates add notes of their own.
    regression_gates = regressions(
        model, version, rows, sources, baselines or {}, dimensions, notes
    )
    judge = sources.spec.name if sources.spec else ""
    pass_rate = configured_estimate(judge, version, model, main, planted, notes)
    return ModelReport(
        fitness=fitness,
        chance_tests_apply=not is_pairwise(rows),
        accept_not_fit=accepted_not_fit(fitness, table),
        model=model,
        n_main=len(main),
        planted_items=len(asked) if planted else None,
        missing_items=missing,
        missing_runs=lacking,
        **_rates(main),
        status_by_run=_status_by_run(rows),
        noise_floor=reliability.get("noise_floor"),
        test_retest=reliability.get("test_retest"),
        panel=reliability.get("panel"),
        sme=reliability.get("sme"),
        gates=tuple(gates),
        gates_table=where,
        gates_version=planted.inherited_gates.get((model, version)) if planted else None,
        baseline_version=table.baseline if table is not None else None,
        failures=tuple(
            Failure(row, misses.get(row.item_id))
            for row in main
            if row.status != "ok" or not row.met
        ),
        accepted_met=tuple(
            item for item in sorted(misses) if item in by_item and detected(by_item[item])
        ),
        scores=_scores(main, dimensions),
        comparison=comparison,
        notes=tuple(notes),
        probes=probes,
        label_stability=stability,
        reading_list=reading,
        **regression_gates,
        pass_rate=pass_rate,
        **_ranking(model, version, main, planted, sources.memo),
        coercions=coercion_line(main, lenient=bool(sources.spec and sources.spec.config.coerce)),
    )


def _label_stability(
    rows: Sequence[JudgementRow], spec: JudgeSpec | None
) -> tuple[LabelStability, ...]:
    """Per-value stability of the judge's declared labels, for the runs that exist."""
    labels = dict(spec.config.labels) if spec else {}
    runs = {row.run for row in rows}
    found = []
    if labels and {"main", "retest"} <= runs:
        found.append(retest_stability(rows, rows, labels))
    if labels and "noise" in runs:
        found.append(noise_stability(rows, labels))
    return tuple(found)


def _reading_list(
    rows: Sequence[JudgementRow], planted: PlantedSet | None, notes: list[str], memo: Memo | None
) -> ReadingListResult | None:
    """The judge's reading-list run scored as a ranking, when the run exists."""
    if planted is None or not planted.reading_list or not any(r.run == RUN for r in rows):
        return None
    try:
        return evaluate_run(list(rows), planted, memo)
    except ValueError as error:  # e.g. candidates without a judgement after a `-k` run
        notes.append(f"reading list not scored: {error}")
        return None


def _extra_gates(
    table: Gates,
    stability: Sequence[LabelStability],
    reading: ReadingListResult | None,
    notes: list[str],
) -> list[Gate]:
    """Label-stability and reading-list thresholds of gates.toml, as report gates."""
    gates: list[Gate] = []
    try:
        if stability:
            runs = {result.run for result in stability}
            mine = {k: v for k, v in table.label_stability.items() if k.split(".")[0] in runs}
            gates += evaluate_stability(stability, mine)
        if reading is not None and table.reading_list:
            gate_failures(reading, table.reading_list)  # refuses unknown metrics
            judge = reading.ranker("judge").metrics
            gates += [
                Gate(f"reading_list.{key}", judge[key], threshold, True)
                for key, threshold in sorted(table.reading_list.items())
            ]
    except ValueError as error:
        notes.append(f"gates.toml: {error}")
    return gates


def _ranking(
    model: str,
    version: str,
    main: Sequence[JudgementRow],
    planted: PlantedSet | None,
    memo: Memo | None,
) -> dict[str, Any]:
    """The judge as a ranker, for sets whose gates.toml sets ranking thresholds."""
    gates = planted.gates.get((model, version)) if planted else None
    if planted is None or gates is None or not gates.ranking or not main:
        return {}
    summary = summarise(queries_from_rows(main, planted), memo=memo)
    return {"ranking": summary, "ranking_note": gates.ranking_known_failure}


def _probes(
    model: str,
    version: str,
    rows: Sequence[JudgementRow],
    sources: Sources,
    fields: Sequence[str],
    previous: tuple[str, Sequence[JudgementRow]] | None,
) -> ProbeReport | None:
    """The bias-probe section, when the set has probes and this version has probe rows."""
    planted = sources.planted
    score = probe_score(planted)
    if planted is None or score is None:
        return None
    gates = planted.gates.get((model, version))
    accepted = load_tables(Path(planted.path) / "probe_expectations.toml").get((model, version))
    return probe_report(rows, fields, score, gates, previous, accepted)


def _previous_rows(
    previous: tuple[str, Sequence[JudgementRow] | None] | None, model: str
) -> tuple[str, Sequence[JudgementRow]] | None:
    if previous is None or previous[1] is None:
        return None
    return previous[0], [row for row in previous[1] if row.model == model]


def _template_hash(spec: JudgeSpec | None, version: str) -> str | None:
    if spec is None or version not in spec.prompts:
        return None
    return prompt_hash(spec.config.system, spec.prompts[version].templates)


def _prompt_hashes(rows: Sequence[JudgementRow]) -> dict[str, tuple[str, ...]]:
    # Each prompt embeds its item, so hashes differ per item; per item they must agree.
    # A bias probe changes the item's inputs on purpose: its prompts are not counted.
    found: dict[str, set[str]] = {}
    for row in rows:
        if row.run.startswith("probe-") and row.run != NOISE_RUN:
            continue
        found.setdefault(row.item_id, set()).add(row.prompt_hash)
    return {item: tuple(sorted(found[item])) for item in sorted(found)}


def _usage(rows: Sequence[JudgementRow]) -> tuple[UsageLine, ...]:
    grouped: dict[tuple[str, str], list[JudgementRow]] = {}
    for row in rows:
        grouped.setdefault((row.model, row.run), []).append(row)
    lines = []
    for (model, run), group in sorted(grouped.items()):
        usage = Usage(
            calls=sum(r.usage.calls for r in group),
            input_tokens=sum(r.usage.input_tokens for r in group),
            output_tokens=sum(r.usage.output_tokens for r in group),
            cost_usd=round(math.fsum(r.usage.cost_usd for r in group), 4),
        )
        lines.append(UsageLine(model, run, len(group), usage))
    return tuple(lines)


def _known_rows(
    rows: list[JudgementRow], planted: PlantedSet | None, notes: list[str]
) -> list[JudgementRow]:
    """Rows of items still in the planted set; the others are left out, with a note."""
    if planted is None:
        return rows
    known = {item.id for item in [*planted.items, *planted.reading_list]}
    stale = sorted({row.item_id for row in rows if row.item_id not in known})
    if stale:
        notes.append(
            f"rows of {len(stale)} items no longer in the planted set were left out: "
            + ", ".join(stale[:10])
            + (", ..." if len(stale) > 10 else "")
        )
    return [row for row in rows if row.item_id in known]


def build_report(
    judge: str,
    version: str,
    rows: Sequence[JudgementRow],
    sources: Sources,
    previous: tuple[str, Sequence[JudgementRow] | None] | None = None,
    damaged: Sequence[DamagedLine] = (),
    baselines: Mapping[str, Sequence[JudgementRow]] | None = None,
) -> FolderReport:
    """A folder's report from its merged rows; `previous` = (version, rows or None if absent).

    `damaged`: lines of the results file that are not rows, counted in a note.
    """
    notes = list(sources.notes) + _damaged_note(damaged)
    rows = _known_rows(sorted(rows, key=lambda r: r.key), sources.planted, notes)
    spec = sources.spec
    dimensions = dimensions_of(spec, rows)
    flag = spec.config.flag if spec else None
    comparisons: dict[str, Comparison] = {}
    if previous is not None and previous[1] is not None:
        found = compare_versions(judge, (previous[0], previous[1]), (version, rows), dimensions)
        comparisons = {c.model: c for c in found}
    models = sorted({row.model for row in rows if row.run != "panel"}) or sorted(
        {row.model for row in rows}
    )
    return FolderReport(
        judge=judge,
        version=version,
        previous_version=previous[0] if previous else None,
        previous_rows=previous is not None and previous[1] is not None,
        template_hash=_template_hash(spec, version),
        prompt_hashes=_prompt_hashes(rows),
        rows_by_run={run: n for run, n in sorted(Counter(row.run for row in rows).items())},
        dimensions=dimensions,
        flag=flag,
        sme_labels=(
            f"{sources.planted_root}/sme/{sources.planted.config.sme_labels}"
            if sources.planted is not None and sources.planted.config.sme_labels
            else None
        ),
        models=tuple(
            _model_report(
                model,
                version,
                [row for row in rows if row.model == model],
                rows,
                sources,
                dimensions,
                flag,
                comparisons.get(model),
                _previous_rows(previous, model),
                baselines or {},
            )
            for model in models
        ),
        usage=_usage(rows),
        notes=tuple(notes),
        fingerprints=fingerprints(rows),
        damaged=tuple(str(line) for line in damaged),
        pairwise=_pairwise(version, rows, sources) if is_pairwise(rows) else None,
    )


def _pairwise(
    version: str, rows: Sequence[JudgementRow], sources: Sources
) -> PairwiseReport | None:
    planted = sources.planted
    gates = {
        model: planted.gates.get((model, version)) if planted is not None else None
        for model in {row.model for row in rows}
    }
    return pairwise_report(rows, gates, outputs_of(planted.items if planted else ()))


def _damaged_note(damaged: Sequence[DamagedLine]) -> list[str]:
    if not damaged:
        return []
    where = "; ".join(f"line {d.line} ({d.reason[:120]})" for d in damaged[:5])
    return [
        f"{len(damaged)} damaged line(s) of {damaged[0].path.name} are not rows and are left "
        f"out of this report (kept in the file: fix or delete them): {where}"
        + ("; ..." if len(damaged) > 5 else "")
    ]
