"""Stratified promotion: which qualifier runs become finalists, and why the others did not.

- Strata are ordered; a run joins the first stratum any of whose substrings occurs in its
  name (first match wins). A run matching none is reported as unstratified, never promoted.
- Per stratum: rank by the metric (ties by run name), keep the top N, drop any below
  floor_ratio x the stratum leader; then trim the union to the global cap by the metric.
- The top `cross_top_per_stratum` finalists of each stratum are also cross-checked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judges.finale.config import Candidate, FinaleConfig, Stratum
from judges.finale.formats import num as _num
from judges.finale.formats import round4 as _round

__all__ = [
    "BELOW_FLOOR",
    "GLOBAL_CAP",
    "NO_METRIC",
    "UNSTRATIFIED",
    "Finalist",
    "Promotion",
    "Rejection",
    "StratumPromotion",
    "assign_stratum",
    "outside_top",
    "promote_finalists",
]

# 0.8 x 0.30 is 0.24000000000000002 in floating point; a run at 0.24 is on the floor.
_EPS = 1e-9

# Rejection reasons, in the order the rules apply.
UNSTRATIFIED = "unstratified"
NO_METRIC = "no qualifier metric"
BELOW_FLOOR = "below floor"
GLOBAL_CAP = "global cap"

Ranked = tuple[tuple[str, float], ...]  # (run, metric), best first


def outside_top(n: int) -> str:
    return f"outside top {n}"


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
    scored, no_metric, unstratified = _sort_into_strata(candidates, config)
    ranked_by: dict[str, Ranked] = {
        name: tuple(sorted(runs, key=lambda rv: (-rv[1], rv[0]))) for name, runs in scored.items()
    }
    rejected: dict[str, list[Rejection]] = {s.name: [] for s in config.strata}
    survivors: list[tuple[str, str, float]] = []  # (run, stratum, metric)
    for stratum in config.strata:
        survivors += _apply_stratum_rules(
            stratum.name, ranked_by[stratum.name], config, rejected[stratum.name]
        )
    kept = _apply_global_cap(survivors, config, rejected)
    finalists = _mark_cross_checks(kept, config)
    strata = tuple(
        _stratum_promotion(
            stratum, ranked_by[stratum.name], config, finalists,
            (*rejected[stratum.name],), no_metric[stratum.name],
        )
        for stratum in config.strata
    )  # fmt: skip
    return Promotion(
        metric=config.qualifier_metric,
        top_per_stratum=config.top_per_stratum,
        floor_ratio=config.floor_ratio,
        global_cap=config.global_cap,
        cross_top_per_stratum=config.cross_top_per_stratum,
        strata=strata,
        unstratified=tuple(unstratified),
        finalists=finalists,
    )


def _sort_into_strata(
    candidates: Sequence[Candidate], config: FinaleConfig
) -> tuple[dict[str, list[tuple[str, float]]], dict[str, list[Rejection]], list[Rejection]]:
    """Runs with the metric per stratum; runs without it per stratum; unstratified runs."""
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
    return scored, no_metric, unstratified


def _floor(ranked: Ranked, config: FinaleConfig) -> float | None:
    return config.floor_ratio * ranked[0][1] if ranked else None


def _apply_stratum_rules(
    name: str, ranked: Ranked, config: FinaleConfig, rejected: list[Rejection]
) -> list[tuple[str, str, float]]:
    """The runs of one stratum within its top N and above its floor; the others to `rejected`."""
    floor = _floor(ranked, config)
    survivors: list[tuple[str, str, float]] = []
    for index, (run, value) in enumerate(ranked):
        if index >= config.top_per_stratum:
            rejected.append(Rejection(
                run, value, outside_top(config.top_per_stratum),
                f"#{index + 1} of {len(ranked)} in {name}",
            ))  # fmt: skip
        elif floor is not None and value < floor - _EPS:
            rejected.append(Rejection(
                run, value, BELOW_FLOOR,
                f"{_num(value)} < {_num(floor)} = {config.floor_ratio:g} x leader "
                f"{_num(ranked[0][1])}",
            ))  # fmt: skip
        else:
            survivors.append((run, name, value))
    return survivors


def _apply_global_cap(
    survivors: Sequence[tuple[str, str, float]],
    config: FinaleConfig,
    rejected: dict[str, list[Rejection]],
) -> list[tuple[str, str, float]]:
    """The best `global_cap` survivors by the metric; the others to their stratum's `rejected`."""
    ordered = sorted(survivors, key=lambda s: (-s[2], s[0]))
    for position, (run, stratum_name, value) in enumerate(
        ordered[config.global_cap :], start=config.global_cap + 1
    ):
        rejected[stratum_name].append(Rejection(
            run, value, GLOBAL_CAP,
            f"#{position} of {len(ordered)} surviving finalists by {config.qualifier_metric}; "
            f"the cap is {config.global_cap}",
        ))  # fmt: skip
    return ordered[: config.global_cap]


def _mark_cross_checks(
    kept: Sequence[tuple[str, str, float]], config: FinaleConfig
) -> tuple[Finalist, ...]:
    cross_count: Counter[str] = Counter()
    finalists: list[Finalist] = []
    for rank, (run, stratum_name, value) in enumerate(kept, start=1):
        cross = cross_count[stratum_name] < config.cross_top_per_stratum
        cross_count[stratum_name] += 1
        finalists.append(Finalist(run, stratum_name, value, rank, cross))
    return tuple(finalists)


def _stratum_promotion(
    stratum: Stratum,
    ranked: Ranked,
    config: FinaleConfig,
    finalists: Sequence[Finalist],
    rejected: Sequence[Rejection],
    no_metric: Sequence[Rejection],
) -> StratumPromotion:
    order = {run: index for index, (run, _) in enumerate(ranked)}
    reasons = sorted(rejected, key=lambda r: order[r.run])
    return StratumPromotion(
        name=stratum.name,
        match=stratum.match,
        ranked=ranked,
        leader=ranked[0][0] if ranked else None,
        leader_metric=ranked[0][1] if ranked else None,
        floor=_floor(ranked, config),
        promoted=tuple(f.run for f in finalists if f.stratum == stratum.name),
        rejected=(*reasons, *no_metric),
    )
