"""What a session tells people at its end: one `Outcome`, built once when the session
finishes, that the terminal summary, the GitHub step summary and annotations, and the exit
status only render; and each test's JUnit properties."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from judges.calls.ledger import Ledger
from judges.core.naming import Case
from judges.pytest_plugin.session.baseline_rows import recorded_baselines
from judges.pytest_plugin.session.catalogue import Catalogue
from judges.pytest_plugin.session.judging import Judging
from judges.pytest_plugin.session.rows import GatheredRows
from judges.pytest_plugin.session.settings import Settings
from judges.stats.estimates.memo import Memo

if TYPE_CHECKING:
    from judges.reports.write import ReportSet


Markup = dict[str, bool]


@dataclass(frozen=True)
class Outcome:
    """How the session ended, for every output to render: the reports written (or checked),
    the verdict summary, what the run skipped or kept (notices), the GitHub annotations."""

    report: ReportSet | None = None
    summary: list[tuple[str, Markup]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    annotations: list[str] = field(default_factory=list)  # workflow commands, printed

    @property
    def reports_out_of_date(self) -> bool:
        """A `--check-reports` run found a committed report this run would change."""
        return self.report is not None and bool(self.report.differing)

    @property
    def silent(self) -> bool:
        return not self.summary and not self.notices and not self.annotations

    def terminal_lines(self) -> list[tuple[str, Markup]]:
        """The terminal summary's `judges` section: the verdicts, the notices (yellow), then
        the annotations GitHub reads from the log."""
        notices: list[tuple[str, Markup]] = [(line, {"yellow": True}) for line in self.notices]
        return [*self.summary, *notices, *((line, {}) for line in self.annotations)]


class Outputs:
    def __init__(
        self,
        settings: Settings,
        catalogue: Catalogue,
        judging: Judging,
        gathered: GatheredRows,
        ledger: Ledger,
        memo: Memo,
    ) -> None:
        self.settings = settings
        self.catalogue = catalogue
        self.judging = judging
        self.gathered = gathered
        self.ledger = ledger
        self.memo = memo

    def build_reports(self) -> ReportSet:
        """This session's rows merged into the report folders: built, not yet written."""
        from judges.reports.write import session_reports

        s, rows = self.settings, self.gathered.rows
        baselines = recorded_baselines(rows, self.catalogue, self.judging)
        return session_reports(
            rows, s.reports, s.planted_sets, self.catalogue.catalog, s.session_id, baselines,
            self.memo, self.gathered.reply_checks,
        )  # fmt: skip

    def outcome(self, report: ReportSet | None, notices: list[str]) -> Outcome:
        """The session's outcome; on GitHub Actions this appends the step summary."""
        summary = self.summary_lines(report) if self.gathered.rows else []
        return Outcome(report, summary, notices, self.publish_on_github(report))

    def summary_lines(self, report: ReportSet | None) -> list[tuple[str, Markup]]:
        """The terminal summary's lines, each with its markup (red, green or none)."""
        from judges.reports.terminal import summary_lines

        cap = self.settings.cost_cap_usd
        spent = None if cap is None else (cap, self.ledger.spent_usd())
        return summary_lines(
            self.gathered.rows, self.gathered.usage_by_model(), self.ledger.totals(), spent,
            report,
        )  # fmt: skip

    def publish_on_github(self, report: ReportSet | None) -> list[str]:
        """Run on GitHub Actions: append the step summary; the annotation lines to print."""
        if report is None:
            return []
        from judges.reports.render.github import publish

        s = self.settings
        return publish(report.folders, s.planted_sets, s.rootdir)

    def case_properties(self, case: Any) -> list[tuple[str, str]]:
        """JUnit properties of a test judging `case`: judge, prompt version, model, and for
        one planted item its id and category, so that CI test viewers can group tests."""
        found = [("judge", case.judge), ("prompt_version", case.version)]
        found.append(("model", str(case.model)))
        if isinstance(case, Case):
            category = self.catalogue.planted_sets[case.judge].item(case.item_id).category
            found += [("item_id", case.item_id), ("category", category)]
        return found
