"""The finale tier: promote qualifier finalists per stratum, judge them with G-Eval, report.

The qualifier metric (ROUGE-L against a reference) picks the finalists; the `geval` judge
scores every (finalist, episode) on four dimensions; a cross-check judge re-scores the top
finalists of each stratum so that judge-specific bias shows up as a `contested` flag.

- Strata are ordered; a run joins the first stratum any of whose substrings occurs in its
  name (first match wins). A run matching none is reported as unstratified, never promoted.
- Per stratum: rank by the metric (ties by run name), keep the top N, drop any below
  floor_ratio x the stratum leader; then trim the union to the global cap by the metric.
- Judging goes through `judges.core.runner.judge` with a `Call` the caller builds per slot (so the
  caller decides record, replay and cassettes); spend goes through a `Ledger` whose cap turns
  every later judgement into a `cost_cap` row. A capped run still writes every artifact.
- Artifacts in out_dir: promotion.json (first, before any judging), finalists.jsonl (one row
  per finalist x episode x dimension x judge, rewritten after every judgement),
  finale_report.json and finale_report.md. All are byte-identical between runs over the same
  replies, apart from the run-metadata block of the two reports.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shlex
import sys
import time
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from judges.calls.backends import (
    LOCAL_KEY_VARIABLE,
    Backend,
    BackendError,
    JudgeRequest,
    JudgeResponse,
    ModelRef,
    Price,
    load_prices,
    make_backend,
    price_for,
)
from judges.calls.ledger import Ledger
from judges.core.naming import safe_name
from judges.core.results import JudgementRow
from judges.core.runner import Call, Subject, judge
from judges.core.spec import JudgeSpec, Sampling, SpecError, load_catalog
from judges.files import atomic_write_text

__all__ = [
    "CROSS",
    "PRIMARY",
    "CallSlot",
    "Candidate",
    "CassetteMissing",
    "Episode",
    "FinaleConfig",
    "FinaleError",
    "FinaleResult",
    "Finalist",
    "JudgeCallFactory",
    "Promotion",
    "Rejection",
    "Stratum",
    "StratumPromotion",
    "add_finale_command",
    "assign_stratum",
    "cassette_path",
    "judging_plan",
    "load_candidates",
    "load_config",
    "load_episodes",
    "promote_finalists",
    "render_markdown",
    "run_finale",
    "write_promotion",
]

PRIMARY = "primary"
CROSS = "cross"
ROLES = (PRIMARY, CROSS)
DEFAULT_CONFIG = Path("planted_sets/finale/finale.toml")
DEFAULT_OUT = Path("reports/finale")
DEFAULT_CASSETTES = Path("cassettes/finale")
PROMOTION_FILE = "promotion.json"
FINALISTS_FILE = "finalists.jsonl"
REPORT_JSON = "finale_report.json"
REPORT_MD = "finale_report.md"
LEDGER_FILE = ".finale-ledger.jsonl"  # this run's spend; reset at the start of every run
# The same markers as the judge reports: everything outside them is identical between runs.
METADATA_BEGIN = "<!-- judges:run-metadata:begin -->"
METADATA_END = "<!-- judges:run-metadata:end -->"
RECORD_COMMAND = "python -m judges finale --record"
# 0.8 x 0.30 is 0.24000000000000002 in floating point; a run at 0.24 is on the floor.
_EPS = 1e-9
_SHORT = {"faithfulness": "Faith", "coverage": "Cov", "coherence": "Coh", "fluency": "Flu"}

# Rejection reasons, in the order the rules apply.
UNSTRATIFIED = "unstratified"
NO_METRIC = "no qualifier metric"
BELOW_FLOOR = "below floor"
GLOBAL_CAP = "global cap"


def outside_top(n: int) -> str:
    return f"outside top {n}"


class FinaleError(ValueError):
    """The finale cannot run as configured; the message names the file or the setting."""


# --------------------------------------------------------------------------- configuration


class Stratum(BaseModel):
    """A deployment tier: a run joins it when any of `match` occurs in the run's name."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    match: tuple[str, ...] = Field(min_length=1)

    @field_validator("match")
    @classmethod
    def _no_empty_substring(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not part for part in value):
            raise ValueError("an empty substring would match every run")
        return value


class FinaleConfig(BaseModel):
    """The contents of a finale TOML file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tag: str = "finale"
    strata: tuple[Stratum, ...] = Field(min_length=1)
    top_per_stratum: int = Field(default=3, ge=1)
    floor_ratio: float = Field(default=0.8, gt=0, le=1)
    global_cap: int = Field(default=12, ge=1)
    qualifier_metric: str = Field(default="rougeL_f1", min_length=1)
    candidates: str = "candidates"
    episodes: str = "episodes.jsonl"
    judge: str = "geval"
    prompt_version: str | None = None  # None: the judge's latest version
    primary_model: str = "local:smollm2-135m"
    primary_label: str = ""
    cross_model: str = "local:smollm2-135m"
    cross_temperature: float = Field(default=0.0, ge=0, le=2)
    cross_label: str = ""
    cross_top_per_stratum: int = Field(default=2, ge=0)
    contested_threshold: float = Field(default=0.5, ge=0)
    cost_cap_usd: float | None = Field(default=50.0, gt=0)

    @field_validator("strata")
    @classmethod
    def _unique_names(cls, value: tuple[Stratum, ...]) -> tuple[Stratum, ...]:
        names = [s.name for s in value]
        doubled = sorted({n for n in names if names.count(n) > 1})
        if doubled:
            raise ValueError(f"stratum names must be unique; repeated: {doubled}")
        return value

    @field_validator("primary_model", "cross_model")
    @classmethod
    def _model_ref(cls, value: str) -> str:
        ModelRef.parse(value)  # BackendError is a ValueError: pydantic reports it
        return value

    @property
    def primary(self) -> ModelRef:
        return ModelRef.parse(self.primary_model)

    @property
    def cross(self) -> ModelRef:
        return ModelRef.parse(self.cross_model)

    def with_cost_cap(self, cap_usd: float | None) -> FinaleConfig:
        """A copy with another cap, validated like the file's own."""
        return FinaleConfig.model_validate({**self.model_dump(), "cost_cap_usd": cap_usd})


