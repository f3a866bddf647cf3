"""The judging plan: which judge and prompt score the finalists, and how many calls it takes.

`promotion.json` (the promotion and this plan) is written before any judging, so a dry run
and a cost-capped run both leave it behind.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judges.calls.backends import ModelRef
from judges.calls.ledger import Ledger
from judges.core.runner import Call
from judges.core.spec import JudgeSpec, Sampling, load_catalog
from judges.finale.config import CROSS, PRIMARY, Episode, FinaleConfig, FinaleError
from judges.finale.formats import dump_json
from judges.finale.promotion import Promotion
from judges.storage.files import atomic_write_text

__all__ = [
    "FINALISTS_FILE",
    "LEDGER_FILE",
    "PROMOTION_FILE",
    "REPORT_JSON",
    "REPORT_MD",
    "CallSlot",
    "JudgeCallFactory",
    "cross_sampling",
    "judge_labels",
    "judge_of",
    "judging_plan",
    "plan_lines",
    "write_promotion",
]

# Artifacts in out_dir. promotion.json comes first, before any judging.
PROMOTION_FILE = "promotion.json"
FINALISTS_FILE = "finalists.jsonl"  # rewritten after every judgement
REPORT_JSON = "finale_report.json"
REPORT_MD = "finale_report.md"
LEDGER_FILE = ".finale-ledger.jsonl"  # this run's spend; reset at the start of every run


def judge_of(
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


def cross_sampling(spec: JudgeSpec, config: FinaleConfig) -> Sampling:
    return spec.config.sampling.model_copy(update={"temperature": config.cross_temperature})


def judge_labels(spec: JudgeSpec, config: FinaleConfig) -> dict[str, str]:
    production = spec.config.sampling
    cross = cross_sampling(spec, config)
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
    spec, version = judge_of(config, catalog)
    dims = len(spec.config.facets)
    primary = len(promotion.finalists) * len(episodes)
    cross = len(promotion.cross_checked) * len(episodes)
    return {
        "judge": spec.name,
        "prompt_version": version,
        "dimensions": list(spec.config.facets),
        "episodes": [e.episode_id for e in episodes],
        "primary": {"model": config.primary_model, "label": judge_labels(spec, config)[PRIMARY],
                    "finalists": len(promotion.finalists), "judgements": primary},
        "cross": {"model": config.cross_model, "temperature": config.cross_temperature,
                  "label": judge_labels(spec, config)[CROSS],
                  "finalists": len(promotion.cross_checked), "judgements": cross},
        "judge_calls": (primary + cross) * dims,
        "max_judge_calls_with_retries": (primary + cross) * dims * spec.config.max_attempts,
        "cost_cap_usd": config.cost_cap_usd,
    }  # fmt: skip


def plan_lines(plan: Mapping[str, Any]) -> list[str]:
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
    atomic_write_text(path, dump_json({**promotion.as_dict(), "plan": dict(plan)}))
    return path


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
