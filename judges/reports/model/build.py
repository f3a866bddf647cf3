"""A folder's report from its merged rows: detection, reliability, gates, failures, usage."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import fields

from judges.core.results import DamagedLine, JudgementRow, Usage
from judges.core.spec import JudgeSpec, prompt_hash
from judges.reports.model.data import RUNS, FolderReport, ModelReport, UsageLine
from judges.reports.sections.coercions import coercion_line
from judges.reports.sections.fingerprints import fingerprints
from judges.sets.planted import PlantedSet
from judges.sets.probes import NOISE_RUN
from judges.stats.regression.comparison import Comparison
from judges.verdicts.build import build_verdict
from judges.verdicts.estimate import configured_estimate
from judges.verdicts.figures import (
    baseline_comparison,
    coercions,
    dimensions_of,
    ranking,
    rates,
    scores,
    version_comparisons,
)
from judges.verdicts.inputs import Sources
from judges.verdicts.pairwise import folder_pairwise
from judges.verdicts.verdict import ModelVerdict


def _status_by_run(rows: Sequence[JudgementRow]) -> dict[str, dict[str, int]]:
    counts: dict[str, Counter[str]] = {}
    for row in rows:
        counts.setdefault(row.run, Counter())[row.status] += 1
    order = {run: index for index, run in enumerate(RUNS)}
    return {
        run: dict(sorted(counts[run].items()))
        for run in sorted(counts, key=lambda r: (order.get(r, len(order)), r))
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
    """The model's verdict (`judges.verdicts`), with what the report shows beside it."""
    verdict = build_verdict(
        model, version, rows, folder_rows, sources, dimensions, flag, previous, baselines
    )
    notes = list(verdict.notes)
    planted = sources.planted
    main = [row for row in rows if row.run == "main"]
    asked = [item.id for item in planted.main_items(version, model)] if planted else []
    judge = sources.spec.name if sources.spec else ""
    pass_rate = configured_estimate(judge, version, model, main, planted, notes)
    return ModelReport(
        **{f.name: getattr(verdict, f.name) for f in fields(ModelVerdict)}
        | {"notes": tuple(notes)},
        n_main=len(main),
        planted_items=len(asked) if planted else None,
        **rates(main),
        status_by_run=_status_by_run(rows),
        scores=scores(main, dimensions),
        comparison=comparison,
        baseline_comparison=baseline_comparison(
            judge,
            model,
            version,
            rows,
            verdict.baseline_version,
            comparison,
            baselines or {},
            dimensions,
        ),
        pass_rate=pass_rate,
        **ranking(model, version, main, planted, sources.memo),
        coercions=coercion_line(
            coercions(main), lenient=bool(sources.spec and sources.spec.config.coerce)
        ),
    )


def _previous_rows(
    previous: tuple[str, Sequence[JudgementRow] | None] | None, model: str
) -> tuple[str, Sequence[JudgementRow]] | None:
    if previous is None or previous[1] is None:
        return None
    return previous[0], [row for row in previous[1] if row.model == model]


def _template_hash(spec: JudgeSpec | None, version: str) -> str | None:
    # A callable judge has no template: its code is what the judge was shown.
    if spec is None or spec.team is not None or version not in spec.prompts:
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
            estimated_usd=round(math.fsum(r.usage.estimated_usd for r in group), 4),
            estimated_calls=sum(r.usage.estimated_calls for r in group),
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
        before = (previous[0], previous[1])
        comparisons = version_comparisons(judge, before, (version, rows), dimensions)
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
        pairwise=folder_pairwise(version, rows, sources.planted),
    )


def _damaged_note(damaged: Sequence[DamagedLine]) -> list[str]:
    if not damaged:
        return []
    where = "; ".join(f"line {d.line} ({d.reason[:120]})" for d in damaged[:5])
    return [
        f"{len(damaged)} damaged line(s) of {damaged[0].path.name} are not rows and are left "
        f"out of this report (kept in the file: fix or delete them): {where}"
        + ("; ..." if len(damaged) > 5 else "")
    ]
