"""The per-item verdict table a syrupy snapshot guards: deterministic, nothing volatile.

A re-recorded run that changes any verdict changes this table, so the snapshot test fails
until `pytest --snapshot-update` accepts it; the snapshot diff is the review.
"""

from __future__ import annotations

from typing import Any

from judges.core.results import JudgementRow

# Verdict fields worth reviewing; rationale and raw text are left to failures.md.
_FIELDS = (
    "factual_accuracy", "factual_accuracy_as_judged", "completeness", "causal_reasoning",
    "core_total", "product_identity_match", "reference_product", "answer_product",
    "faithfulness", "coverage", "coherence", "fluency", "overall",
    "score", "level", "missing", "extra",
)  # fmt: skip


def _stable(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, list | tuple):
        return [_stable(v) for v in value]
    return value


def verdict_table(rows: list[JudgementRow]) -> list[dict[str, Any]]:
    """One entry per item, sorted by item id."""
    table = []
    for row in sorted(rows, key=lambda r: (r.item_id, r.run, r.repeat)):
        verdict = row.verdict or {}
        entry: dict[str, Any] = {
            "item": row.item_id,
            "category": row.category,
            "control": row.control,
            "status": row.status,
            "expected": [str(e) for e in row.expect],
            "met": row.met,
        }
        entry |= {f: _stable(verdict[f]) for f in _FIELDS if f in verdict}
        table.append(entry)
    return table
