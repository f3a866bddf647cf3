"""The regression reference: the accepted baseline as two draws, not one.

A baseline is one draw of its judge; a lucky one (every defect caught by chance) makes every
later honest re-record look worse against it. Where the accepted version also has a retest
run (an independent re-recording of the same prompt), each item has two baseline draws, and
an unchanged judge's new draw is exchangeable with both: the gate's p-value is then the new
run's sum against picks from each item's three draws (`three_draw_lower`), so the
baseline's own draw-to-draw variation is in the reference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from judges.core.results import JudgementRow
from judges.stats.estimates.paired_tests import three_draw_lower

__all__ = ["ReferenceTest", "against_both_draws"]


class ReferenceTest:
    """The three-draw test of one gate: its mid-p and the words that say so."""

    def __init__(self, midp: float, n: int) -> None:
        self.midp = midp
        self.n = n

    def words(self) -> str:
        shown = "p < 0.0001" if self.midp < 0.0001 else f"p = {self.midp:.4f}"
        return (
            f"against both baseline draws (main and retest) of {self.n} items, "
            f"exchangeable-draw mid-{shown}"
        )


def against_both_draws(
    pairs: Sequence[tuple[JudgementRow, JudgementRow]],
    retest: Sequence[JudgementRow],
    value: Callable[[JudgementRow], float | None],
    higher_is_better: bool,
) -> ReferenceTest | None:
    """The three-draw test over `pairs` (baseline main row, new row), or None where the
    baseline's retest does not answer every paired item (the two-draw test then decides)."""
    again = {row.item_id: row for row in retest if row.repeat == 0 and row.status == "ok"}
    draws = []
    for main, new in pairs:
        other = again.get(main.item_id)
        if other is None:
            return None
        three = (value(main), value(other), value(new))
        if any(v is None for v in three):
            continue
        draws.append(tuple(float(v) if higher_is_better else -float(v) for v in three))  # type: ignore[arg-type]
    if not draws:
        return None
    first, second, new_values = (list(column) for column in zip(*draws, strict=True))
    return ReferenceTest(three_draw_lower(first, second, new_values).midp, len(draws))
