"""A verdict's floors: the reliability sections (noise floor, test-retest, panel, SME),
label stability and the reading list, each where its rows exist, and every gates.toml
threshold evaluated on them, by section."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from judges.core.results import JudgementRow
from judges.core.spec import JudgeSpec
from judges.sets.folder import GATES_FILE
from judges.sets.planted import STABILITY_FLOORS, Gates
from judges.sets.reading_list import RUN
from judges.stats.estimates.floors import Gate, evaluate
from judges.stats.estimates.memo import Memo
from judges.stats.ranking.reading_list import ReadingListResult, evaluate_run, gate_failures
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
from judges.verdicts.inputs import Sources, reading_list_candidates

__all__ = ["gates_table", "label_stability", "reading_list", "reliability", "table_floors"]


def reliability(
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


def gates_table(
    model: str, version: str, sources: Sources, notes: list[str]
) -> tuple[Gates | None, str | None]:
    """The version's gates.toml table and where it is, as a report names it."""
    planted = sources.planted
    table = planted.gates.get((model, version)) if planted else None
    if planted is None:
        return None, None
    source = planted.inherited_gates.get((model, version))
    where = f'{sources.planted_root}/{planted.judge}/{GATES_FILE} ["{model}"."{source or version}"]'
    if source is not None:
        where += f" (inherited: prompt {version} has no table of its own)"
        origin = planted.gates[(model, source)]  # what it inherited from
        dropped = [s for s in STABILITY_FLOORS if getattr(origin, s)]
        if origin.accept_not_fit and dropped:
            notes.append(
                f"{', '.join(dropped)} floors of prompt {source} not inherited: it was accepted "
                "NOT FIT, and a judge at chance is steadier than a good one"
            )
    if table is None:
        notes.append(f"no thresholds for this model and prompt version: add {where}")
        return None, None
    return table, where


def table_floors(
    table: Gates | None,
    main: Sequence[JudgementRow],
    sections: Mapping[str, Any],
    notes: list[str],
) -> dict[str, tuple[Gate, ...]]:
    """The detection floors and each reliability section's, by section."""
    floors: dict[str, tuple[Gate, ...]] = {"detection": tuple(evaluate(list(main), table))}
    for section, result in sections.items():
        if table is not None:
            try:
                floors[section] = tuple(
                    evaluate_reliability(section, result, getattr(table, section))
                )
            except ValueError as error:
                notes.append(f"{GATES_FILE}: {error}")
    return floors


def label_stability(
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


def reading_list(
    rows: Sequence[JudgementRow], sources: Sources, notes: list[str], memo: Memo | None
) -> ReadingListResult | None:
    """The judge's reading-list run scored as a ranking, when the run exists."""
    planted = sources.planted
    if planted is None or not planted.reading_list or not any(r.run == RUN for r in rows):
        return None
    if sources.reading_list is None:
        notes.append(f"reading list not scored: {planted.folder.config_path} names no reading_list")
        return None
    try:
        return evaluate_run(
            list(rows), sources.reading_list, reading_list_candidates(planted), memo
        )
    except ValueError as error:  # e.g. candidates without a judgement after a `-k` run
        notes.append(f"reading list not scored: {error}")
        return None


def extra_floors(
    table: Gates,
    stability: Sequence[LabelStability],
    reading: ReadingListResult | None,
    notes: list[str],
) -> dict[str, tuple[Gate, ...]]:
    """Label-stability and reading-list thresholds of gates.toml, by section."""
    floors: dict[str, tuple[Gate, ...]] = {}
    try:
        if stability:
            runs = {result.run for result in stability}
            mine = {k: v for k, v in table.label_stability.items() if k.split(".")[0] in runs}
            floors["label_stability"] = tuple(evaluate_stability(stability, mine))
        if reading is not None and table.reading_list:
            gate_failures(reading, table.reading_list)  # refuses unknown metrics
            judge = reading.ranker("judge").metrics
            floors["reading_list"] = tuple(
                Gate(f"reading_list.{key}", judge[key], threshold, True)
                for key, threshold in sorted(table.reading_list.items())
            )
    except ValueError as error:
        notes.append(f"{GATES_FILE}: {error}")
    return floors