def load_config(path: Path) -> FinaleConfig:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return FinaleConfig.model_validate(data)
    except OSError as error:
        raise FinaleError(f"{path}: cannot read the finale config: {error}") from None
    except (tomllib.TOMLDecodeError, ValidationError) as error:
        raise FinaleError(f"{path}: {error}") from None


# --------------------------------------------------------------------------- candidates


@dataclass(frozen=True, eq=False)
class Candidate:
    """One qualifier run: its metrics and its summary of each episode."""

    run: str
    metrics: Mapping[str, Any]
    summaries: Mapping[str, str]

    def metric(self, name: str) -> float | None:
        """A numeric metric; a dotted name (`vs_reference.rougeL_f1`) walks nested tables."""
        value: Any = self.metrics
        for part in name.split("."):
            if not isinstance(value, Mapping) or part not in value:
                return None
            value = value[part]
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
            return None
        return float(value)


@dataclass(frozen=True)
class Episode:
    episode_id: str
    transcript: str


def _jsonl(path: Path, keys: tuple[str, ...]) -> list[dict[str, str]]:
    """Objects with exactly these non-empty string fields, one a line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise FinaleError(f"{path}: {error}") from None
    records: list[dict[str, str]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as error:
            raise FinaleError(f"{path}:{number}: not JSON: {error}") from None
        if not isinstance(record, dict) or any(
            not isinstance(record.get(key), str) or not record[key].strip() for key in keys
        ):
            raise FinaleError(f"{path}:{number}: needs non-empty string fields {list(keys)}")
        records.append({key: record[key] for key in keys})
    ids = [r[keys[0]] for r in records]
    doubled = sorted({i for i in ids if ids.count(i) > 1})
    if doubled:
        raise FinaleError(f"{path}: {keys[0]} repeated: {doubled}")
    return records


def load_episodes(path: Path) -> list[Episode]:
    """`{"episode_id", "transcript"}` per line, in file order."""
    episodes = [Episode(r["episode_id"], r["transcript"]) for r in _jsonl(path, _EPISODE_KEYS)]
    if not episodes:
        raise FinaleError(f"{path}: no episodes")
    return episodes


_EPISODE_KEYS = ("episode_id", "transcript")
_PREDICTION_KEYS = ("episode_id", "summary")


def load_candidates(folder: Path) -> list[Candidate]:
    """Every `<folder>/<run>/metrics.json` (+ optional predictions.jsonl), by run name."""
    if not folder.is_dir():
        raise FinaleError(f"{folder}: no candidates folder")
    candidates: list[Candidate] = []
    for run_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
        metrics_path = run_dir / "metrics.json"
        if not metrics_path.is_file():
            continue
        try:
            metrics = json.loads(metrics_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise FinaleError(f"{metrics_path}: not a JSON object: {error}") from None
        if not isinstance(metrics, dict):
            raise FinaleError(f"{metrics_path}: must hold a JSON object of metrics")
        predictions = run_dir / "predictions.jsonl"
        summaries = (
            {r["episode_id"]: r["summary"] for r in _jsonl(predictions, _PREDICTION_KEYS)}
            if predictions.is_file()
            else {}
        )
        candidates.append(Candidate(run_dir.name, metrics, summaries))
    if not candidates:
        raise FinaleError(f"{folder}: no <run>/metrics.json")
    return candidates


# --------------------------------------------------------------------------- promotion


def assign_stratum(run: str, strata: Sequence[Stratum]) -> str | None:
    """The first stratum (in order) any of whose substrings occurs in the run name."""
    for stratum in strata:
        if any(part in run for part in stratum.match):
            return stratum.name
    return None


@dataclass(frozen=True)
class Rejection:
    run: str
    metric: float | None
    reason: str  # one of the reason constants above, or outside_top(n)
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "metric": _round(self.metric),
            "reason": self.reason,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class Finalist:
    run: str
    stratum: str
    metric: float
    global_rank: int  # 1-based, over all finalists by the metric
    cross_check: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "stratum": self.stratum,
            "metric": _round(self.metric),
            "global_rank": self.global_rank,
            "cross_check": self.cross_check,
        }


@dataclass(frozen=True)
class StratumPromotion:
    name: str
    match: tuple[str, ...]
    ranked: tuple[tuple[str, float], ...]  # runs with the metric, best first
    leader: str | None
    leader_metric: float | None
    floor: float | None
    promoted: tuple[str, ...]  # finalists after the global cap, best first
    rejected: tuple[Rejection, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "match": list(self.match),
            "n_candidates": len(self.ranked) + sum(r.reason == NO_METRIC for r in self.rejected),
            "leader": self.leader,
            "leader_metric": _round(self.leader_metric),
            "floor": _round(self.floor),
            "ranked": [{"run": run, "metric": _round(value)} for run, value in self.ranked],
            "promoted": list(self.promoted),
            "rejected": [r.as_dict() for r in self.rejected],
        }


@dataclass(frozen=True)
class Promotion:
    metric: str
    top_per_stratum: int
    floor_ratio: float
    global_cap: int
    cross_top_per_stratum: int
    strata: tuple[StratumPromotion, ...]
    unstratified: tuple[Rejection, ...]
    finalists: tuple[Finalist, ...]  # global order: metric descending, then run name

    @property
    def cross_checked(self) -> tuple[Finalist, ...]:
        return tuple(f for f in self.finalists if f.cross_check)

    def stratum(self, name: str) -> StratumPromotion:
        return next(s for s in self.strata if s.name == name)

    def as_dict(self) -> dict[str, Any]:
        return {
            "qualifier_metric": self.metric,
            "rules": {
                "top_per_stratum": self.top_per_stratum,
                "floor_ratio": self.floor_ratio,
                "global_cap": self.global_cap,
                "cross_top_per_stratum": self.cross_top_per_stratum,
                "order": "metric descending, ties by run name",
            },
            "strata": [s.as_dict() for s in self.strata],
            "unstratified": [r.as_dict() for r in self.unstratified],
            "finalists": [f.as_dict() for f in self.finalists],
        }

    def lines(self) -> list[str]:
        """A plain-text account of the promotion, for the terminal."""
        out = [
            f"Promotion by {self.metric}: top {self.top_per_stratum} per stratum, floor "
            f"{self.floor_ratio:g} x stratum leader, global cap {self.global_cap}; cross-check "
            f"on the top {self.cross_top_per_stratum} finalists per stratum.",
        ]
        cross = {f.run for f in self.cross_checked}
        for s in self.strata:
            out.append("")
            if s.leader is None:
                out.append(f"{s.name}: no candidates")
            else:
                out.append(
                    f"{s.name}: leader {s.leader} {_num(s.leader_metric)}, floor "
                    f"{_num(s.floor)} ({self.floor_ratio:g} x {_num(s.leader_metric)})"
                )
            metrics = dict(s.ranked)
            for run in s.promoted:
                tag = "  [cross-check]" if run in cross else ""
                out.append(f"  promoted  {run:<34} {_num(metrics[run])}{tag}")
            for r in s.rejected:
                out.append(f"  rejected  {r.run:<34} {_num(r.metric)}  {r.reason}: {r.detail}")
        out.append("")
        if self.unstratified:
            out.append("unstratified (not promoted):")
            out += [f"  {r.run:<44} {_num(r.metric)}  {r.detail}" for r in self.unstratified]
        else:
            out.append("unstratified: none")
        out.append("")
        out.append(f"Finalists ({len(self.finalists)}), by {self.metric}:")
        for f in self.finalists:
            tag = ", cross-check" if f.cross_check else ""
            out.append(f"  {f.global_rank:>2}. {f.run:<34} {_num(f.metric)}  ({f.stratum}{tag})")
        return out


def promote_finalists(candidates: Sequence[Candidate], config: FinaleConfig) -> Promotion:
    """Apply the promotion rule. Pure: the same candidates give the same promotion."""
    metric = config.qualifier_metric
    scored: dict[str, list[tuple[str, float]]] = {s.name: [] for s in config.strata}
    no_metric: dict[str, list[Rejection]] = {s.name: [] for s in config.strata}
    unstratified: list[Rejection] = []
    for candidate in sorted(candidates, key=lambda c: c.run):
        stratum = assign_stratum(candidate.run, config.strata)
        value = candidate.metric(metric)
        if stratum is None:
            unstratified.append(Rejection(candidate.run, value, UNSTRATIFIED, "matches no stratum"))
        elif value is None:
            no_metric[stratum].append(
                Rejection(candidate.run, None, NO_METRIC, f"metrics.json has no numeric {metric}")
            )
        else:
            scored[stratum].append((candidate.run, value))

    ranked_by: dict[str, tuple[tuple[str, float], ...]] = {}
    rejected: dict[str, list[Rejection]] = {}
    survivors: list[tuple[str, str, float]] = []  # (run, stratum, metric)
    floors: dict[str, float | None] = {}
    for stratum in config.strata:
        ranked = tuple(sorted(scored[stratum.name], key=lambda rv: (-rv[1], rv[0])))
        ranked_by[stratum.name] = ranked
        leader = ranked[0][1] if ranked else None
        floor = None if leader is None else config.floor_ratio * leader
        floors[stratum.name] = floor
        rejected[stratum.name] = []
        for index, (run, value) in enumerate(ranked):
            if index >= config.top_per_stratum:
                rejected[stratum.name].append(Rejection(
                    run, value, outside_top(config.top_per_stratum),
                    f"#{index + 1} of {len(ranked)} in {stratum.name}",
                ))  # fmt: skip
            elif floor is not None and value < floor - _EPS:
                rejected[stratum.name].append(Rejection(
                    run, value, BELOW_FLOOR,
                    f"{_num(value)} < {_num(floor)} = {config.floor_ratio:g} x leader "
                    f"{_num(leader)}",
                ))  # fmt: skip
            else:
                survivors.append((run, stratum.name, value))

    ordered = sorted(survivors, key=lambda s: (-s[2], s[0]))
    kept = ordered[: config.global_cap]
    for position, (run, stratum_name, value) in enumerate(
        ordered[config.global_cap :], start=config.global_cap + 1
    ):
        rejected[stratum_name].append(Rejection(
            run, value, GLOBAL_CAP,
            f"#{position} of {len(ordered)} surviving finalists by {metric}; the cap is "
            f"{config.global_cap}",
        ))  # fmt: skip

    cross_count: Counter[str] = Counter()
    finalists: list[Finalist] = []
    for rank, (run, stratum_name, value) in enumerate(kept, start=1):
        cross = cross_count[stratum_name] < config.cross_top_per_stratum
        cross_count[stratum_name] += 1
        finalists.append(Finalist(run, stratum_name, value, rank, cross))

    strata: list[StratumPromotion] = []
    for stratum in config.strata:
        ranked = ranked_by[stratum.name]
        order = {run: index for index, (run, _) in enumerate(ranked)}
        reasons = sorted(rejected[stratum.name], key=lambda r: order[r.run])
        strata.append(StratumPromotion(
            name=stratum.name,
            match=stratum.match,
            ranked=ranked,
            leader=ranked[0][0] if ranked else None,
            leader_metric=ranked[0][1] if ranked else None,
            floor=floors[stratum.name],
            promoted=tuple(f.run for f in finalists if f.stratum == stratum.name),
            rejected=(*reasons, *no_metric[stratum.name]),
        ))  # fmt: skip
    return Promotion(
        metric=metric,
        top_per_stratum=config.top_per_stratum,
        floor_ratio=config.floor_ratio,
        global_cap=config.global_cap,
        cross_top_per_stratum=config.cross_top_per_stratum,
        strata=tuple(strata),
        unstratified=tuple(unstratified),
        finalists=tuple(finalists),
    )


# --------------------------------------------------------------------------- the judging plan


def _judge_of(
    config: FinaleConfig, catalog: Mapping[str, JudgeSpec] | None
) -> tuple[JudgeSpec, str]:
    catalog = load_catalog() if catalog is None else catalog
    if config.judge not in catalog:
        raise FinaleError(f"judge {config.judge!r} is not in the catalog {sorted(catalog)}")
    spec = catalog[config.judge]
    version = config.prompt_version or spec.versions[-1]
    if version not in spec.prompts:
        raise FinaleError(f"judge {spec.name!r} has no prompt {version}; it has {spec.versions}")
    if not spec.config.facets:
        raise FinaleError(f"judge {spec.name!r} has no facets: the finale scores dimensions")
    return spec, version


def _cross_sampling(spec: JudgeSpec, config: FinaleConfig) -> Sampling:
    return spec.config.sampling.model_copy(update={"temperature": config.cross_temperature})


def _labels(spec: JudgeSpec, config: FinaleConfig) -> dict[str, str]:
    production = spec.config.sampling
    cross = _cross_sampling(spec, config)
    same = " (same model as the primary judge)" if config.cross == config.primary else ""
    return {
        PRIMARY: config.primary_label
        or f"{config.primary} at the judge's production sampling (T={production.temperature})",
        CROSS: config.cross_label or f"{config.cross} at T={cross.temperature}{same}",
    }


def judging_plan(
    promotion: Promotion,
    episodes: Sequence[Episode],
    config: FinaleConfig,
    catalog: Mapping[str, JudgeSpec] | None = None,
) -> dict[str, Any]:
    """How many judgements and judge calls a full run of this promotion makes."""
    spec, version = _judge_of(config, catalog)
    dims = len(spec.config.facets)
    primary = len(promotion.finalists) * len(episodes)
    cross = len(promotion.cross_checked) * len(episodes)
    return {
        "judge": spec.name,
        "prompt_version": version,
        "dimensions": list(spec.config.facets),
        "episodes": [e.episode_id for e in episodes],
        "primary": {"model": config.primary_model, "label": _labels(spec, config)[PRIMARY],
                    "finalists": len(promotion.finalists), "judgements": primary},
        "cross": {"model": config.cross_model, "temperature": config.cross_temperature,
                  "label": _labels(spec, config)[CROSS],
                  "finalists": len(promotion.cross_checked), "judgements": cross},
        "judge_calls": (primary + cross) * dims,
        "max_judge_calls_with_retries": (primary + cross) * dims * spec.config.max_attempts,
        "cost_cap_usd": config.cost_cap_usd,
    }  # fmt: skip


def _plan_lines(plan: Mapping[str, Any]) -> list[str]:
    p, c, d = plan["primary"], plan["cross"], len(plan["dimensions"])
    n = len(plan["episodes"])
    return [
        f"Judging plan ({plan['judge']} prompt {plan['prompt_version']}, {d} dimensions, one "
        "call each):",
        f"  primary      {p['model']}: {p['finalists']} finalists x {n} episodes = "
        f"{p['judgements']} judgements",
        f"  cross-check  {c['model']} at T={c['temperature']:g}: {c['finalists']} finalists x "
        f"{n} episodes = {c['judgements']} judgements",
        f"               ({c['label']})",
        f"  judge calls for a full run: {plan['judge_calls']} (up to "
        f"{plan['max_judge_calls_with_retries']} if every reply needed every retry)",
    ]


def write_promotion(out_dir: Path, promotion: Promotion, plan: Mapping[str, Any]) -> Path:
    path = out_dir / PROMOTION_FILE
    atomic_write_text(path, _json({**promotion.as_dict(), "plan": dict(plan)}))
    return path


# --------------------------------------------------------------------------- running


@dataclass(frozen=True)
class CallSlot:
    """One judgement the finale needs; the factory builds its `Call` from this.

    The factory should pass `ledger` and `sampling` on; run_finale sets the call's `run` to
    the role and its sampling to `sampling`, and its ledger to `ledger` when it has none.
    """

    role: str  # PRIMARY or CROSS
    model: ModelRef
    sampling: Sampling | None  # None: the judge's production settings
    finalist: str
    stratum: str
    episode_id: str
    ledger: Ledger


JudgeCallFactory = Callable[[CallSlot], AbstractContextManager[Call]]


@dataclass(frozen=True)
class FinaleResult:
    promotion: Promotion
    rows: tuple[JudgementRow, ...]
    report: dict[str, Any]
    paths: dict[str, Path]

    @property
    def complete(self) -> bool:
        return bool(self.report["complete"])


def _subject(finalist: Finalist, episode: Episode, candidate: Candidate) -> Subject:
    return Subject(
        item_id=f"{finalist.run}/{episode.episode_id}",
        category=finalist.stratum,
        control=False,
        inputs={
            "transcript": episode.transcript,
            "summary": candidate.summaries[episode.episode_id],
        },
    )


def _check_inputs(
    promotion: Promotion,
    candidates: Sequence[Candidate],
    episodes: Sequence[Episode],
    spec: JudgeSpec,
) -> dict[str, Candidate]:
    by_run = {c.run: c for c in candidates}
    missing = [
        f"{f.run}/{e.episode_id}"
        for f in promotion.finalists
        for e in episodes
        if e.episode_id not in by_run[f.run].summaries
    ]
    if missing:
        raise FinaleError(
            f"finalists lack a summary (predictions.jsonl) for {len(missing)} episode(s): "
            f"{', '.join(missing[:8])}{' ...' if len(missing) > 8 else ''}"
        )
    for f in promotion.finalists:
        for e in episodes:
            try:
                spec.parse_inputs(_subject(f, e, by_run[f.run]).inputs)
            except ValidationError as error:
                raise FinaleError(
                    f"{f.run}/{e.episode_id}: not a {spec.name} input: {error}"
                ) from None
    return by_run


def run_finale(
    config: FinaleConfig,
    candidates: Sequence[Candidate],
    episodes: Sequence[Episode],
    *,
    judge_call_factory: JudgeCallFactory,
    out_dir: Path,
    catalog: Mapping[str, JudgeSpec] | None = None,
    progress: Callable[[str], None] | None = None,
    source: str = "judges.finale.finale.run_finale",
) -> FinaleResult:
    """Promote, write promotion.json, judge every slot, then write the other artifacts.

    Primary judgements come first (finalists by global rank, episodes in file order), then
    the cross-check, so a cost cap leaves the cross-check incomplete before the primary.
    """
    started = time.perf_counter()
    spec, version = _judge_of(config, catalog)
    promotion = promote_finalists(candidates, config)
    plan = judging_plan(promotion, episodes, config, catalog={spec.name: spec})
    paths = {"promotion": write_promotion(out_dir, promotion, plan)}
    by_run = _check_inputs(promotion, candidates, episodes, spec)

    cross_sampling = _cross_sampling(spec, config)
    if config.cross == config.primary and cross_sampling == spec.config.sampling:
        raise FinaleError(
            f"the cross-check ({config.cross}, T={config.cross_temperature}) is the primary "
            "judge with its own sampling: it would only repeat it; change cross_model or "
            "cross_temperature"
        )
    ledger_path = out_dir / LEDGER_FILE
    ledger_path.unlink(missing_ok=True)
    ledger = Ledger(ledger_path, config.cost_cap_usd)

    slots: list[tuple[CallSlot, Subject]] = []
    for role, finalists, model, sampling in (
        (PRIMARY, promotion.finalists, config.primary, None),
        (CROSS, promotion.cross_checked, config.cross, cross_sampling),
    ):
        for f in finalists:
            for e in episodes:
                slot = CallSlot(role, model, sampling, f.run, f.stratum, e.episode_id, ledger)
                slots.append((slot, _subject(f, e, by_run[f.run])))

    judged: list[tuple[CallSlot, JudgementRow]] = []
    dims = tuple(spec.config.facets)
    for number, (slot, subject) in enumerate(slots, start=1):
        with judge_call_factory(slot) as call:
            call.run = slot.role
            call.sampling = slot.sampling
            if call.ledger is None:
                call.ledger = slot.ledger
            row = judge(spec, version, subject, call)
        judged.append((slot, row))
        atomic_write_text(out_dir / FINALISTS_FILE, _finalist_rows(judged, dims))
        if progress is not None:
            overall = (row.verdict or {}).get("overall")
            shown = f" overall {overall:.2f}" if isinstance(overall, int | float) else ""
            progress(
                f"[{number}/{len(slots)}] {slot.role:<7} {slot.finalist} "
                f"{slot.episode_id}: {row.status}{shown}"
            )
    paths["finalists"] = out_dir / FINALISTS_FILE

    report = _build_report(config, spec, version, promotion, plan, episodes, judged)
    report["run_metadata"] = _metadata(source, judged, time.perf_counter() - started, ledger)
    paths["report_json"] = out_dir / REPORT_JSON
    atomic_write_text(paths["report_json"], _json(report))
    paths["report_md"] = out_dir / REPORT_MD
    atomic_write_text(paths["report_md"], render_markdown(report))
    return FinaleResult(promotion, tuple(row for _, row in judged), report, paths)


# --------------------------------------------------------------------------- aggregation


def _finalist_rows(judged: Sequence[tuple[CallSlot, JudgementRow]], dims: Sequence[str]) -> str:
    """finalists.jsonl: one line per (finalist, episode, dimension, judge), sorted."""
    role_order = {role: i for i, role in enumerate(ROLES)}
    lines: list[tuple[tuple[Any, ...], str]] = []
    for slot, row in judged:
        verdict = row.verdict if row.status == "ok" else None
        for index, dim in enumerate(dims):
            score = (verdict or {}).get(dim)
            record = {
                "run": slot.finalist,
                "stratum": slot.stratum,
                "episode_id": slot.episode_id,
                "dimension": dim,
                "judge": slot.role,
                "model": str(slot.model),
                "prompt_version": row.prompt_version,
                "score": score if isinstance(score, int) and not isinstance(score, bool) else None,
                "status": row.status,
            }
            key = (slot.finalist, slot.episode_id, role_order[slot.role], index)
            lines.append((key, json.dumps(record, sort_keys=True)))
    return "".join(line + "\n" for _, line in sorted(lines))


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _side(rows: Sequence[JudgementRow], dims: Sequence[str]) -> dict[str, Any]:
    ok = [r.verdict or {} for r in rows if r.status == "ok"]
    errors = Counter(r.status for r in rows if r.status not in ("ok", "cost_cap"))
    return {
        "judgements": len(rows),
        "scored": len(ok),
        "dimensions": {d: _mean([float(v[d]) for v in ok if _is_score(v.get(d))]) for d in dims},
        "overall": _mean([float(v["overall"]) for v in ok if _is_score(v.get("overall"))]),
        "errors": dict(sorted(errors.items())),
        "missing": sum(r.status == "cost_cap" for r in rows),
    }


def _is_score(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and not math.isnan(value)


def _build_report(
    config: FinaleConfig,
    spec: JudgeSpec,
    version: str,
    promotion: Promotion,
    plan: Mapping[str, Any],
    episodes: Sequence[Episode],
    judged: Sequence[tuple[CallSlot, JudgementRow]],
) -> dict[str, Any]:
    from judges.stats.reliability import panel_agreement  # numpy and scipy: only when reporting

    dims = tuple(spec.config.facets)
    labels = _labels(spec, config)
    rows: dict[tuple[str, str], list[JudgementRow]] = {}
    for slot, row in judged:
        rows.setdefault((slot.finalist, slot.role), []).append(row)

    def panel(primary: Sequence[JudgementRow], cross: Sequence[JudgementRow]) -> Any:
        return panel_agreement(
            primary, cross, dims,
            primary_label=labels[PRIMARY], cross_label=labels[CROSS],
            contested_threshold=config.contested_threshold,
            primary_run=PRIMARY, cross_run=CROSS,
        )  # fmt: skip

    entries: dict[str, dict[str, Any]] = {}
    for f in promotion.finalists:
        primary_rows = rows.get((f.run, PRIMARY), [])
        cross_rows = rows.get((f.run, CROSS), [])
        entry: dict[str, Any] = {
            "run": f.run,
            "stratum": f.stratum,
            "qualifier_metric": _round(f.metric),
            "global_rank": f.global_rank,
            "episodes": len(episodes),
            "primary": _side(primary_rows, dims),
            "cross": _side(cross_rows, dims) if f.cross_check else None,
            "agreement": None,
            "difference": None,
            "contested": None,
        }
        if f.cross_check:
            result = panel(primary_rows, cross_rows)
            entry["agreement"] = {
                "paired_episodes": result.n_pairs,
                "exact_or_adjacent": result.agreement.as_dict(),
                "by_dimension": {d: r.as_dict() for d, r in result.agreement_by_dimension.items()},
            }
            entry["difference"] = _round(result.overall_difference.value)
            entry["contested"] = result.contested_overall
        entries[f.run] = entry

    verdicts = []
    for s in promotion.strata:
        ranked = sorted(
            (entries[run] for run in s.promoted),
            key=lambda e: (e["primary"]["overall"] is None, -(e["primary"]["overall"] or 0.0),
                           e["run"]),
        )  # fmt: skip
        for rank, entry in enumerate(ranked, start=1):
            entry["rank"] = rank
        verdicts.append({"stratum": s.name, "finalists": ranked})

    cross_runs = {f.run for f in promotion.cross_checked}
    pooled_primary = [r for (run, role), rs in rows.items() if role == PRIMARY and run in cross_runs
                      for r in rs]  # fmt: skip
    pooled_cross = [r for (_, role), rs in rows.items() if role == CROSS for r in rs]
    pooled = panel(pooled_primary, pooled_cross) if cross_runs else None

    missing = [
        {"run": slot.finalist, "episode_id": slot.episode_id, "judge": slot.role}
        for slot, row in judged
        if row.status == "cost_cap"
    ]
    failed = [
        {"run": slot.finalist, "episode_id": slot.episode_id, "judge": slot.role,
         "status": row.status}
        for slot, row in judged
        if row.status not in ("ok", "cost_cap")
    ]  # fmt: skip
    usage = {role: {"judge_calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
             for role in ROLES}  # fmt: skip
    for slot, row in judged:
        side = usage[slot.role]
        side["judge_calls"] += row.usage.calls
        side["input_tokens"] += row.usage.input_tokens
        side["output_tokens"] += row.usage.output_tokens
        side["cost_usd"] += row.usage.cost_usd
    for side in usage.values():
        side["cost_usd"] = round(side["cost_usd"], 6)
    total = round(sum(side["cost_usd"] for side in usage.values()), 6)

    return {
        "tag": config.tag,
        "judge": spec.name,
        "prompt_version": version,
        "dimensions": list(dims),
        "judges": {
            PRIMARY: {"model": config.primary_model, "label": labels[PRIMARY],
                      "sampling": spec.config.sampling.model_dump()},
            CROSS: {"model": config.cross_model, "label": labels[CROSS],
                    "sampling": _cross_sampling(spec, config).model_dump()},
        },
        "contested_threshold": config.contested_threshold,
        "cost": {
            "total_usd": total,
            "cap_usd": config.cost_cap_usd,
            "cap_reached": bool(missing),
            "by_judge": usage,
            "note": "the price of every judge call the rows record; a replay spends nothing",
        },
        "complete": not missing,
        "planned": {"judgements": len(judged), "judge_calls": plan["judge_calls"]},
        "verdicts": verdicts,
        "agreement": {
            "pooled": None if pooled is None else pooled.agreement.as_dict(),
            "by_dimension": None if pooled is None else {
                d: r.as_dict() for d, r in pooled.agreement_by_dimension.items()
            },
            "by_finalist": {run: entries[run]["agreement"] for run in sorted(cross_runs)},
        },
        "contested": sorted(run for run, e in entries.items() if e["contested"]),
        "errors": {
            run: {role: e[role]["errors"] for role in ROLES if e[role] is not None}
            for run, e in sorted(entries.items())
        },
        "failed": failed,
        "missing": {
            "judgements": len(missing),
            "dimension_scores": len(missing) * len(dims),
            "items": missing,
        },
        "promotion": promotion.as_dict(),
    }  # fmt: skip


def _metadata(
    source: str, judged: Sequence[tuple[CallSlot, JudgementRow]], elapsed: float, ledger: Ledger
) -> dict[str, Any]:
    live = any(row.live for _, row in judged)
    return {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "source": source,
        "mode": "live (recorded)" if live else "replay",
        "elapsed_s": round(elapsed, 3),
        "judge_latency_s": round(sum(row.latency_s for _, row in judged), 3),
        "ledger_usd": round(ledger.spent_usd(), 6),
        "python": platform.python_version(),
    }


# --------------------------------------------------------------------------- markdown


def _usd(value: float | None) -> str:
    if value is None:
        return "none"
    return f"${value:.4f}" if 0 < value < 0.01 else f"${value:.2f}"


def _num(value: float | None, places: int = 4) -> str:
    return "-" if value is None else f"{value:.{places}f}"


def _contested_cell(entry: Mapping[str, Any]) -> str:
    if entry["cross"] is None:
        return "not cross-checked"
    if entry["contested"] is None:
        return "n/a (no paired scores)"
    diff = entry["difference"]
    return f"{'**yes**' if entry['contested'] else 'no'} ({diff:+.2f})"


def render_markdown(report: Mapping[str, Any]) -> str:
    """finale_report.md, laid out as the methodology asks, then the run-metadata block."""
    dims = report["dimensions"]
    cost = report["cost"]
    promotion = report["promotion"]
    lines = [
        f"# Finale sweep \u2014 {report['tag']}",
        "",
        f"_Total spend: {_usd(cost['total_usd'])} (cap {_usd(cost['cap_usd'])})_",
        "",
        f"Judge `{report['judge']}` prompt {report['prompt_version']}, one call per dimension "
        f"({', '.join(dims)}; integers 1-5). Qualifier: {promotion['qualifier_metric']}.",
        "",
        f"- Primary judge: {report['judges'][PRIMARY]['label']}",
        f"- Cross-check judge: {report['judges'][CROSS]['label']}",
        f"- Contested: the primary and cross-check overall means, over the episodes both "
        f"scored, differ by more than {report['contested_threshold']:g}.",
        "",
    ]
    missing = report["missing"]
    if missing["judgements"]:
        lines += [
            f"> **Incomplete: the cost cap stopped the run.** {missing['judgements']} of "
            f"{report['planned']['judgements']} judgements ({missing['dimension_scores']} "
            "dimension scores) are missing; see [What is missing](#what-is-missing). Means "
            "below cover only what was scored.",
            "",
        ]
    lines += ["## Verdicts by stratum", ""]
    head = ["Rank", "Run", *(_SHORT.get(d, d[:4].title()) for d in dims), "Mean", "Contested?"]
    for verdict in report["verdicts"]:
        lines += [f"### {verdict['stratum']}", ""]
        if not verdict["finalists"]:
            lines += ["No finalists.", ""]
            continue
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for e in verdict["finalists"]:
            p = e["primary"]
            run = e["run"] if p["scored"] == e["episodes"] else (
                f"{e['run']} ({p['scored']}/{e['episodes']} episodes)"
            )  # fmt: skip
            cells = [str(e["rank"]), run, *(_num(p["dimensions"][d], 2) for d in dims),
                     _num(p["overall"], 2), _contested_cell(e)]  # fmt: skip
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")

    lines += ["## Cross-check agreement", ""]
    checked = [e for v in report["verdicts"] for e in v["finalists"] if e["cross"] is not None]
    if checked:
        lines += [
            "Exact-or-adjacent agreement (|primary - cross| <= 1) over every (episode, "
            "dimension) pair both judges scored, with a 95% Wilson interval.",
            "",
            "| Stratum | Run | Primary mean | Cross mean | Difference | Agreement | Contested? |",
            "|---|---|---|---|---|---|---|",
        ]
        for e in checked:
            rate = e["agreement"]["exact_or_adjacent"]
            agree = (
                "-" if not rate["n"] else
                f"{rate['successes']}/{rate['n']} = {rate['rate']:.2f} "
                f"[{rate['low']:.2f}, {rate['high']:.2f}]"
            )  # fmt: skip
            lines.append(
                f"| {e['stratum']} | {e['run']} | {_num(e['primary']['overall'], 2)} | "
                f"{_num(e['cross']['overall'], 2)} | "
                f"{'-' if e['difference'] is None else format(e['difference'], '+.2f')} | "
                f"{agree} | {_contested_cell(e)} |"
            )
        pooled = report["agreement"]["pooled"]
        if pooled and pooled["n"]:
            lines += [
                "",
                f"Pooled over all cross-checked finalists: {pooled['successes']}/{pooled['n']} = "
                f"{pooled['rate']:.2f} [{pooled['low']:.2f}, {pooled['high']:.2f}].",
            ]
    else:
        lines.append("No finalist was cross-checked.")
    lines.append("")

    errors = [(run, role, counts) for run, by_role in report["errors"].items()
              for role, counts in by_role.items() if counts]  # fmt: skip
    lines += ["## Errors", ""]
    if errors:
        lines += ["| Run | Judge | Failed judgements |", "|---|---|---|"]
        for run, role, counts in errors:
            text = ", ".join(f"{status} {n}" for status, n in counts.items())
            lines.append(f"| {run} | {role} | {text} |")
    else:
        lines.append("No judgement failed (cost-capped ones are listed under what is missing).")
    lines.append("")

    lines += ["## Promotion details", ""]
    rules = promotion["rules"]
    metric = promotion["qualifier_metric"]
    lines += [
        f"By {metric}: top {rules['top_per_stratum']} per stratum, floor "
        f"{rules['floor_ratio']:g} x stratum leader, global cap {rules['global_cap']}; "
        f"cross-check on the top {rules['cross_top_per_stratum']} finalists per stratum by "
        f"{metric}. First matching stratum wins.",
        "",
    ]
    for s in promotion["strata"]:
        lines += [f"### {s['name']}", ""]
        if s["leader"] is None:
            lines += ["No candidates.", ""]
            continue
        lines += [
            f"- Leader: {s['leader']} ({metric} {_num(s['leader_metric'])})",
            f"- Floor: {_num(s['floor'])} ({rules['floor_ratio']:g} x leader)",
            f"- Promoted: {', '.join(s['promoted']) or 'none'}",
        ]
        if s["rejected"]:
            lines.append("- Rejected:")
            lines += [f"  - {r['run']} ({_num(r['metric'])}): {r['reason']} ({r['detail']})"
                      for r in s["rejected"]]  # fmt: skip
        else:
            lines.append("- Rejected: none")
        lines.append("")
    if promotion["unstratified"]:
        lines += ["### Unstratified (not promoted)", ""]
        lines += [f"- {r['run']} ({_num(r['metric'])}): {r['detail']}"
                  for r in promotion["unstratified"]]  # fmt: skip
        lines.append("")

    if missing["judgements"]:
        lines += [
            "## What is missing",
            "",
            f"The cost cap ({_usd(cost['cap_usd'])}) was reached after {_usd(cost['total_usd'])}; "
            "these judgements were not made (every dimension of each is a `cost_cap` row in "
            f"{FINALISTS_FILE}). Raise the cap and run again to complete them.",
            "",
            "| Run | Episode | Judge |",
            "|---|---|---|",
            *(f"| {m['run']} | {m['episode_id']} | {m['judge']} |" for m in missing["items"]),
            "",
        ]

    meta = report["run_metadata"]
    lines += [
        "---",
        "",
        METADATA_BEGIN,
        "## Run metadata",
        "",
        "Everything above is identical between runs over the same judge replies; this block "
        "is not.",
        "",
        *(f"- {key}: {value}" for key, value in meta.items()),
        METADATA_END,
    ]
    return "\n".join(lines) + "\n"


def _round(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), 4)


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------- command line


def cassette_path(root: Path, model: ModelRef, run: str, episode_id: str, role: str) -> Path:
    """`<root>/<judge-model-slug>/<run>/<episode>.yaml`; the cross-check's ends `.cross.yaml`."""
    suffix = "" if role == PRIMARY else f".{role}"
    return root / model.slug / safe_name(run) / f"{safe_name(episode_id)}{suffix}.yaml"


