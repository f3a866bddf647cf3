"""The cost of a report's calls in words: which part of it is estimated, not reported.

A call whose reply reported no usage, or was cut off after the request was sent, counts at
its worst case (`judges.calls.ledger.settlement`); every place that shows a cost says so.
"""

from __future__ import annotations

from judges.calls.ledger import Usage

# Under a usage table whose cost holds worst cases (Markdown; HTML shows it as prose).
ESTIMATED_NOTE = (
    "Estimated: calls whose reply reported no usage, or was cut off after the request was "
    "sent, are counted at their worst case (prompt tokens estimated from the request, plus "
    "`max_tokens`), as `--cost-cap` counts them."
)


def cost_cell(usage: Usage) -> str:
    """A cost in USD, and the part of it that is a worst case when there is one."""
    if not usage.estimated_calls:
        return f"{usage.cost_usd:.4f}"
    return f"{usage.cost_usd:.4f} ({usage.estimated_usd:.4f} estimated)"


def estimated_part(usage: Usage) -> str:
    """The terminal's words for the estimated part of a cost; nothing when none is."""
    if not usage.estimated_calls:
        return ""
    calls = "call" if usage.estimated_calls == 1 else "calls"
    return (
        f", of which ${usage.estimated_usd:.4f} estimated ({usage.estimated_calls} {calls} "
        "with no usage reported or cut off, each at its worst case: prompt + max_tokens)"
    )
