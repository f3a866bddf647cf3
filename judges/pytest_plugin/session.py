"""The run: settings from the command line, judging inside cassettes, rows gathered for reports.

The plugin's hooks are a few lines each and hand off to this object, kept in
`config.stash`. Judging itself (`judges.core.runner`) knows nothing of pytest or vcrpy.
"""

from __future__ import annotations

import contextlib
import enum
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judges.calls.backend_registry import is_imported, make_backend, price_for
from judges.calls.backends import BackendError, ModelRef, load_prices
from judges.calls.cassettes import (
    CassetteMiss,
    is_answering,
    is_replay_miss,
    judge_in_cassette,
    recorded_base_url,
    recorded_interactions,
)
from judges.calls.credentials import credential_values, remember
from judges.calls.ledger import Ledger
from judges.calls.limits import Limiter, load_ceilings
from judges.core.naming import Case
from judges.core.results import JudgementRow, Usage, main_run
from judges.core.runner import DEFAULT_TIMEOUT_S, Call, Subject, judge
from judges.core.spec import PROMPTS_ROOT, JudgeSpec, Sampling, SpecError, load_catalog
from judges.pytest_plugin.invocation import missing_fix, with_recording_options
from judges.pytest_plugin.pinned import BaselineGuard, missing_hint
from judges.sets import preflight
from judges.sets.enrolment import Run, run_versions
from judges.sets.items import PlantedItem
from judges.sets.pins import Pin
from judges.sets.planted import PlantedSet, load_planted_sets
from judges.sets.probes import ProbeSet, load_probe_set
from judges.stats.estimates.memo import Memo

if TYPE_CHECKING:
    from judges.reports.write import ReportSet


class RecordMode(enum.Enum):
    NONE = "none"  # replay only; network blocked
    ALL = "all"  # live calls; every selected cassette is recorded afresh
    MISSING = "missing"  # live calls only where no cassette exists yet


# The retest run's seeds sit far from the noise floor's repeats: independent draws.
RETEST_DRAW = 100


@dataclass(frozen=True)
class RunPlan:
    """One kind of run over a planted set (main, noise, retest, panel, reading_list)."""

    run: str
    versions: tuple[str, ...]
    items: tuple[PlantedItem, ...]
    repeats: int = 1
    draw_offset: int = 0
    sampling: Sampling | None = None
    model: ModelRef | None = None  # a panel's cross-check may be another model
    label: str = ""


class JudgementMissing(Exception):
    """No recorded judgement matches: the cassette is absent or stale."""


@dataclass(frozen=True)
class Settings:
    rootdir: Path
    record: RecordMode = RecordMode.NONE
    models: tuple[ModelRef, ...] = ()
    base_url: str | None = None
    cost_cap_usd: float | None = None
    price_files: tuple[Path, ...] = ()
    cassettes: Path = Path("cassettes")
    planted_sets: Path = Path("planted_sets")
    prompts: Path | None = None  # judge definitions; None: the built-in judges
    reports: Path = Path("reports")
    noise_repeats: int | None = None
    rerecord_options: tuple[str, ...] = ()  # the judge options a re-record command repeats
    # What the live server says of itself (model hash, build, CPU): part of each fingerprint.
    server_fingerprint: dict[str, str] = field(default_factory=dict)
    judge_timeout_s: float = DEFAULT_TIMEOUT_S
    batch: bool = (
        False  # live calls go through the providers' batch APIs (pytest_plugin.batch_phase)
    )
    session_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    rerecord_baseline: bool = False  # --rerecord-baseline: replace an accepted baseline's cassettes

    @property
    def live(self) -> bool:
        return self.record is not RecordMode.NONE

    @property
    def scratch(self) -> Path:
        return self.rootdir / ".judges-tmp"