class CassetteMissing(FinaleError):
    """A replayed judgement has no recorded response."""


class _ReplayBudget:
    """In a replay, charge the ledger with each recorded call as the live run did.

    The runner keeps the ledger only for live calls; without this a replay of a cost-capped
    recording would run past the point where the recording stopped and miss its cassettes.
    """

    def __init__(self, inner: Backend, price: Price, ledger: Ledger) -> None:
        self.model = inner.model
        self.inner = inner
        self.price = price
        self.ledger = ledger

    def complete(self, request: JudgeRequest) -> JudgeResponse:
        self.ledger.ensure_budget()
        response = self.inner.complete(request)
        cost = self.price.cost(response.input_tokens, response.output_tokens)
        self.ledger.charge(str(self.model), response.input_tokens, response.output_tokens, cost)
        return response


def add_finale_command(commands: Any) -> argparse.ArgumentParser:
    """Add `finale` to the subcommands of `python -m judges`."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "finale",
        help="promote qualifier finalists per stratum and score them with the geval judge",
        description="Promote finalists from a finale config's candidate runs (top N per "
        "stratum by the qualifier metric, floor x leader, global cap), write promotion.json, "
        "then score every finalist with the primary judge and the top ones per stratum with "
        "the cross-check judge, replayed from cassettes (or live with --record), and write "
        "finalists.jsonl, finale_report.json and finale_report.md.",
    )
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG, help="finale TOML")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="artifact folder")
    parser.add_argument(
        "--dry-run", action="store_true", help="write promotion.json and print it; no judging"
    )
    parser.add_argument(
        "--record", action="store_true", help="make live judge calls and record the cassettes"
    )
    parser.add_argument(
        "--cost-cap", type=float, metavar="USD", help="override the config's cost_cap_usd"
    )
    parser.add_argument(
        "--base-url",
        help="OpenAI-compatible server for local: judges (default with --record: start the "
        "embedded llama.cpp judge)",
    )
    parser.add_argument("--cassettes", type=Path, default=DEFAULT_CASSETTES, help="cassette folder")
    parser.add_argument(
        "--judge-prices", type=Path, action="append", default=[], metavar="FILE",
        help="extra price table (TOML) overriding judges/calls/prices.toml",
    )  # fmt: skip
    parser.set_defaults(run=cli_finale)
    return parser


def _record_command(args: argparse.Namespace) -> str:
    extra = []
    if args.config != DEFAULT_CONFIG:
        extra += ["--config", str(args.config)]
    if args.cassettes != DEFAULT_CASSETTES:
        extra += ["--cassettes", str(args.cassettes)]
    return " ".join([RECORD_COMMAND, *(shlex.quote(part) for part in extra)])


def _fail(message: str) -> int:
    print(f"python -m judges finale: {message}", file=sys.stderr)
    return 2


def cli_finale(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
        if args.cost_cap is not None:
            config = config.with_cost_cap(args.cost_cap)
        root = args.config.parent
        candidates = load_candidates(root / config.candidates)
        episodes = load_episodes(root / config.episodes)
        promotion = promote_finalists(candidates, config)
        plan = judging_plan(promotion, episodes, config)
    except (FinaleError, SpecError, ValidationError) as error:
        return _fail(str(error))

    if args.dry_run:
        path = write_promotion(args.out, promotion, plan)
        print("\n".join([*promotion.lines(), "", *_plan_lines(plan), "", f"wrote {path}"]))
        return 0

    if not args.record:
        needed = [
            cassette_path(args.cassettes, model, f.run, e.episode_id, role)
            for role, finalists, model in (
                (PRIMARY, promotion.finalists, config.primary),
                (CROSS, promotion.cross_checked, config.cross),
            )
            for f in finalists
            for e in episodes
        ]
        if needed and not any(path.is_file() for path in needed):
            return _fail(
                f"no recorded finale judgements under {args.cassettes} (none of the "
                f"{len(needed)} cassettes exists, e.g. {needed[0]}).\n"
                f"Record them with:  {_record_command(args)}"
            )
    try:
        with _cli_backends(args, config) as (backends, prices):
            factory = _cli_factory(args, backends, prices)
            result = run_finale(
                config, candidates, episodes,
                judge_call_factory=factory, out_dir=args.out,
                progress=lambda line: print(line, file=sys.stderr),
                source="python -m judges finale" + (" --record" if args.record else ""),
            )  # fmt: skip
    except (FinaleError, BackendError) as error:
        return _fail(str(error))
    for path in result.paths.values():
        print(f"wrote {path}")
    missing = result.report["missing"]
    if missing["judgements"]:
        print(
            f"INCOMPLETE: the cost cap stopped the run; {missing['judgements']} judgements are "
            f"missing (listed in {result.paths['report_md']})"
        )
    if result.report["contested"]:
        print(f"contested: {', '.join(result.report['contested'])}")
    return 0


@contextmanager
def _cli_backends(
    args: argparse.Namespace, config: FinaleConfig
) -> Iterator[tuple[dict[str, Backend], dict[str, Price]]]:
    """Backends per model; in a replay the network is blocked, with --record the embedded
    local judge is started when a local model has no --base-url, and stopped at the end."""
    prices = load_prices(*args.judge_prices)
    models = {str(m): m for m in (config.primary, config.cross)}
    resolved = {name: price_for(prices, model) for name, model in models.items()}
    base_url = args.base_url
    server = None
    restore = None
    try:
        if not args.record:
            from judges.calls.network import block_network

            restore = block_network()
        elif base_url is None and any(m.backend == "local" for m in models.values()):
            from judges.calls.local_server import (
                EMBEDDED_MODEL,
                LocalServerError,
                start_local_server,
            )

            other = sorted(n for n, m in models.items() if m.backend == "local"
                           and m.model != EMBEDDED_MODEL)  # fmt: skip
            if other:
                raise FinaleError(
                    f"the embedded judge serves local:{EMBEDDED_MODEL} only; pass --base-url "
                    f"for {', '.join(other)}"
                )
            try:
                server = start_local_server(
                    log_dir=Path(".judges-tmp"), api_key=os.environ.get(LOCAL_KEY_VARIABLE)
                )
            except LocalServerError as error:
                raise FinaleError(f"{error}. Or pass --base-url URL.") from None
            base_url = server.base_url
        backends = {
            name: make_backend(
                model, base_url=None if model.backend == "anthropic" else base_url,
                live=args.record,
            )
            for name, model in models.items()
        }  # fmt: skip
        yield backends, resolved
    finally:
        if server is not None:
            server.stop()
        if restore is not None:
            restore()


def _cli_factory(
    args: argparse.Namespace, backends: Mapping[str, Backend], prices: Mapping[str, Price]
) -> JudgeCallFactory:
    from judges.calls import _vcr

    @contextmanager
    def factory(slot: CallSlot) -> Iterator[Call]:
        path = cassette_path(args.cassettes, slot.model, slot.finalist, slot.episode_id, slot.role)
        price = prices[str(slot.model)]
        backend = backends[str(slot.model)]
        if not args.record and slot.ledger.cap_usd is not None:
            backend = _ReplayBudget(backend, price, slot.ledger)
        try:
            with _vcr.cassette(path, record=args.record):
                yield Call(
                    backend=backend, price=price, live=args.record, ledger=slot.ledger,
                    is_fatal=_vcr.is_replay_miss, run=slot.role, sampling=slot.sampling,
                )  # fmt: skip
        except Exception as error:
            if not _vcr.is_replay_miss(error):
                raise
            state = (
                "does not exist" if not path.is_file()
                else "does not hold this request (the recording stopped earlier, e.g. at a "
                "lower cost cap, or the prompt, summary, transcript or sampling changed since)"
            )  # fmt: skip
            raise CassetteMissing(
                f"no recorded {slot.role} judgement of {slot.finalist} on {slot.episode_id} "
                f"({slot.model}): cassette {path} {state}.\n"
                f"Record the finale with:  {_record_command(args)}"
            ) from None

    return factory
