"""Reports of one judge's prompt version: `reports/<judge>/<version>/`, rebuilt from its rows.

`results.jsonl` holds every judgement merged into the folder. Rows of a session replace rows
with the same key and other rows are kept, so a `-k` run never erases what an earlier full
run wrote. Every other file is computed from that merged file alone (plus the judge's spec
and planted set), so a partial run still yields a complete report and `python -m judges
report` rebuilds the same bytes without judging. Only the run-metadata block at the end of
report.md, index.html and the "run" key of report.json differ between two builds.
"""

from __future__ import annotations

import json
import math
import platform
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judges.files import atomic_write_text
from judges.core.checks import describe_verdict
from judges.stats.compare import Comparison, compare_versions, comparison_markdown, numeric, outcome
from judges.stats.gates import Gate, detected, evaluate
from judges.core.naming import report_dir
from judges.sets.planted import PlantedSet, PlantedSetError, load_planted_set
from judges.stats.reliability import (
    NoiseFloor,
    Panel,
    SmeCalibration,
    SmeLabel,
    SmeLabelError,
    TestRetest,
    evaluate_reliability,
    load_sme_labels,
    noise_floor,
    panel_agreement,
    sme_calibration,
    test_retest,
)
from judges.core.results import JudgementRow, Usage, read_jsonl, write_jsonl
from judges.core.spec import JudgeSpec, load_catalog, prompt_hash, version_key
from judges.stats.stats import Estimate, Rate, wilson

if TYPE_CHECKING:
    from judges.session import JudgesSession

RESULTS_FILE = "results.jsonl"
REPORT_MD = "report.md"
FAILURES_MD = "failures.md"
REPORT_JSON = "report.json"
INDEX_HTML = "index.html"
COMPARISON_MD = "comparison.md"
METADATA_BEGIN = "<!-- judges:run-metadata:begin -->"
METADATA_END = "<!-- judges:run-metadata:end -->"
METADATA_KEY = "run"
# The SME labels score the three core dimensions and their sum; the sum is what is compared.
SME_DIMENSION = "core_total"
RUNS = ("main", "noise", "retest", "panel")
_PACKAGES = (
    "judges", "pytest", "pytest-xdist", "vcrpy", "pydantic", "numpy", "scipy", "krippendorff",
    "openai", "anthropic",
)  # fmt: skip


class ResultsMissing(FileNotFoundError):
    """A results file a report needs does not exist yet."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"no results file {path}: run `pytest` first to judge and write it")
        self.path = path


def merge_rows(existing: list[JudgementRow], new: list[JudgementRow]) -> list[JudgementRow]:
    merged = {row.key: row for row in existing}
    merged.update({row.key: row for row in new})
    return sorted(merged.values(), key=lambda r: r.key)


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Sources:
    """What a report needs besides its rows; each part may be missing, and a note says so."""

    spec: JudgeSpec | None = None
    planted: PlantedSet | None = None
    planted_root: str = "planted_sets"  # as shown in the report, never an absolute path
    sme_labels: tuple[SmeLabel, ...] | None = None
    notes: tuple[str, ...] = ()


def load_sources(judge: str, catalog: Mapping[str, JudgeSpec], planted_root: Path) -> Sources:
    """The judge's spec, planted set and SME labels, as far as they load."""
    shown = planted_root.name or "planted_sets"
    spec = catalog.get(judge)
    if spec is None:
        return Sources(
            planted_root=shown,
            notes=(f"judge {judge!r} is not in the catalog: no dimensions, gates or planted set",),
        )
    if not (planted_root / judge / "items.jsonl").is_file():
        note = f"no planted set {shown}/{judge}/items.jsonl: no gates or accepted misses"
        return Sources(spec, planted_root=shown, notes=(note,))
    try:
        planted = load_planted_set(planted_root, spec)
    except PlantedSetError as error:
        # Absolute paths would make the bytes depend on where the build ran.
        message = str(error).replace(str(planted_root), shown)
        return Sources(spec, planted_root=shown, notes=(f"planted set not loaded: {message}",))
    labels: tuple[SmeLabel, ...] | None = None
    notes: list[str] = []
    if planted.config.sme_labels:
        path = planted_root / "sme" / planted.config.sme_labels
        try:
            labels = tuple(load_sme_labels(path))
        except (OSError, SmeLabelError) as error:
            notes.append(f"SME labels not loaded: {str(error).replace(str(planted_root), shown)}")
    return Sources(spec, planted, shown, labels, tuple(notes))


# --------------------------------------------------------------------------- report model


@dataclass(frozen=True)
class Failure:
    """A main-run item that failed its expectation or errored."""

    row: JudgementRow
    accepted_miss: str | None  # the reason given in expectations.toml

    @property
    def rationale(self) -> str | dict[str, str]:
        verdict = self.row.verdict or {}
        found = verdict.get("rationale") or verdict.get("rationales") or ""
        return found if isinstance(found, str | dict) else str(found)

    @property
    def raw(self) -> str | dict[str, str] | None:
        raw = (self.row.verdict or {}).get("raw")
        return raw if isinstance(raw, str | dict) else None

    def as_dict(self) -> dict[str, Any]:
        row = self.row
        return {
            "item_id": row.item_id,
            "category": row.category,
            "control": row.control,
            "outcome": outcome(row),
            "status": row.status,
            "expected": [str(e) for e in row.expect],
            "returned": _key_fields(row.verdict),
            "rationale": self.rationale,
            "raw": self.raw,
            "error": row.error,
            "attempts": [a.model_dump(mode="json") for a in row.attempts if a.error],
            "accepted_miss": self.accepted_miss,
        }


