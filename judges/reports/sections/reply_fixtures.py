"""The report section of a callable judge's reply fixtures: each fixture's check of its
expectations and its property, apart from the planted statistics, which they never feed
(they test the team's parsing and scoring on raw replies, not the model)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from judges.calls.credentials import scrub
from judges.core.quoting import md_cell

MESSAGE_LIMIT = 300  # characters of a failure's first line kept
Check = Literal["fixture", "property"]
Outcome = Literal["passed", "failed", "skipped"]


@dataclass(frozen=True)
class ReplyCheck:
    """One test of one reply fixture: its expectations (`fixture`) or its property."""

    fixture: str
    check: Check
    control: bool
    outcome: Outcome
    message: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.fixture, self.check)


def short_message(text: str) -> str:
    """A failure's first line, scrubbed and bounded, as the file keeps it."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    first = scrub(first)
    return first if len(first) <= MESSAGE_LIMIT else first[: MESSAGE_LIMIT - 3] + "..."


_CHECKS = {"fixture": "expectations", "property": "property"}


def reply_fixtures_markdown(checks: Sequence[ReplyCheck]) -> list[str]:
    """The section's lines; none for a judge without reply fixtures."""
    if not checks:
        return []
    failed = sum(check.outcome == "failed" for check in checks)
    fixtures = len({check.fixture for check in checks})
    lines = [
        "## Reply fixtures (no statistic)",
        "",
        f"{fixtures} reply fixtures, {len(checks)} checks, {failed} failed. The judge's own "
        "parsing and scoring ran on recorded raw replies with no model call; these results "
        "feed no detection, fitness or regression figure above.",
        "",
        "| fixture | kind | check | outcome | first line of the failure |",
        "|---|---|---|---|---|",
    ]
    for check in checks:
        kind = "control" if check.control else "defect"
        lines.append(
            f"| {md_cell(check.fixture)} | {kind} | {_CHECKS[check.check]} | "
            f"{check.outcome.upper()} | {md_cell(check.message) if check.message else ''} |"
        )
    return [*lines, ""]
