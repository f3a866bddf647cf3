"""The report line that counts lenient-parsing coercions (judges with `coerce = true`).

A coerced value is format drift the judge got away with: counted per judgement and per
field (`judges.verdicts.figures.coercions`), so a prompt version that makes the judge drift
shows it next to its detection.
"""

from __future__ import annotations

from judges.verdicts.figures import Coercions


def coercion_line(found: Coercions, lenient: bool) -> str | None:
    """One sentence for the report, or None for a strict judge with nothing coerced."""
    if not lenient and not found.coerced:
        return None
    if not found.coerced:
        return f"Lenient parsing (coerce = true): no reply needed a conversion (n={found.n})."
    fields = ", ".join(f"{name} {n}" for name, n in sorted(found.per_field.items()))
    return (
        f"Lenient parsing (coerce = true): {found.coerced}/{found.n} judgements needed a "
        f"conversion, {found.rate} ({fields}); each is listed on its row under `coerced`."
    )
