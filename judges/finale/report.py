"""The finale's report data: finalists.jsonl and the dictionary behind finale_report.json/.md.

Pure functions of the judged slots; only the run-metadata block differs between two runs over
the same judge replies.
"""

from __future__ import annotations

import json
import math
import platform
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from judges.calls.ledger import Ledger
from judges.core.results import JudgementRow
from judges.core.spec import JudgeSpec
from judges.finale.config import CROSS, PRIMARY, ROLES, Episode, FinaleConfig
from judges.finale.formats import round4
from judges.finale.plan import CallSlot, cross_sampling, judge_labels
from judges.finale.promotion import Finalist, Promotion

__all__ = ["build_report", "finalist_rows", "run_metadata"]

Judged = Sequence[tuple[CallSlot, JudgementRow]]
RowsByRole = dict[tuple[str, str], list[JudgementRow]]  # (run, role) -> rows


def finalist_rows(judged: Judged, dims: Sequence[str]) -> str:
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


def run_metadata(source: str, judged: Judged, elapsed: float, ledger: Ledger) -> dict[str, Any]:
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


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _is_score(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and not math.isnan(value)


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


class _Panel:
    """The panel comparison of primary and cross-check rows with this finale's settings."""

    def __init__(self, config: FinaleConfig, dims: Sequence[str], labels: Mapping[str, str]):
        self.config = config
        self.dims = tuple(dims)
        self.labels = labels

    def __call__(self, primary: Sequence[JudgementRow], cross: Sequence[JudgementRow]) -> Any:
        from judges.stats.reliability.panel import (
            panel_agreement,  # numpy and scipy: only when reporting
        )

        return panel_agreement(
            primary, cross, self.dims,
            primary_label=self.labels[PRIMARY], cross_label=self.labels[CROSS],
            contested_threshold=self.config.contested_threshold,
            primary_run=PRIMARY, cross_run=CROSS,
        )  # fmt: skip


def _finalist_entry(
    finalist: Finalist, rows: RowsByRole, n_episodes: int, dims: Sequence[str], panel: _Panel
) -> dict[str, Any]:
    primary_rows = rows.get((finalist.run, PRIMARY), [])
    cross_rows = rows.get((finalist.run, CROSS), [])
    entry: dict[str, Any] = {
        "run": finalist.run,
        "stratum": finalist.stratum,
        "qualifier_metric": round4(finalist.metric),
        "global_rank": finalist.global_rank,
        "episodes": n_episodes,
        "primary": _side(primary_rows, dims),
        "cross": _side(cross_rows, dims) if finalist.cross_check else None,
        "agreement": None,
        "difference": None,
        "contested": None,
    }
    if finalist.cross_check:
        result = panel(primary_rows, cross_rows)
        entry["agreement"] = {
            "paired_episodes": result.n_pairs,
            "exact_or_adjacent": result.agreement.as_dict(),
            "by_dimension": {d: r.as_dict() for d, r in result.agreement_by_dimension.items()},
        }
        entry["difference"] = round4(result.overall_difference.value)
        entry["contested"] = result.contested_overall
    return entry


def _verdicts(promotion: Promotion, entries: Mapping[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each stratum's finalists ranked by the primary judge's overall mean (unscored last)."""
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
    return verdicts


def _pooled_agreement(
    rows: RowsByRole, cross_runs: set[str], entries: Mapping[str, dict[str, Any]], panel: _Panel
) -> dict[str, Any]:
    pooled_primary = [r for (run, role), rs in rows.items() if role == PRIMARY and run in cross_runs
                      for r in rs]  # fmt: skip
    pooled_cross = [r for (_, role), rs in rows.items() if role == CROSS for r in rs]
    pooled = panel(pooled_primary, pooled_cross) if cross_runs else None
    return {
        "pooled": None if pooled is None else pooled.agreement.as_dict(),
        "by_dimension": None if pooled is None else {
            d: r.as_dict() for d, r in pooled.agreement_by_dimension.items()
        },
        "by_finalist": {run: entries[run]["agreement"] for run in sorted(cross_runs)},
    }  # fmt: skip


def _usage(judged: Judged) -> dict[str, dict[str, Any]]:
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
    return usage


def _unmade(judged: Judged) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The judgements the cost cap stopped, and those that failed."""
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
    return missing, failed


def _cost(config: FinaleConfig, judged: Judged, cap_reached: bool) -> dict[str, Any]:
    usage = _usage(judged)
    return {
        "total_usd": round(sum(side["cost_usd"] for side in usage.values()), 6),
        "cap_usd": config.cost_cap_usd,
        "cap_reached": cap_reached,
        "by_judge": usage,
        "note": "the price of every judge call the rows record; a replay spends nothing",
    }


def build_report(
    config: FinaleConfig,
    spec: JudgeSpec,
    version: str,
    promotion: Promotion,
    plan: Mapping[str, Any],
    episodes: Sequence[Episode],
    judged: Judged,
) -> dict[str, Any]:
    """finale_report.json without its run-metadata block."""
    dims = tuple(spec.config.facets)
    labels = judge_labels(spec, config)
    panel = _Panel(config, dims, labels)
    rows: RowsByRole = {}
    for slot, row in judged:
        rows.setdefault((slot.finalist, slot.role), []).append(row)
    entries = {
        f.run: _finalist_entry(f, rows, len(episodes), dims, panel) for f in promotion.finalists
    }
    verdicts = _verdicts(promotion, entries)
    cross_runs = {f.run for f in promotion.cross_checked}
    missing, failed = _unmade(judged)
    return {
        "tag": config.tag,
        "judge": spec.name,
        "prompt_version": version,
        "dimensions": list(dims),
        "judges": {
            PRIMARY: {"model": config.primary_model, "label": labels[PRIMARY],
                      "sampling": spec.config.sampling.model_dump()},
            CROSS: {"model": config.cross_model, "label": labels[CROSS],
                    "sampling": cross_sampling(spec, config).model_dump()},
        },
        "contested_threshold": config.contested_threshold,
        "cost": _cost(config, judged, bool(missing)),
        "complete": not missing,
        "planned": {"judgements": len(judged), "judge_calls": plan["judge_calls"]},
        "verdicts": verdicts,
        "agreement": _pooled_agreement(rows, cross_runs, entries, panel),
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
