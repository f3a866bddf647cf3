"""The report line that counts lenient-parsing coercions (judges with `coerce = true`).

A coerced value is format drift the judge got away with: counted per judgement and per
field, so a prompt version that makes the judge drift shows it next to its detection.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from judges.core.results import JudgementRow
from judges.stats.estimates.intervals import wilson


def coercion_counts(rows: Sequence[JudgementRow]) -> Counter[str]:
    """Conversions per field (`factual_accuracy`, `coverage.score`, ...) over the rows."""
    return Counter(entry.split(": ", 1)[0] for row in rows for entry in row.coerced)


def coercion_line(rows: Sequence[JudgementRow], lenient: bool) -> str | None:
    """One sentence for the report, or None for a strict judge with nothing coerced."""
    coerced = [row for row in rows if row.coerced]
    if not lenient and not coerced:
        return None
    if not coerced:
        return f"Lenient parsing (coerce = true): no reply needed a conversion (n={len(rows)})."
    fields = ", ".join(f"{name} {n}" for name, n in sorted(coercion_counts(rows).items()))
    rate = wilson(len(coerced), len(rows))
    return (
        f"Lenient parsing (coerce = true): {len(coerced)}/{len(rows)} judgements needed a "
        f"conversion, {rate} ({fields}); each is listed on its row under `coerced`."
    )