class JudgesSession:
    """Owns one pytest run's judging: catalog, planted sets, backends, ledger and rows."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.rows: list[JudgementRow] = []
        self.report: ReportSet | None = None  # written or checked at the end of the session
        self.recorders: dict[tuple[str, Case], str] = {}  # (run, case) -> its item test
        self.partial_selection: str | None = None  # -k, -m, node ids or --lf, when used
        self.gates_skipped: list[str] = []  # why set-level tests skipped their gates
        self.baselines = BaselineGuard(settings.rerecord_baseline, settings.reports)
        self.rerecorded: list[str] = []  # accepted baselines re-recorded on purpose, and how
        self._backends: dict[tuple[str, bool], Any] = {}
        self._backends_lock = threading.Lock()
        self._replayed: dict[tuple[Any, ...], tuple[JudgementRow, ...]] = {}
        # Cassette -> rows recorded by the record phase (judges.pytest_plugin.record_phase).
        self.prerecorded: dict[Path, list[JudgementRow]] = {}
        # Statistics computed once per run, shared by the tests and the reports.
        self.memo = Memo()
        self.ledger = Ledger(
            settings.scratch / f"ledger-{settings.session_id}.jsonl", settings.cost_cap_usd
        )
        self.prices = load_prices(*settings.price_files, batch=settings.batch)
        self.limiter = Limiter(
            settings.scratch / f"limits-{settings.session_id}.json",
            load_ceilings(*settings.price_files),
        )
        for value in credential_values(settings.base_url or ""):
            remember(value)  # a key in the base URL is scrubbed by value wherever it shows

    # -- what there is to judge -------------------------------------------------------

    @property
    def catalog(self) -> dict[str, JudgeSpec]:
        return load_catalog(self.settings.prompts or PROMPTS_ROOT)

    @cached_property
    def planted_sets(self) -> dict[str, PlantedSet]:
        return load_planted_sets(self.settings.planted_sets, self.catalog)

    @cached_property
    def probe_sets(self) -> dict[str, ProbeSet]:
        """The bias probes of every planted set that has a probes.toml."""
        loaded = {name: load_probe_set(planted) for name, planted in self.planted_sets.items()}
        return {name: probes for name, probes in loaded.items() if probes is not None}

    def probe_versions(self, probes: ProbeSet) -> tuple[str, ...]:
        """Every prompt version of the judge, unless probes.toml's `versions` restricts."""
        versions = tuple(self.catalog[probes.judge].versions)
        return run_versions(Run("probes", "", probes.versions), versions)

    def models_for(self, spec: JudgeSpec, version: str | None = None) -> list[ModelRef]:
        """The selected models; else those set.toml names for the version; else the baseline."""
        if self.settings.models:
            return list(self.settings.models)
        planted = self.planted_sets.get(spec.name)
        named = planted.config.versions.get(version) if planted and version else None
        if named is not None and named.models:
            return [ModelRef.parse(model) for model in named.models]
        return [ModelRef.parse(spec.config.baseline_model)]

    def main_items(
        self, planted: PlantedSet, version: str, model: str | None = None
    ) -> tuple[PlantedItem, ...]:
        """The items a version's main run (of `model`) judges: all, or what set.toml names."""
        return planted.main_items(version, model)

    def run_plan(self, planted: PlantedSet, run: str) -> RunPlan:
        """How a run of a planted set judges: repeats, seeds, sampling, versions, items."""
        spec = self.catalog[planted.judge]
        config = planted.config
        versions = planted.run_versions(run)  # every version, unless set.toml restricts
        if run == "main":
            return RunPlan(run, tuple(spec.versions), tuple(planted.items))
        if run == "noise":
            repeats = self.settings.noise_repeats or config.noise_repeats
            items = tuple(planted.item(i) for i in config.noise_items)
            return RunPlan(run, versions, items, repeats=repeats)
        if run == "retest":
            return RunPlan(run, versions, tuple(planted.items), draw_offset=RETEST_DRAW)
        if run == "reading_list":
            return RunPlan(run, versions, tuple(planted.reading_list))
        if run == "panel" and config.panel is not None:
            sampling = spec.config.sampling.model_copy(
                update={"temperature": config.panel.temperature}
            )
            model = ModelRef.parse(config.panel.model) if config.panel.model else None
            items = tuple(planted.item(i) for i in config.panel.items) or tuple(planted.items)
            return RunPlan(
                run, versions, items, sampling=sampling, model=model, label=config.panel.label
            )
        return RunPlan(run, (), ())

    # -- checks before any call -------------------------------------------------------

    def preflight(self) -> None:
        """Check prompts, model tables and cassettes; raise SpecError naming file and line."""
        for planted in self.planted_sets.values():
            spec = self.catalog[planted.judge]
            fields = spec.parse_inputs(planted.items[0].inputs).prompt_fields()  # type: ignore[attr-defined]
            preflight.check_prompt_placeholders(spec, fields)
            known = self._known_models(spec, planted)
            for name, tables in (
                ("expectations.toml", planted.accepted_misses),
                ("gates.toml", planted.gates),
            ):
                preflight.check_table_keys(planted.path / name, tables, spec, known)
            if self.settings.record is not RecordMode.ALL:
                for path, model in self._cassettes_of(spec, planted):
                    problem = preflight.cassette_problem(path, model)
                    if problem:
                        raise SpecError(problem)

    def _known_models(self, spec: JudgeSpec, planted: PlantedSet) -> set[str]:
        """Baseline, selected and panel models, and every model with recordings of this judge."""
        known = {spec.config.baseline_model, *(str(m) for m in self.settings.models)}
        known |= {m for named in planted.config.versions.values() for m in named.models}
        if planted.config.panel is not None and planted.config.panel.model:
            known.add(planted.config.panel.model)
        recorded = {p.name for p in (self.settings.cassettes / spec.name).glob("*/*")}
        for model, _ in [*planted.accepted_misses, *planted.gates]:
            with contextlib.suppress(BackendError):
                if ModelRef.parse(model).slug in recorded:
                    known.add(model)
        return known

    def _cassettes_of(self, spec: JudgeSpec, planted: PlantedSet) -> list[tuple[Path, str]]:
        """The cassettes this run may replay (the selected models' and the panel model's),
        each with the model name its requests must carry."""
        root = self.settings.cassettes / spec.name
        models = {m.slug: m.model for v in spec.versions for m in self.models_for(spec, v)}
        if planted.config.panel is not None and planted.config.panel.model:
            panel = ModelRef.parse(planted.config.panel.model)
            models[panel.slug] = panel.model
        return [
            (p, models[p.relative_to(root).parts[1]])
            for p in sorted(root.glob("*/*/**/*.yaml"))
            if p.relative_to(root).parts[1] in models
        ]

    def subject(self, case: Case) -> Subject:
        return self.planted_sets[case.judge].item(case.item_id).subject()

    # -- judging ------------------------------------------------------------------------

    def _backend(self, model: ModelRef, live: bool) -> Any:
        key = (str(model), live)
        with self._backends_lock:  # the record phase asks from many threads at once
            if key not in self._backends:
                self._backends[key] = self._make_backend(model, live)
            return self._backends[key]

    def _make_backend(self, model: ModelRef, live: bool) -> Any:
        backend = make_backend(
            model, base_url=self.settings.base_url, live=live, timeout=self.settings.judge_timeout_s
        )
        # Live calls wait for the session's rate limits (judges.calls.limits); not a batch's.
        return self.limiter.wrap(backend) if live and not self.settings.batch else backend

    def _should_record(self, path: Path, repeats: int, case: Case, run: str) -> bool:
        if is_imported(case.model):
            return False  # released by others: replayed, never called (re-import instead)
        mode = self.settings.record
        # An interrupted recording leaves fewer interactions than the test needs.
        wanted = mode is RecordMode.ALL or (mode is RecordMode.MISSING and (
            not path.is_file() or recorded_interactions(path) < repeats))  # fmt: skip
        # Only a cassette this mode would record counts as one the baseline guard kept.
        return wanted and not self.baselines.keeps(self._pins(case), case, run, path)

    def _pins(self, case: Case) -> dict[tuple[str, str], Pin]:
        planted = self.planted_sets.get(case.judge)
        return planted.pins if planted is not None else {}

    def judge_case(
        self,
        case: Case,
        *,
        rerecord: str,
        run: str = "main",
        repeats: int = 1,
        draw_offset: int = 0,
        replay_only: bool = False,
        sampling: Sampling | None = None,
        subject: Subject | None = None,
    ) -> list[JudgementRow]:
        """Judge one case `repeats` times inside its cassette; raise JudgementMissing.

        `subject` overrides the planted item's inputs (a bias probe of it).
        """
        path = case.cassette(self.settings.cassettes, run)
        if not replay_only and path in self.prerecorded:  # called live by the record phase
            return self.prerecorded.pop(path)
        record = not replay_only and self._should_record(path, repeats, case, run)
        # An item test and its set's test replay the same cassette: read it once.
        replay_key = (path, _mtime(path), repeats, draw_offset, _sampling_key(sampling))
        if not record and replay_key in self._replayed:
            return list(self._replayed[replay_key])
        batch = record and self.settings.batch
        if batch and not is_answering():  # a batch session never calls on its own
            raise JudgementMissing(f"{_relative(path)} was not recorded by the batch phase; "
                                   "resume it with:  pytest --record --batch --resume")  # fmt: skip
        spec = self.catalog[case.judge]
        subject = subject or self.subject(case)
        draws = range(draw_offset, draw_offset + repeats)
        calls = self._calls(case.model, record, run, draws, sampling)
        try:
            rows = judge_in_cassette(
                path, case.model, lambda: [judge(spec, case.version, subject, c) for c in calls],
                record=record, server_fingerprint=self.settings.server_fingerprint,
            )  # fmt: skip
        except CassetteMiss as miss:
            rerecord = with_recording_options(rerecord, case.model, recorded_base_url(path))
            if miss.unreadable:
                raise JudgementMissing(
                    f"{miss.unreadable}.\nRe-record it with:  {rerecord}"
                ) from None
            state = miss.reason(case.model, repeats)
            pinned = missing_hint(self._pins(case), case, _relative(path), self.baselines, run)
            raise JudgementMissing(
                f"no recorded judgement for {case.judge} prompt {case.version} on {case.model} "
                f"(item {case.item_id}, run {run}): cassette {_relative(path)} {state}."
                + (pinned or "\n" + missing_fix(case.model, rerecord))
            ) from None
        if not record:
            self._replayed[replay_key] = tuple(rows)
        return rows

    def _calls(
        self, model: ModelRef, live: bool, run: str, draws: range, sampling: Sampling | None
    ) -> list[Call]:
        """The settings of each repeat's call, in order."""
        backend = self._backend(model, live)
        price = price_for(self.prices, model)
        return [
            Call(
                backend=backend,
                price=price,
                live=live,
                ledger=None if live and self.settings.batch else self.ledger,  # batch: on download
                is_fatal=is_replay_miss,
                run=run,
                repeat=repeat,
                draw=draw,
                sampling=sampling,
                timeout_s=self.settings.judge_timeout_s,
            )
            for repeat, draw in enumerate(draws)
        ]

    # -- gathering ----------------------------------------------------------------------

    def add_rows(self, rows: Iterable[dict[str, Any]]) -> None:
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
            usage = totals.setdefault(row.model, Usage())
            usage.calls += row.usage.calls
            usage.input_tokens += row.usage.input_tokens
            usage.output_tokens += row.usage.output_tokens
            usage.cost_usd = round(usage.cost_usd + row.usage.cost_usd, 8)
        return dict(sorted(totals.items()))

    def case_properties(self, case: Any) -> list[tuple[str, str]]:
        """JUnit properties of a test judging `case`: judge, prompt version, model, and for
        one planted item its id and category, so that CI test viewers can group tests."""
        found = [("judge", case.judge), ("prompt_version", case.version)]
        found.append(("model", str(case.model)))
        if isinstance(case, Case):
            category = self.planted_sets[case.judge].item(case.item_id).category
            found += [("item_id", case.item_id), ("category", category)]
        return found

    # -- reporting ----------------------------------------------------------------------

    def build_reports(self) -> ReportSet:
        """This session's rows merged into the report folders: built, not yet written."""
        from judges.reports.write import session_reports

        s = self.settings
        baselines = self._recorded_baselines()
        return session_reports(
            self.rows, s.reports, s.planted_sets, self.catalog, s.session_id, baselines, self.memo
        )

    def _recorded_baselines(self) -> dict[tuple[str, str], list[JudgementRow]]:
        """Each judged judge's accepted baseline (main run, and retest where it has one) from
        its cassettes, never the report folder."""
        baselines: dict[tuple[str, str], list[JudgementRow]] = {}
        for name in sorted({row.judge for row in self.rows}):
            planted = self.planted_sets.get(name)
            if planted is None:
                continue
            wanted = {(g.baseline, m) for (m, _), g in planted.gates.items() if g.baseline}
            for version, model in sorted(wanted):
                ids = [item.id for item in self.main_items(planted, version, model)]
                # Judged in this session: under xdist the controller would replay it again.
                rows = main_run(self.rows, (name, version, model), ids)
                ref = ModelRef.parse(model)
                rows = rows or self._replay_run(planted, version, ref)
                if rows is not None:
                    if version in self.run_plan(planted, "retest").versions:  # its second draw
                        rows += self._replay_run(planted, version, ref, "retest") or []
                    baselines.setdefault((name, version), []).extend(rows)
        return baselines

    def _replay_run(
        self, planted: PlantedSet, version: str, model: ModelRef, run: str = "main"
    ) -> list[JudgementRow] | None:
        """A version's run from its cassettes; None when any is missing."""
        plan = self.run_plan(planted, run)
        items = self.main_items(planted, version, str(model)) if run == "main" else plan.items
        rows: list[JudgementRow] = []
        for item in items:
            case = Case(planted.judge, version, plan.model or model, item.id, item.slug)
            try:
                rows += self.judge_case(
                    case, rerecord="", run=run, repeats=plan.repeats,
                    draw_offset=plan.draw_offset, sampling=plan.sampling, replay_only=True,
                )  # fmt: skip
            except JudgementMissing:
                return None
        return rows

    def summary_lines(self) -> list[tuple[str, dict[str, bool]]]:
        """The terminal summary's lines, each with its markup (red, green or none)."""
        from judges.reports.terminal import summary_lines

        cap = self.settings.cost_cap_usd
        spent = None if cap is None else (cap, self.ledger.spent_usd())
        return summary_lines(
            self.rows, self.usage_by_model(), self.ledger.totals(), spent, self.report
        )

    def publish_on_github(self) -> list[str]:
        """Run on GitHub Actions: append the step summary; the annotation lines to print."""
        if self.report is None:
            return []
        from judges.reports.render.github import publish

        s = self.settings
        return publish(self.report.folders, s.planted_sets, s.rootdir)


def _sampling_key(sampling: Sampling | None) -> str | None:
    return None if sampling is None else sampling.model_dump_json()


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return -1.0


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
