"""The rows a session gathered: from its tests, from xdist workers, and from a record phase
cut short; with the usage they add up to per model."""

from __future__ import annotations

from collections.abc import Iterable

from judges.core.results import JudgementRow, Usage
from judges.reports.sections.reply_fixtures import ReplyCheck


class GatheredRows:
    def __init__(self) -> None:
        self.rows: list[JudgementRow] = []
        # (judge, version) -> the outcomes of its reply fixtures' tests in this session.
        self.reply_checks: dict[tuple[str, str], list[ReplyCheck]] = {}

    def add_reply_check(self, judge: str, version: str, check: ReplyCheck) -> None:
        self.reply_checks.setdefault((judge, version), []).append(check)

    def add_rows(self, rows: Iterable[object]) -> None:
        self.rows.extend(JudgementRow.model_validate(row) for row in rows)

    def add_unreported(self, rows: Iterable[JudgementRow]) -> int:
        """Rows judged live that no test reported (a record phase cut short), each once."""
        reported = {row.key for row in self.rows}
        new = [row for row in rows if row.key not in reported]
        self.rows.extend(new)
        return len(new)

    def usage_by_model(self) -> dict[str, Usage]:
        """Calls, tokens and cost per model over every row of this session."""
        totals: dict[str, Usage] = {}
        for row in self.rows:
            totals.setdefault(row.model, Usage()).add(row.usage)
        return dict(sorted(totals.items()))
