"""What a session gathers and tells people at its end.

The rows it gathered (`GatheredRows`: every row journal of the session, its tests', xdist
workers' and phases', with the usage they add up to per model); one `Outcome`, built once when
the session finishes, that the terminal summary, the GitHub step summary and annotations,
and the exit status only render; and each test's JUnit properties.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judges.calls.ledger import Ledger
from judges.core.naming import Case
from judges.core.results import JudgementRow, Usage
from judges.pytest_plugin.row_journal import session_rows
from judges.pytest_plugin.session.catalogue import Catalogue
from judges.pytest_plugin.session.judging import Judging, recorded_baselines
from judges.pytest_plugin.session.settings import Settings
from judges.reports.sections.reply_fixtures import ReplyCheck
from judges.stats.estimates.memo import Memo

if TYPE_CHECKING:
    from judges.reports.write import ReportSet


Markup = dict[str, bool]


class GatheredRows:
    """The rows a session gathered, read at its end from every row journal of the session
    (its tests', its xdist workers', a record or batch phase's), with the usage they add up
    to per model; and the outcomes of its reply fixtures' tests."""

    def __init__(self) -> None:
        self.rows: list[JudgementRow] = []
        self.damaged: list[str] = []  # journal lines that held no rows, each a notice
        # (judge, version) -> the outcomes of its reply fixtures' tests in this session.
        self.reply_checks: dict[tuple[str, str], list[ReplyCheck]] = {}

    def add_reply_check(self, judge: str, version: str, check: ReplyCheck) -> None:
        self.reply_checks.setdefault((judge, version), []).append(check)

    def read_journals(self, scratch: Path, session_id: str) -> None:
        read = session_rows(scratch, session_id)
        self.rows, self.damaged = read.rows, read.damaged

    def usage_by_model(self) -> dict[str, Usage]:
        """Calls, tokens and cost per model over every row of this session."""
        totals: dict[str, Usage] = {}
        for row in self.rows:
            totals.setdefault(row.model, Usage()).add(row.usage)
        return dict(sorted(totals.items()))


@dataclass(frozen=True)
class Outcome:
    """How the session ended, for every output to render: the reports written (or checked),
    the verdict summary, what the run skipped or kept (notices), the GitHub annotations."""

    report: ReportSet | None = None
    summary: list[tuple[str, Markup]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    annotations: list[str] = field(default_factory=list)  # workflow commands, printed
    # Live spend past --cost-cap (reported usage beyond a call's worst case): the run fails.
    cost_cap_exceeded: bool = False
    # An interrupt at the session's end: what was written, what was skipped and its fix.
    interrupted: str = ""
    # Accepted baselines whose acceptance reason is gone from gates.toml: the run fails.
    unreasoned: list[str] = field(default_factory=list)

    @property
    def reports_out_of_date(self) -> bool:
        """A `--check-reports` run found a committed report this run would change."""
        return self.report is not None and bool(self.report.differing)

    @property
    def silent(self) -> bool:
        return not (
            self.summary or self.notices or self.annotations or self.interrupted or self.unreasoned
        )

    def terminal_lines(self) -> list[tuple[str, Markup]]:
        """The terminal summary's `judges` section: the notices (yellow), the summary, whose
        last lines are the verdicts, then the annotations GitHub reads from the log (printed
        on GitHub Actions alone)."""
        notices: list[tuple[str, Markup]] = [(line, {"yellow": True}) for line in self.notices]
        stopped = [self.interrupted] if self.interrupted else []
        errors: list[tuple[str, Markup]] = [
            (line, {"red": True}) for line in [*self.unreasoned, *stopped]
        ]
        # What failed the run itself (red) after the verdicts: it is why the exit status is.
        return [*notices, *self.summary, *errors, *((line, {}) for line in self.annotations)]


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

    def save_rows(self) -> list[Path]:
        """The session's rows merged into their results files, written now (see
        `judges.reports.write.write_results`)."""
        from judges.reports.write import write_results

        return write_results(self.gathered.rows, self.settings.reports)

    def interrupted_line(self, stop: KeyboardInterrupt, saved: list[Path]) -> str:
        """What an interrupt at the session's end kept and skipped, with the command that
        rebuilds what it skipped (the session's report folder where it is not the default)."""
        why = str(stop) or "Ctrl-C"
        command = "python -m judges report"
        if self.settings.reports != (self.settings.rootdir / "reports").absolute():
            command += f" --reports {shlex.quote(str(self.settings.reports))}"
        kept = (
            f"the session's rows are on disk ({', '.join(str(path) for path in saved)})"
            if saved
            else "no results file was written"
        )
        return (
            f"interrupted ({why}) at the end of the session: {kept}; the reports were not "
            f"rebuilt: rebuild them with `{command}`"
        )

    def outcome(
        self, report: ReportSet | None, notices: list[str], interrupted: str = ""
    ) -> Outcome:
        """The session's outcome; on GitHub Actions this appends the step summary."""
        if interrupted:  # what remains is slow (statistics, publishing): said, not done
            return Outcome(report, [], notices, [], interrupted=interrupted)
        summary = self.summary_lines(report) if self.gathered.rows else []
        spend = self.ledger.spend()
        exceeded = spend is not None and spend.exceeded
        github = self.publish_on_github(report)
        return Outcome(
            report, summary, notices, github, exceeded, unreasoned=self.unreasoned(report)
        )

    def unreasoned(self, report: ReportSet | None) -> list[str]:
        """Accepted baselines this session reported that acceptance would refuse as
        gates.toml stands (a reason deleted by hand): `verdicts.acceptance.missing_reasons`."""
        from judges.verdicts.acceptance import missing_reasons

        lines = []
        for folder in report.folders if report is not None else ():
            planted = self.catalogue.planted_sets.get(folder.judge)
            if planted is not None:
                for model in folder.models:
                    lines += missing_reasons(planted, folder.version, model)
        return lines

    def summary_lines(self, report: ReportSet | None) -> list[tuple[str, Markup]]:
        """The terminal summary's lines, each with its markup (red, green or none)."""
        from judges.reports.terminal import summary_lines

        return summary_lines(
            self.gathered.rows, self.gathered.usage_by_model(), self.ledger.totals(),
            self.ledger.spend(), report,
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
