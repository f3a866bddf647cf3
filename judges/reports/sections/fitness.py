"""The fitness section of a report: the chance tests of one judge, version and model.

Rendered by `judges.reports.render.fitness`.
"""

from __future__ import annotations

from collections.abc import Sequence

from judges.core.results import JudgementRow
from judges.reports.sections.sources import Sources
from judges.stats.fitness.chance import Fitness
from judges.stats.fitness.judge import judge_fitness

__all__ = ["model_fitness"]


def model_fitness(
    rows: Sequence[JudgementRow],
    version: str,
    sources: Sources,
    dimensions: tuple[str, ...],
    flag: str | None,
    notes: list[str],
) -> Fitness | None:
    """The chance tests, for a judge with a planted set and main-run rows."""
    if sources.planted is None or not any(row.run == "main" for row in rows):
        return None
    try:
        return judge_fitness(
            rows, sources.planted, version, dimensions=dimensions, flag=flag,
            sme_labels=sources.sme_labels,
        )  # fmt: skip
    except ValueError as error:  # e.g. a label file naming an item twice
        notes.append(f"fitness not computed: {error}")
        return None
