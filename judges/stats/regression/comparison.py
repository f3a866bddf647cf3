"""Paired comparison of two prompt versions of one judge on the same planted items.

Main-run rows are paired per (model, item). An item one version catches and the other misses
is a flip; McNemar's exact test says whether the flips lean one way more than chance allows,
and a paired bootstrap gives each verdict dimension's mean change with its interval.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from judges.calls.fingerprint import describe as describe_fingerprint
from judges.core.results import JudgementRow, outcome
from judges.stats.estimates.floors import detected
from judges.stats.estimates.intervals import (
    Estimate,
    McNemar,
    Rate,
    bootstrap_mean_difference,
    mcnemar_exact,
    wilson,
)
from judges.stats.estimates.paired_tests import binomial_midp

__all__ = [
    "ALPHA",
    "Comparison",
    "DimensionChange",
    "Flip",
    "bounded_score",
    "compare_versions",
    "higher_is_better",
    "numeric",
]

# The regression gates' level: a comparison reads as they would judge it.
ALPHA = 0.05


def higher_is_better(control: bool) -> bool:
    """The good direction of a score: a control keeps its marks (higher is better), a planted
    defect is marked down (lower is better). The score regression gates and the report's
    mean-change plot share it."""
    return control


def numeric(verdict: Mapping[str, Any] | None, field: str) -> float | None:
    """A verdict's numeric field; a flag (bool) or a missing value is not a score."""
    value = (verdict or {}).get(field)
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return None
    return float(value)


def bounded_score(value: float, row: JudgementRow, dim: str) -> float:
    """A score that meets its item's bound on `dim` counts as the bound itself: a defect
    scored 2 meets `<= 2` as fully as one scored 1, and a control scored 4 meets `>= 3` as one
    scored 5 does, so neither is worse than a baseline that scored lower (higher). An exact
    target (`level == 2`) has no good direction: its distance from the target counts, in the
    side's direction (lower is better on defects, higher on controls)."""
    for expectation in row.expect:
        bound = expectation.value
        if expectation.field != dim or isinstance(bound, bool):
            continue
        if not isinstance(bound, int | float):
            continue
        if expectation.op == "==":
            return -abs(value - bound) if row.control else abs(value - bound)
        # Inclusive bounds only: under `< 2` a 2 fails, so a 1 must not become 2.
        below = expectation.op == "<=" and value <= bound
        above = expectation.op == ">=" and value >= bound
        if below or above:
            value = float(bound)
    return value


@dataclass(frozen=True)
class Flip:
    """One item whose detection changed between the two versions."""

    item_id: str
    category: str
    control: bool
    before: str
    after: str
    now_detected: bool  # True: missed -> caught (or false positive -> held)

    def as_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "category": self.category,
            "control": self.control,
            "before": self.before,
            "after": self.after,
            "direction": "missed->caught" if self.now_detected else "caught->missed",
        }


@dataclass(frozen=True)
class DimensionChange:
    dimension: str
    mean_before: float
    mean_after: float
    change: Estimate  # after - before, resampled in pairs
    control: bool  # the side: controls, or planted defects
    # False when the side's expectations on the dimensions ask for exact values or point the
    # other way (a relevance label `level == 3`): no direction of the mean is good as such.
    directed: bool = True

    @property
    def side(self) -> str:
        return "controls" if self.control else "planted defects"

    @property
    def higher_is_better(self) -> bool:
        return higher_is_better(self.control)

    @property
    def good(self) -> bool | None:
        """Whether the mean moved the good way for the side's purpose; None: no change."""
        value = self.change.value
        if not self.directed or math.isnan(value) or value == 0:
            return None
        return (value > 0) == self.higher_is_better

    def as_dict(self) -> dict[str, Any]:
        return {
            "dimension": self.dimension,
            "side": self.side,
            "higher_is_better": self.higher_is_better if self.directed else None,
            "mean_before": _round(self.mean_before),
            "mean_after": _round(self.mean_after),
            "change": self.change.as_dict(),
        }


@dataclass(frozen=True)
class Comparison:
    """Prompt version `before` against `after` for one judge model."""

    judge: str
    model: str
    before: str
    after: str
    n_pairs: int  # items with a main-run row under both versions
    only_before: int
    only_after: int
    detection_before: Rate  # planted defects of the paired items
    detection_after: Rate
    mcnemar: McNemar  # on planted defects; controls are reported as flips only
    flips: tuple[Flip, ...]
    dimensions: tuple[DimensionChange, ...]
    # One-sided McNemar mid-p on the defects' flips: that `after` detects fewer (`worse`),
    # or more (`better`), than `before`; 1.0 when nothing flipped.
    midp_worse: float
    midp_better: float
    fingerprints_before: tuple[str, ...] = ()  # judges that answered, described
    fingerprints_after: tuple[str, ...] = ()

    @property
    def significantly_worse(self) -> bool:
        """`after` detects fewer planted defects: what the regression gate would decide."""
        return self.midp_worse < ALPHA

    @property
    def significantly_better(self) -> bool:
        return self.midp_better < ALPHA

    @property
    def mixed_fingerprints(self) -> bool:
        """The two sides were not judged by one and the same recorded judge."""
        return self.fingerprints_before != self.fingerprints_after

    @property
    def caught_to_missed(self) -> list[Flip]:
        return [flip for flip in self.flips if not flip.now_detected]

    @property
    def missed_to_caught(self) -> list[Flip]:
        return [flip for flip in self.flips if flip.now_detected]

    def as_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "model": self.model,
            "before": self.before,
            "after": self.after,
            "n_pairs": self.n_pairs,
            "only_before": self.only_before,
            "only_after": self.only_after,
            "detection_before": self.detection_before.as_dict(),
            "detection_after": self.detection_after.as_dict(),
            "mcnemar": self.mcnemar.as_dict(),
            "caught_to_missed": len(self.caught_to_missed),
            "missed_to_caught": len(self.missed_to_caught),
            "flips": [flip.as_dict() for flip in self.flips],
            "dimensions": [change.as_dict() for change in self.dimensions],
            "fingerprints_before": list(self.fingerprints_before),
            "fingerprints_after": list(self.fingerprints_after),
            "mixed_fingerprints": self.mixed_fingerprints,
        }