@dataclass(frozen=True)
class ModelReport:
    """Everything the report says about one judge model under one prompt version."""

    model: str
    n_main: int
    planted_items: int | None
    missing_items: tuple[str, ...]
    detection: dict[str, Rate]
    all_defects: Rate
    control_false_positive: Rate
    error_rate: Rate
    status_by_run: dict[str, dict[str, int]]
    noise_floor: NoiseFloor | None
    test_retest: TestRetest | None
    panel: Panel | None
    sme: SmeCalibration | None
    gates: tuple[Gate, ...]
    gates_table: str | None  # where the thresholds came from; None: no table
    failures: tuple[Failure, ...]
    accepted_met: tuple[str, ...]  # accepted misses the judge now gets right
    scores: dict[str, tuple[float, ...]]  # main-run values per dimension, sorted
    comparison: Comparison | None
    notes: tuple[str, ...]

    @property
    def gate_counts(self) -> tuple[int, int, int]:
        """(passed, failed, not evaluated)."""
        results = [gate.passed for gate in self.gates]
        return results.count(True), results.count(False), results.count(None)

    def threshold(self, category: str) -> float | None:
        for gate in self.gates:
            if gate.name == f"detection[{category}]":
                return gate.threshold
        return None

    def summary_line(self, judge: str, version: str) -> str:
        passed, failed, unevaluated = self.gate_counts
        gates = f"gates {passed} passed, {failed} failed"
        if unevaluated:
            gates += f", {unevaluated} not evaluated"
        if self.gates_table is None:
            gates += " (no thresholds in gates.toml)"
        return (
            f"{judge} {version} on {self.model}: detection {_fraction(self.all_defects)}; {gates}"
        )

    def as_dict(self) -> dict[str, Any]:
        passed, failed, unevaluated = self.gate_counts
        return {
            "model": self.model,
            "main_rows": self.n_main,
            "planted_items": self.planted_items,
            "missing_items": list(self.missing_items),
            "detection": {name: rate.as_dict() for name, rate in self.detection.items()},
            "all_defects": self.all_defects.as_dict(),
            "control_false_positive": self.control_false_positive.as_dict(),
            "error_rate": self.error_rate.as_dict(),
            "status_by_run": self.status_by_run,
            "noise_floor": _as_dict(self.noise_floor),
            "test_retest": _as_dict(self.test_retest),
            "panel": _as_dict(self.panel),
            "sme": _as_dict(self.sme),
            "gates": {
                "table": self.gates_table,
                "results": [gate.as_dict() for gate in self.gates],
                "passed": passed,
                "failed": failed,
                "not_evaluated": unevaluated,
            },
            "failures": [failure.as_dict() for failure in self.failures],
            "accepted_misses_met": list(self.accepted_met),
            "score_distributions": {
                dim: [
                    {"value": _round(value), "count": count}
                    for value, count in sorted(Counter(values).items())
                ]
                for dim, values in self.scores.items()
            },
            "comparison": _as_dict(self.comparison),
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class UsageLine:
    model: str
    run: str
    rows: int
    usage: Usage


@dataclass(frozen=True)
class FolderReport:
    """One `reports/<judge>/<version>/` folder's content, computed once from its rows."""

    judge: str
    version: str
    previous_version: str | None
    previous_rows: bool  # whether the previous version has a results file
    template_hash: str | None  # of the version's prompt files as they are now
    prompt_hashes: dict[str, tuple[str, ...]]  # item -> hashes of its rendered prompts
    rows_by_run: dict[str, int]
    dimensions: tuple[str, ...]
    flag: str | None
    sme_labels: str | None  # the label file, as shown
    models: tuple[ModelReport, ...]
    usage: tuple[UsageLine, ...]
    notes: tuple[str, ...]

    @property
    def reprompted(self) -> list[str]:
        """Items whose rows were judged under different prompts (changed between sessions)."""
        return [item for item, hashes in self.prompt_hashes.items() if len(hashes) > 1]

    def prompt_line(self) -> str:
        template = f"template {self.template_hash}" if self.template_hash else "template unknown"
        return f"{template}; {len(self.prompt_hashes)} items, one rendered prompt each" + (
            f" except {len(self.reprompted)}" if self.reprompted else ""
        )

    @property
    def comparisons(self) -> list[Comparison]:
        return [m.comparison for m in self.models if m.comparison is not None]

    def as_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "prompt_version": self.version,
            "previous_version": self.previous_version,
            "template_hash": self.template_hash,
            "prompt_hashes": {item: list(hashes) for item, hashes in self.prompt_hashes.items()},
            "rows_by_run": self.rows_by_run,
            "dimensions": list(self.dimensions),
            "flag": self.flag,
            "sme_labels": self.sme_labels,
            "models": [m.as_dict() for m in self.models],
            "usage": [
                {"model": u.model, "run": u.run, "rows": u.rows, **u.usage.model_dump()}
                for u in self.usage
            ],
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class RunMetadata:
    """When, how and with what a report was built: the one part that differs between builds."""

    generated_at: str
    source: str
    session_id: str | None
    durations: dict[str, float]
    packages: dict[str, str]

    @classmethod
    def collect(
        cls, source: str, session_id: str | None, durations: Mapping[str, float]
    ) -> RunMetadata:
        packages = {"python": platform.python_version()}
        for name in _PACKAGES:
            try:
                packages[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                continue
        return cls(
            generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
            source=source,
            session_id=session_id,
            durations={name: round(value, 3) for name, value in durations.items()},
            packages=packages,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "generated_at": self.generated_at,
            "source": self.source,
            "session_id": self.session_id,
            "durations_s": self.durations,
            "packages": self.packages,
        }

    def items(self) -> list[tuple[str, str]]:
        """Label and value of each entry, for the markdown and HTML blocks."""
        return [
            ("Generated", self.generated_at),
            ("Source", self.source),
            ("Session id", self.session_id or "-"),
            ("Durations", ", ".join(f"{k} {v:.3f} s" for k, v in self.durations.items()) or "-"),
            ("Packages", ", ".join(f"{k} {v}" for k, v in self.packages.items())),
        ]


# --------------------------------------------------------------------------- computing


def _round(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), 4)


def _as_dict(result: Any) -> dict[str, Any] | None:
    return None if result is None else result.as_dict()


def _key_fields(verdict: Mapping[str, Any] | None) -> dict[str, Any]:
    """A verdict's short fields (scores, flags, names), without the raw reply and rationale."""

    def short(value: Any) -> bool:
        return value is None or isinstance(value, str | int | float | bool)

    return {
        key: value
        for key, value in sorted((verdict or {}).items())
        if key not in ("raw", "rationale", "rationales", "judge_prompt_version")
        and (short(value) or (isinstance(value, list) and all(short(v) for v in value)))
    }


def _dimensions(spec: JudgeSpec | None, rows: Sequence[JudgementRow]) -> tuple[str, ...]:
    if spec is not None:
        return tuple(spec.config.dimensions)
    # Without a spec, every numeric field of a verdict is a dimension.
    found = {
        key
        for row in rows
        if row.run == "main" and row.status == "ok"
        for key in (row.verdict or {})
        if numeric(row.verdict, key) is not None
    }
    return tuple(sorted(found))


def _status_by_run(rows: Sequence[JudgementRow]) -> dict[str, dict[str, int]]:
    counts: dict[str, Counter[str]] = {}
    for row in rows:
        counts.setdefault(row.run, Counter())[row.status] += 1
    order = {run: index for index, run in enumerate(RUNS)}
    return {
        run: dict(sorted(counts[run].items()))
        for run in sorted(counts, key=lambda r: (order.get(r, len(order)), r))
    }


def _reliability(
    model: str,
    version: str,
    rows: Sequence[JudgementRow],
    folder_rows: Sequence[JudgementRow],
    sources: Sources,
    dimensions: tuple[str, ...],
    flag: str | None,
    notes: list[str],
) -> dict[str, Any]:
    """Noise floor, test-retest, panel and SME calibration, each where its rows exist."""
    planted, spec = sources.planted, sources.spec
    main = [row for row in rows if row.run == "main"]
    runs = {row.run for row in rows}
    due: dict[str, Callable[[], Any]] = {}
    if "noise" in runs:
        n_items = len(planted.items) if planted else len({row.item_id for row in main}) or None
        due["noise_floor"] = lambda: noise_floor(rows, dimensions, flag=flag, n_items=n_items)
    if "retest" in runs and main:
        due["test_retest"] = lambda: test_retest(main, rows, dimensions, flag=flag)
    panel = planted.config.panel if planted else None
    # The cross-check may be another model; its rows then carry that model's name.
    cross_model = (panel.model if panel else None) or model
    cross = [r for r in folder_rows if r.run == "panel" and r.model == cross_model]
    if cross and main:
        temperature = spec.config.sampling.temperature if spec else None
        due["panel"] = lambda: panel_agreement(
            main,
            cross,
            dimensions,
            primary_label=f"{model} T={temperature}",
            cross_label=panel.label if panel else f"{cross_model} panel run",
            flag=flag,
        )
    labels = sources.sme_labels
    sme_due = planted is not None and version in planted.config.sme_versions
    if labels is not None and sme_due and main and dimensions:
        # Labels score the parts and their total; a judge without core_total compares its
        # last dimension, which is its aggregate by convention (geval's overall).
        dimension = SME_DIMENSION if SME_DIMENSION in dimensions else dimensions[-1]
        due["sme"] = lambda: sme_calibration(main, labels, dimension, flag=flag)
    found: dict[str, Any] = {}
    for section, compute in due.items():
        try:
            found[section] = compute()
        except ValueError as error:  # e.g. a label file naming an item twice
            notes.append(f"{section} not computed: {error}")
    return found


def _gates(
    model: str,
    version: str,
    main: Sequence[JudgementRow],
    reliability: Mapping[str, Any],
    sources: Sources,
    notes: list[str],
) -> tuple[list[Gate], str | None]:
    planted = sources.planted
    table = planted.gates.get((model, version)) if planted else None
    where = None
    if planted is not None:
        where = f'{sources.planted_root}/{planted.judge}/gates.toml ["{model}"."{version}"]'
        if table is None:
            notes.append(f"no thresholds for this model and prompt version: add {where}")
            where = None
    gates: list[Gate] = list(evaluate(list(main), table))
    for section, result in reliability.items():
        if table is not None:
            try:
                gates += evaluate_reliability(section, result, getattr(table, section))
            except ValueError as error:
                notes.append(f"gates.toml: {error}")
    return gates, where


def _model_report(
    model: str,
    version: str,
    rows: Sequence[JudgementRow],
    folder_rows: Sequence[JudgementRow],
    sources: Sources,
    dimensions: tuple[str, ...],
    flag: str | None,
    comparison: Comparison | None,
) -> ModelReport:
    notes: list[str] = []
    planted = sources.planted
    main = [row for row in rows if row.run == "main"]
    by_item = {row.item_id: row for row in main}
    defects = [row for row in main if not row.control]
    controls = [row for row in main if row.control and row.status == "ok"]
    categories: dict[str, list[bool]] = {}
    for row in defects:
        categories.setdefault(row.category, []).append(detected(row))
    missing: tuple[str, ...] = ()
    if planted is not None:
        missing = tuple(sorted({item.id for item in planted.items} - set(by_item)))
        if missing:
            shown = ", ".join(missing[:10]) + (", ..." if len(missing) > 10 else "")
            notes.append(
                f"{len(missing)} of {len(planted.items)} planted items have no main-run row "
                f"({shown}): statistics cover the rows there are; run the full suite to complete"
            )
    reliability = _reliability(model, version, rows, folder_rows, sources, dimensions, flag, notes)
    gates, where = _gates(model, version, main, reliability, sources, notes)
    misses = planted.accepted_misses.get((model, version), {}) if planted else {}
    return ModelReport(
        model=model,
        n_main=len(main),
        planted_items=len(planted.items) if planted else None,
        missing_items=missing,
        detection={c: wilson(sum(hits), len(hits)) for c, hits in sorted(categories.items())},
        all_defects=wilson(sum(detected(row) for row in defects), len(defects)),
        control_false_positive=wilson(sum(not row.met for row in controls), len(controls)),
        error_rate=wilson(sum(row.status != "ok" for row in main), len(main)),
        status_by_run=_status_by_run(rows),
        noise_floor=reliability.get("noise_floor"),
        test_retest=reliability.get("test_retest"),
        panel=reliability.get("panel"),
        sme=reliability.get("sme"),
        gates=tuple(gates),
        gates_table=where,
        failures=tuple(
            Failure(row, misses.get(row.item_id))
            for row in main
            if row.status != "ok" or not row.met
        ),
        accepted_met=tuple(
            item for item in sorted(misses) if item in by_item and detected(by_item[item])
        ),
        scores={
            dim: tuple(
                sorted(
                    value
                    for row in main
                    if row.status == "ok" and (value := numeric(row.verdict, dim)) is not None
                )
            )
            for dim in dimensions
        },
        comparison=comparison,
        notes=tuple(notes),
    )


def _template_hash(spec: JudgeSpec | None, version: str) -> str | None:
    if spec is None or version not in spec.prompts:
        return None
    return prompt_hash(spec.config.system, spec.prompts[version].templates)


def _prompt_hashes(rows: Sequence[JudgementRow]) -> dict[str, tuple[str, ...]]:
    # Each prompt embeds its item, so hashes differ per item; per item they must agree.
    found: dict[str, set[str]] = {}
    for row in rows:
        found.setdefault(row.item_id, set()).add(row.prompt_hash)
    return {item: tuple(sorted(found[item])) for item in sorted(found)}


def _usage(rows: Sequence[JudgementRow]) -> tuple[UsageLine, ...]:
    grouped: dict[tuple[str, str], list[JudgementRow]] = {}
    for row in rows:
        grouped.setdefault((row.model, row.run), []).append(row)
    lines = []
    for (model, run), group in sorted(grouped.items()):
        usage = Usage(
            calls=sum(r.usage.calls for r in group),
            input_tokens=sum(r.usage.input_tokens for r in group),
            output_tokens=sum(r.usage.output_tokens for r in group),
            cost_usd=round(math.fsum(r.usage.cost_usd for r in group), 4),
        )
        lines.append(UsageLine(model, run, len(group), usage))
    return tuple(lines)


def build_report(
    judge: str,
    version: str,
    rows: Sequence[JudgementRow],
    sources: Sources,
    previous: tuple[str, Sequence[JudgementRow] | None] | None = None,
) -> FolderReport:
    """A folder's report from its merged rows; `previous` = (version, rows or None if absent)."""
    rows = sorted(rows, key=lambda r: r.key)
    notes = list(sources.notes)
    if sources.planted is not None:
        known = {item.id for item in sources.planted.items}
        stale = sorted({row.item_id for row in rows if row.item_id not in known})
        if stale:
            notes.append(
                f"rows of {len(stale)} items no longer in the planted set were left out: "
                + ", ".join(stale[:10])
                + (", ..." if len(stale) > 10 else "")
            )
            rows = [row for row in rows if row.item_id in known]
    spec = sources.spec
    dimensions = _dimensions(spec, rows)
    flag = spec.config.flag if spec else None
    comparisons: dict[str, Comparison] = {}
    if previous is not None and previous[1] is not None:
        found = compare_versions(judge, (previous[0], previous[1]), (version, rows), dimensions)
        comparisons = {c.model: c for c in found}
    models = sorted({row.model for row in rows if row.run != "panel"}) or sorted(
        {row.model for row in rows}
    )
    return FolderReport(
        judge=judge,
        version=version,
        previous_version=previous[0] if previous else None,
        previous_rows=previous is not None and previous[1] is not None,
        template_hash=_template_hash(spec, version),
        prompt_hashes=_prompt_hashes(rows),
        rows_by_run={run: n for run, n in sorted(Counter(row.run for row in rows).items())},
        dimensions=dimensions,
        flag=flag,
        sme_labels=(
            f"{sources.planted_root}/sme/{sources.planted.config.sme_labels}"
            if sources.planted is not None and sources.planted.config.sme_labels
            else None
        ),
        models=tuple(
            _model_report(
                model,
                version,
                [row for row in rows if row.model == model],
                rows,
                sources,
                dimensions,
                flag,
                comparisons.get(model),
            )
            for model in models
        ),
        usage=_usage(rows),
        notes=tuple(notes),
    )


# --------------------------------------------------------------------------- markdown


def _fraction(rate: Rate) -> str:
    return f"{rate.successes}/{rate.n} = {rate}" if rate.n else "no data (n=0)"


def _stat(stat: Rate | Estimate | None) -> str:
    if stat is None:
        return "-"
    if isinstance(stat, Rate):
        return _fraction(stat)
    if stat.n == 0:
        return "no data (n=0)"
    if math.isnan(stat.low) or math.isnan(stat.high):
        return f"{_num(stat.value)} (no interval) n={stat.n}"
    return str(stat)


def _left_out(excluded: Mapping[str, int]) -> str:
    total = sum(excluded.values())
    if not total:
        return "0"
    return f"{total} (" + ", ".join(f"{why}: {n}" for why, n in excluded.items()) + ")"


def _errors(errors: Mapping[str, Any]) -> str:
    """Failed rows by status, or by run then status."""
    parts = []
    for key, value in errors.items():
        if isinstance(value, Mapping):
            if value:
                parts.append(f"{key}: " + ", ".join(f"{n} {s}" for s, n in value.items()))
        else:
            parts.append(f"{value} {key}")
    return "; ".join(parts) or "none"


def _gate_result(gate: Gate) -> str:
    if gate.passed is None:
        return "not evaluated" if gate.threshold is not None else "no threshold"
    return "pass" if gate.passed else "**FAIL**"


def _gate_threshold(gate: Gate) -> str:
    if gate.threshold is None:
        return "-"
    return f"{'>=' if gate.at_least else '<='} {gate.threshold:.2f}"


def _detection_md(m: ModelReport) -> list[str]:
    lines = [
        "### Detection per category",
        "",
        "| Category | Detected | Rate | Wilson 95% | n | Gate |",
        "|---|---|---|---|---|---|",
    ]
    for category, rate in [*m.detection.items(), ("**all planted defects**", m.all_defects)]:
        threshold = m.threshold(category)
        if rate.n:
            cells = (
                f"{rate.successes}/{rate.n} | {rate.rate:.2f} | [{rate.low:.2f}, {rate.high:.2f}]"
            )
        else:
            cells = "0/0 | - | -"
        gate = "-" if threshold is None else f">= {threshold:.2f}"
        lines.append(f"| {category} | {cells} | {rate.n} | {gate} |")
    lines += [
        "",
        f"- Control false-positive rate: {_fraction(m.control_false_positive)}",
        f"- Error rate (main run): {_fraction(m.error_rate)}",
        "",
        "| Run | " + " | ".join(_all_statuses(m)) + " | total |",
        "|---|" + "---|" * (len(_all_statuses(m)) + 1),
    ]
    for run, counts in m.status_by_run.items():
        cells = " | ".join(str(counts.get(s, 0)) for s in _all_statuses(m))
        lines.append(f"| {run} | {cells} | {sum(counts.values())} |")
    return [*lines, ""]


def _all_statuses(m: ModelReport) -> list[str]:
    found = {status for counts in m.status_by_run.values() for status in counts}
    return ["ok", *sorted(found - {"ok"})]


def _noise_md(result: NoiseFloor) -> list[str]:
    lines = [
        "### Noise floor (run `noise`)",
        "",
        f"{result.n_items} items x up to {result.n_repeats} repeats ({result.n_rows} rows; "
        f"failed: {_errors(result.errors)}). The minimum detectable difference (MDD) is for "
        f"a change in mean score between two versions judged on {result.mdd_items} items.",
        "",
        "| Dimension | Mean within-item sd [95%] | Pooled sd | All repeats agree | MDD "
        "| Left out |",
        "|---|---|---|---|---|---|",
    ]
    for name, d in result.dimensions.items():
        lines.append(
            f"| {name} | {_stat(d.mean_sd)} | {_num(d.pooled_sd)} | {_stat(d.exact_match)} | "
            f"{_num(d.mdd)} | {_left_out(d.excluded)} |"
        )
    if result.flag is not None:
        lines += [
            "",
            f"Flag `{result.flag}` identical across repeats: {_stat(result.flag_stability)} "
            f"(left out: {_left_out(result.flag_excluded)})",
        ]
    return [*lines, ""]


def _retest_md(result: TestRetest) -> list[str]:
    lines = [
        "### Test-retest (runs `main` and `retest`)",
        "",
        f"{result.n_pairs} items answered in both runs; left out: {_left_out(result.excluded)}; "
        f"failed rows: {_errors(result.errors)}.",
        "",
        "| Dimension | Exact match | Mean abs change | Quadratic kappa | Spearman | Missing |",
        "|---|---|---|---|---|---|",
    ]
    for name, d in result.dimensions.items():
        lines.append(
            f"| {name} | {_stat(d.exact_match)} | {_stat(d.mean_abs_delta)} | {_stat(d.kappa)} | "
            f"{_stat(d.spearman)} | {d.n_missing} |"
        )
    if result.flag is not None:
        lines += [
            "",
            f"Flag `{result.flag}` identical in both runs: {_stat(result.flag_stability)} "
            f"({result.flag_missing} pairs without it)",
        ]
    return [*lines, ""]


def _panel_md(result: Panel) -> list[str]:
    lines = [
        "### Panel agreement (runs `main` and `panel`)",
        "",
        f"- Primary judge: {result.primary_label}",
        f"- Cross-check: {result.cross_label}",
        f"- {result.n_pairs} items answered by both; left out: {_left_out(result.excluded)}; "
        f"failed rows: {_errors(result.errors)}",
        f"- Exact-or-adjacent agreement over every item and dimension: {_stat(result.agreement)}",
        f"- Contested items (overall scores differ by more than "
        f"{result.contested_threshold:g}): {_stat(result.contested_rate)}"
        + (f": {', '.join(result.contested)}" if result.contested else ""),
        f"- Mean overall: primary {_stat(result.mean_overall['primary'])}, cross-check "
        f"{_stat(result.mean_overall['cross'])}; difference (primary - cross) "
        f"{_stat(result.overall_difference)}",
    ]
    if result.flag is not None:
        rates = ", ".join(f"{side} {_stat(rate)}" for side, rate in result.flag_rate.items())
        lines += [
            f"- Flag `{result.flag}` set to false: {rates}",
            f"- Flag agreement: {_stat(result.flag_agreement)}",
        ]
    lines += ["", "| Dimension | Agreement within 1 |", "|---|---|"]
    for name, rate in result.agreement_by_dimension.items():
        lines.append(f"| {name} | {_stat(rate)} |")
    return [*lines, ""]


def _sme_md(result: SmeCalibration, labels_file: str) -> list[str]:
    lines = [
        f"### SME calibration (labels: {labels_file})",
        "",
        f"Dimension `{result.dimension}`: {result.n_labels} labelled items, {result.n_pairs} "
        f"paired with a judge value; left out: {_left_out(result.excluded)}.",
        "",
        "| Statistic | Value |",
        "|---|---|",
        f"| Spearman rho | {_stat(result.spearman)} |",
        f"| Quadratic kappa | {_stat(result.kappa)} |",
        f"| Krippendorff alpha (ordinal) | {_stat(result.alpha)} |",
        f"| Mean difference (judge - human) | {_stat(result.mean_difference)} |",
    ]
    if result.flag is not None:
        lines.append(f"| Flag `{result.flag}` agreement | {_stat(result.flag_agreement)} |")
    if result.disagreements:
        lines += [
            "",
            f"Items where judge and human differ by {result.disagreement_at:g} or more:",
            "",
            "| Item | Judge | Human | Labeller |",
            "|---|---|---|---|",
        ]
        for d in result.disagreements:
            lines.append(f"| {d.item_id} | {d.judge:g} | {d.human:g} | {d.labeller} |")
    return [*lines, ""]


def _gates_md(m: ModelReport) -> list[str]:
    passed, failed, unevaluated = m.gate_counts
    source = f"thresholds from {m.gates_table}" if m.gates_table else "no thresholds set"
    lines = [
        f"### Gates ({source})",
        "",
        "| Gate | Value | Threshold | Result |",
        "|---|---|---|---|",
    ]
    for gate in m.gates:
        lines.append(
            f"| {gate.name} | {_stat(gate.value)} | {_gate_threshold(gate)} | "
            f"{_gate_result(gate)} |"
        )
    lines += ["", f"{passed} passed, {failed} failed, {unevaluated} not evaluated.", ""]
    return lines


def _failures_summary_md(m: ModelReport) -> list[str]:
    accepted = sum(f.accepted_miss is not None for f in m.failures)
    lines = [
        f"### Failures (details in [{FAILURES_MD}]({FAILURES_MD}))",
        "",
        f"{len(m.failures)} of {m.n_main} main-run items failed their expectation or errored; "
        f"{accepted} of them are accepted misses.",
    ]
    if m.failures:
        lines += ["", "| Item | Category | Outcome | Accepted miss |", "|---|---|---|---|"]
        for f in m.failures:
            lines.append(
                f"| {f.row.item_id} | {f.row.category} | {outcome(f.row)} | "
                f"{'yes' if f.accepted_miss is not None else '-'} |"
            )
    if m.accepted_met:
        lines += [
            "",
            "Accepted misses the judge now gets right (their strict xfail passes unexpectedly; "
            f"remove them from expectations.toml): {', '.join(m.accepted_met)}",
        ]
    return [*lines, ""]


def _num(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2f}"


def _usage_md(report: FolderReport) -> list[str]:
    lines = [
        "## Cost and tokens",
        "",
        "| Model | Run | Rows | Calls | Input tokens | Output tokens | Cost (USD) |",
        "|---|---|---|---|---|---|---|",
    ]
    for u in report.usage:
        lines.append(
            f"| {u.model} | {u.run} | {u.rows} | {u.usage.calls} | {u.usage.input_tokens} | "
            f"{u.usage.output_tokens} | {u.usage.cost_usd:.4f} |"
        )
    for model in sorted({u.model for u in report.usage}):
        mine = [u for u in report.usage if u.model == model]
        cost = round(math.fsum(u.usage.cost_usd for u in mine), 4)
        lines.append(
            f"| **{model}** | all | {sum(u.rows for u in mine)} | "
            f"{sum(u.usage.calls for u in mine)} | {sum(u.usage.input_tokens for u in mine)} | "
            f"{sum(u.usage.output_tokens for u in mine)} | {cost:.4f} |"
        )
    return [*lines, ""]


def _comparison_heading(report: FolderReport) -> str:
    previous = report.previous_version
    return f"Comparison with prompt {previous}" if previous else "Comparison"


def _comparison_body(report: FolderReport) -> list[str]:
    previous = report.previous_version
    if previous is None:
        return [f"{report.version} is the first prompt version: nothing to compare.", ""]
    lines = []
    if not report.previous_rows:
        lines.append(
            f"No results for prompt {previous} ({report.judge}/{previous}/{RESULTS_FILE} in the "
            "reports folder): run `pytest` to judge it, then `python -m judges report`."
        )
    elif not report.comparisons:
        lines.append("No main-run rows to pair.")
    for comparison in report.comparisons:
        lines.append(comparison_markdown(comparison, level=3))
    return [*lines, ""]


def _metadata_md(meta: RunMetadata) -> str:
    entries = "\n".join(f"- {label}: {value}" for label, value in meta.items())
    return (
        f"---\n\n{METADATA_BEGIN}\n## Run metadata\n\n"
        "Everything above is computed from results.jsonl and is identical between builds; "
        f"this block is not.\n\n{entries}\n{METADATA_END}\n"
    )


def render_report_md(report: FolderReport, meta: RunMetadata) -> str:
    """report.md: the whole report, then the run-metadata block."""
    runs = ", ".join(f"{run} {n}" for run, n in report.rows_by_run.items()) or "none"
    lines = [
        f"# {report.judge}, prompt {report.version}",
        "",
        "| | |",
        "|---|---|",
        f"| Judge | {report.judge} |",
        f"| Prompt version | {report.version} |",
        f"| Previous version | {report.previous_version or '-'} |",
        f"| Prompt hash | {report.prompt_line()} |",
        f"| Models | {', '.join(m.model for m in report.models) or '-'} |",
        f"| Rows by run | {runs} |",
        f"| Dimensions | {', '.join(report.dimensions) or '-'} |",
        "",
        f"Computed from every row in {RESULTS_FILE}, whichever session wrote it. A detected item "
        "is one answered (status ok) that meets its expectation; a failed judgement counts as "
        "a miss and in the error rate. Intervals are 95% (Wilson for rates, percentile "
        "bootstrap otherwise).",
        "",
    ]
    if report.reprompted:
        lines += [
            f"**Items judged under more than one prompt: {len(report.reprompted)}** (the "
            "prompt file or the item changed between sessions, so their runs disagree on what "
            f"the judge saw): {', '.join(report.reprompted)}. Re-run them for one consistent "
            "report.",
            "",
        ]
    if report.notes:
        lines += ["Notes:", "", *(f"- {note}" for note in report.notes), ""]
    for m in report.models:
        lines += [f"## Model {m.model}", ""]
        if m.notes:
            lines += [*(f"- {note}" for note in m.notes), ""]
        lines += _detection_md(m)
        if m.noise_floor is not None:
            lines += _noise_md(m.noise_floor)
        if m.test_retest is not None:
            lines += _retest_md(m.test_retest)
        if m.panel is not None:
            lines += _panel_md(m.panel)
        if m.sme is not None:
            lines += _sme_md(m.sme, report.sme_labels or "-")
        lines += _gates_md(m)
        lines += _failures_summary_md(m)
    lines += _usage_md(report)
    lines += [f"## {_comparison_heading(report)}", "", *_comparison_body(report)]
    return "\n".join(lines) + "\n" + _metadata_md(meta)


def _fence(text: str, language: str = "") -> list[str]:
    """A fenced block longer than any backtick run inside, so the text cannot close it."""
    longest = max((len(run) for run in text.split("\n") for run in _backtick_runs(run)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{language}", text, fence]


def _backtick_runs(line: str) -> list[str]:
    runs, current = [], ""
    for char in line:
        if char == "`":
            current += char
        elif current:
            runs.append(current)
            current = ""
    return [*runs, current] if current else runs


def _failure_md(f: Failure) -> list[str]:
    row = f.row
    kind = f"{row.category}, control" if row.control and row.category != "control" else row.category
    lines = [f"### {row.item_id} ({kind}): {outcome(row)}", ""]
    if f.accepted_miss is not None:
        lines += [f"**Accepted miss** (expectations.toml): {f.accepted_miss}", ""]
    lines.append(f"- Expected: {' and '.join(str(e) for e in row.expect) or '-'}")
    if row.status == "ok":
        lines.append(f"- Returned: {describe_verdict(row) or json.dumps(_key_fields(row.verdict))}")
    else:
        lines.append(f"- Status: {row.status}: {row.error}")
    rationale = f.rationale
    if isinstance(rationale, dict):
        for facet, text in sorted(rationale.items()):
            lines.append(f"- Rationale ({facet}): {json.dumps(text, ensure_ascii=False)}")
    elif rationale:
        lines.append(f"- Rationale: {json.dumps(rationale, ensure_ascii=False)}")
    raw = f.raw
    if isinstance(raw, dict):
        for facet, text in sorted(raw.items()):
            lines += ["", f"Raw reply ({facet}):", "", *_fence(text, "json")]
    elif raw is not None:
        lines += ["", "Raw reply:", "", *_fence(raw, "json")]
    for attempt in row.attempts:
        if attempt.error:
            facet = f" {attempt.facet}" if attempt.facet else ""
            lines += [
                "",
                f"Attempt {attempt.attempt + 1}{facet}: {attempt.error_kind}: {attempt.error}",
                "",
                *_fence(attempt.text or "(empty reply)", "json"),
            ]
    return [*lines, ""]


def render_failures_md(report: FolderReport) -> str:
    """failures.md: every main-run item that failed its expectation or errored."""
    total = sum(len(m.failures) for m in report.models)
    accepted = sum(f.accepted_miss is not None for m in report.models for f in m.failures)
    lines = [
        f"# Failures: {report.judge}, prompt {report.version}",
        "",
        f"{total} main-run judgements failed their expectation or errored; {accepted} are "
        "accepted misses (listed in the planted set's expectations.toml, run as strict xfail).",
        "",
    ]
    for m in report.models:
        lines += [f"## Model {m.model}", ""]
        if not m.failures:
            lines += ["No failures.", ""]
        for failure in m.failures:
            lines += _failure_md(failure)
    return "\n".join(lines)


def render_comparison_md(report: FolderReport) -> str:
    """comparison.md: the paired comparison with the previous prompt version."""
    heading = f"# {report.judge}, prompt {report.version}: {_comparison_heading(report)}"
    return "\n".join([heading, "", *_comparison_body(report)])


def _finite(value: Any) -> Any:
    """JSON has no nan or infinity: a verdict that carries one shows null instead."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def render_report_json(report: FolderReport, meta: RunMetadata) -> str:
    content = _finite({**report.as_dict(), METADATA_KEY: meta.as_dict()})
    return json.dumps(content, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


# --------------------------------------------------------------------------- files


def render_files(report: FolderReport, meta: RunMetadata) -> dict[str, str]:
    """Every report file of the folder but results.jsonl, by file name."""
    # Imported here: the HTML renderer imports this module's report classes.
    from judges.reports.html import render_html

    files = {
        REPORT_MD: render_report_md(report, meta),
        FAILURES_MD: render_failures_md(report),
        REPORT_JSON: render_report_json(report, meta),
        INDEX_HTML: render_html(report, meta),
    }
    if report.previous_version is not None:
        files[COMPARISON_MD] = render_comparison_md(report)
    return files


def write_report(folder: Path, report: FolderReport, meta: RunMetadata) -> list[Path]:
    """Write the report files atomically; a comparison.md no longer due is removed."""
    files = render_files(report, meta)
    written = []
    for name, text in files.items():
        atomic_write_text(folder / name, text)
        written.append(folder / name)
    if COMPARISON_MD not in files:
        (folder / COMPARISON_MD).unlink(missing_ok=True)
    return written


def _versions_on_disk(reports: Path, judge: str) -> list[str]:
    found = [p.name for p in (reports / judge).iterdir() if (p / RESULTS_FILE).is_file()]
    try:
        return sorted(found, key=version_key)
    except ValueError:
        return sorted(found)


def _neighbour(
    reports: Path, judge: str, version: str, spec: JudgeSpec | None, step: int
) -> str | None:
    """The previous (step -1) or next (step +1) prompt version of a judge."""
    if spec is not None and version in spec.versions:
        ordered = spec.versions
    else:
        ordered = _versions_on_disk(reports, judge) if (reports / judge).is_dir() else []
    if version not in ordered:
        return None
    index = ordered.index(version) + step
    return ordered[index] if 0 <= index < len(ordered) else None


def build_folder(reports: Path, judge: str, version: str, sources: Sources) -> FolderReport:
    """The report of `reports/<judge>/<version>/` from its results.jsonl (which must exist)."""
    path = report_dir(reports, judge, version) / RESULTS_FILE
    if not path.is_file():
        raise ResultsMissing(path)
    rows = read_jsonl(path)
    previous_version = _neighbour(reports, judge, version, sources.spec, -1)
    previous = None
    if previous_version is not None:
        previous_path = report_dir(reports, judge, previous_version) / RESULTS_FILE
        previous = (
            previous_version,
            read_jsonl(previous_path) if previous_path.is_file() else None,
        )
    return build_report(judge, version, rows, sources, previous)


@dataclass(frozen=True)
class ReportSet:
    """Reports built once at the end of a run: written to disk, then summarised in lines.

    Iterating yields the written paths, which is what the plugin keeps as `session.report`.
    """

    reports: Path
    folders: tuple[FolderReport, ...]
    written: tuple[Path, ...] = field(default=())

    def __iter__(self) -> Iterator[Path]:
        return iter(self.written)

    def write(self, meta: RunMetadata) -> ReportSet:
        written: list[Path] = []
        for folder in self.folders:
            written += write_report(
                report_dir(self.reports, folder.judge, folder.version), folder, meta
            )
        return ReportSet(self.reports, self.folders, tuple(written))

    def lines(self) -> list[str]:
        lines = [m.summary_line(f.judge, f.version) for f in self.folders for m in f.models]
        for folder in self.folders:
            where = report_dir(self.reports, folder.judge, folder.version)
            lines.append(f"report: {_shown(where)}/ ({INDEX_HTML}, {REPORT_MD}, {FAILURES_MD})")
        return lines


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _build_set(
    reports: Path,
    targets: Sequence[tuple[str, str]],
    catalog: Mapping[str, JudgeSpec],
    planted_root: Path,
) -> ReportSet:
    cache: dict[str, Sources] = {}
    folders = []
    for judge, version in targets:
        if judge not in cache:
            cache[judge] = load_sources(judge, catalog, planted_root)
        folders.append(build_folder(reports, judge, version, cache[judge]))
    return ReportSet(reports, tuple(folders))


# --------------------------------------------------------------------------- entry points


def write_session_reports(session: JudgesSession) -> ReportSet:
    """Merge this session's rows into each results file, then rebuild the affected reports.

    A version's successor is rebuilt too when it has results: its comparison reads this
    version's rows.
    """
    started = time.perf_counter()
    reports = session.settings.reports
    by_folder: dict[tuple[str, str], list[JudgementRow]] = {}
    for row in session.rows:
        by_folder.setdefault((row.judge, row.prompt_version), []).append(row)
    for (judge, version), rows in sorted(by_folder.items()):
        path = report_dir(reports, judge, version) / RESULTS_FILE
        existing = read_jsonl(path) if path.is_file() else []
        write_jsonl(path, merge_rows(existing, rows))
    catalog = session.catalog
    targets = sorted(by_folder)
    for judge, version in sorted(by_folder):
        following = _neighbour(reports, judge, version, catalog.get(judge), +1)
        if (
            following is not None
            and (judge, following) not in targets
            and (report_dir(reports, judge, following) / RESULTS_FILE).is_file()
        ):
            targets.append((judge, following))
    built = _build_set(reports, sorted(targets), catalog, session.settings.planted_sets)
    meta = RunMetadata.collect(
        "pytest session",
        session.settings.session_id,
        {
            # Workers judge concurrently, so this is call time, not wall time.
            "judge calls (sum of latencies)": math.fsum(row.latency_s for row in session.rows),
            "report build": time.perf_counter() - started,
        },
    )
    results = tuple(report_dir(reports, j, v) / RESULTS_FILE for j, v in sorted(by_folder))
    done = built.write(meta)
    return ReportSet(reports, done.folders, results + done.written)


def rebuild_reports(
    reports: Path,
    planted_root: Path,
    judge: str | None = None,
    catalog: Mapping[str, JudgeSpec] | None = None,
) -> ReportSet:
    """Rebuild every report file from the results files on disk, for one judge or all."""
    started = time.perf_counter()
    pattern = f"{judge or '*'}/*/{RESULTS_FILE}"
    found = sorted(reports.glob(pattern)) if reports.is_dir() else []
    if not found:
        raise ResultsMissing(reports / pattern)
    targets = [(p.parent.parent.name, p.parent.name) for p in found]
    built = _build_set(
        reports, targets, load_catalog() if catalog is None else catalog, planted_root
    )
    meta = RunMetadata.collect(
        "python -m judges report", None, {"report build": time.perf_counter() - started}
    )
    return built.write(meta)


def load_comparison(
    reports: Path,
    judge: str,
    before: str,
    after: str,
    catalog: Mapping[str, JudgeSpec] | None = None,
) -> list[Comparison]:
    """Prompt version `before` against `after` of one judge, from their results files."""
    spec = (load_catalog() if catalog is None else catalog).get(judge)
    rows = {}
    for version in (before, after):
        path = report_dir(reports, judge, version) / RESULTS_FILE
        if not path.is_file():
            raise ResultsMissing(path)
        rows[version] = read_jsonl(path)
    dimensions = _dimensions(spec, rows[after])
    return compare_versions(judge, (before, rows[before]), (after, rows[after]), dimensions)


def summary_lines(session: JudgesSession) -> list[str]:
    lines = []
    statuses: dict[str, int] = {}
    for row in session.rows:
        statuses[row.status] = statuses.get(row.status, 0) + 1
    counts = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
    lines.append(f"{len(session.rows)} judgements: {counts}")
    for model, usage in session.usage_by_model().items():
        lines.append(
            f"{model}: {usage.calls} calls, {usage.input_tokens} input + "
            f"{usage.output_tokens} output tokens, ${usage.cost_usd:.4f}"
        )
    live = session.ledger.totals()
    for model, usage in live.items():
        lines.append(
            f"live spend {model}: {usage.calls} calls, {usage.input_tokens} + "
            f"{usage.output_tokens} tokens, ${usage.cost_usd:.4f}"
        )
    if session.settings.cost_cap_usd is not None:
        lines.append(
            f"cost cap ${session.settings.cost_cap_usd:.4f}: spent "
            f"${session.ledger.spent_usd():.4f}"
        )
    written = session.report
    if isinstance(written, ReportSet):
        lines += written.lines()
    return lines