def _round(value: float) -> float | None:
    return None if math.isnan(value) else round(float(value), 4)


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else math.nan


def _main_by_item(rows: Iterable[JudgementRow], model: str) -> dict[str, JudgementRow]:
    return {
        row.item_id: row
        for row in sorted(rows, key=lambda r: r.key)
        if row.run == "main" and row.model == model and row.repeat == 0
    }


def _compare_model(
    judge: str,
    model: str,
    before: tuple[str, Sequence[JudgementRow]],
    after: tuple[str, Sequence[JudgementRow]],
    dimensions: Sequence[str],
) -> Comparison:
    old, new = _main_by_item(before[1], model), _main_by_item(after[1], model)
    paired = sorted(set(old) & set(new))
    defects = [item for item in paired if not new[item].control]
    was = [detected(old[item]) for item in defects]
    now = [detected(new[item]) for item in defects]
    flips = tuple(
        Flip(
            item,
            new[item].category,
            new[item].control,
            outcome(old[item]),
            outcome(new[item]),
            detected(new[item]),
        )
        for item in paired
        if detected(old[item]) != detected(new[item])
    )
    changes = [
        change
        for control in (True, False)
        for dimension in dimensions
        if (change := _change(old, new, paired, dimension, control)) is not None
    ]
    undirected = {c.control for c in changes if not _directed(new, paired, c.control, dimensions)}
    changes = [replace(c, directed=c.control not in undirected) for c in changes]
    tests = mcnemar_exact(was, now)
    return Comparison(
        judge=judge,
        model=model,
        before=before[0],
        after=after[0],
        n_pairs=len(paired),
        only_before=len(set(old) - set(new)),
        only_after=len(set(new) - set(old)),
        detection_before=wilson(sum(was), len(was)),
        detection_after=wilson(sum(now), len(now)),
        mcnemar=tests,
        flips=flips,
        dimensions=tuple(changes),
        midp_worse=binomial_midp(tests.b, tests.b + tests.c),
        midp_better=binomial_midp(tests.c, tests.b + tests.c),
        fingerprints_before=_described(old[item] for item in paired),
        fingerprints_after=_described(new[item] for item in paired),
    )


def _change(
    old: Mapping[str, JudgementRow],
    new: Mapping[str, JudgementRow],
    paired: Sequence[str],
    dimension: str,
    control: bool,
) -> DimensionChange | None:
    """The paired mean change of one dimension on one side; None when the side has no item.

    Controls and planted defects are apart: their scores should move in opposite directions.
    """
    items = [item for item in paired if new[item].control == control]
    if not items:
        return None
    xs: list[float] = []
    ys: list[float] = []
    for item in items:
        x, y = numeric(old[item].verdict, dimension), numeric(new[item].verdict, dimension)
        if old[item].status == new[item].status == "ok" and x is not None and y is not None:
            xs.append(x)
            ys.append(y)
    change = bootstrap_mean_difference(ys, xs, paired=True)
    return DimensionChange(dimension, _mean(xs), _mean(ys), change, control)


def _directed(
    rows: Mapping[str, JudgementRow], paired: Sequence[str], control: bool, fields: Sequence[str]
) -> bool:
    """Whether every expectation on a score of the side points the good way: at least on
    controls (higher is better), at most on planted defects (lower is better)."""
    good_ops = {">=", ">"} if higher_is_better(control) else {"<=", "<"}
    return all(
        expectation.op in good_ops
        for item in paired
        if rows[item].control == control
        for expectation in rows[item].expect
        if expectation.field in fields
    )


def _described(rows: Iterable[JudgementRow]) -> tuple[str, ...]:
    return tuple(sorted({describe_fingerprint(row.fingerprint) for row in rows}))


def compare_versions(
    judge: str,
    before: tuple[str, Sequence[JudgementRow]],
    after: tuple[str, Sequence[JudgementRow]],
    dimensions: Sequence[str],
) -> list[Comparison]:
    """One comparison per judge model of the `after` rows: (version, rows) on each side."""
    models = sorted({row.model for row in after[1] if row.run == "main"})
    return [_compare_model(judge, model, before, after, dimensions) for model in models]
