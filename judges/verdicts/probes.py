"""A verdict's bias probes: flip rates against the noise floor, their gates, the change
against the previous prompt version and the biased items no expectation accepts.

Built from one model's rows of one prompt version (probe runs, the main run, the redraw
run `probe-noise`, and the noise-floor run for the majority-vote repeats), so
`python -m judges report` rebuilds it without judging.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judges.core.results import JudgementRow
from judges.sets.items import PlantedSetError
from judges.sets.planted import Gates, PlantedSet
from judges.sets.probes import load_recipe
from judges.stats.estimates.floors import Gate
from judges.stats.estimates.intervals import McNemar, Rate, mcnemar_exact, wilson
from judges.stats.reliability.probes import (
    NoiseRepeats,
    ProbeEffect,
    effects_from_rows,
    noise_repeats,
    outcomes_from_rows,
)
from judges.verdicts.probe_messages import against_noise, flip_gates

__all__ = ["ProbeChange", "ProbeReport", "compare_probes", "probe_report", "probe_score"]


@dataclass(frozen=True)
class ProbeChange:
    """One probe's biased rate under the previous prompt version and this one, paired."""

    probe: str
    before: Rate
    after: Rate
    test: McNemar  # b: biased before, not after (fixed); c: the reverse (new bias)

    def as_dict(self) -> dict[str, Any]:
        return {
            "probe": self.probe,
            "before": self.before.as_dict(),
            "after": self.after.as_dict(),
            "mcnemar": self.test.as_dict(),
        }


@dataclass(frozen=True)
class ProbeReport:
    score: str
    effects: tuple[ProbeEffect, ...]
    repeats: NoiseRepeats | None
    gates: tuple[Gate, ...]
    previous: str | None = None  # the prompt version the changes are against
    changes: tuple[ProbeChange, ...] = ()
    # Biased probe items probe_expectations.toml does not accept ("injection PE-13"): each
    # fails its test, so the report fails with them.
    unaccepted: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "probes": [e.as_dict() | {"verdict": against_noise(e)} for e in self.effects],
            "noise_floor_repeats": self.repeats.as_dict() if self.repeats else None,
            "gates": [g.as_dict() for g in self.gates],
            "against": self.previous,
            "changes": [c.as_dict() for c in self.changes],
            "unaccepted": list(self.unaccepted),
        }


def probe_score(planted: PlantedSet | None) -> str | None:
    """The set's probes.toml `score`, or None when it has no probes (or a broken file)."""
    if planted is None:
        return None
    try:
        recipe = load_recipe(planted.folder.probes_path)
    except PlantedSetError:
        return None
    return recipe.score if recipe else None


def probe_report(
    rows: Sequence[JudgementRow],
    fields: Sequence[str],
    score: str,
    gates: Gates | None,
    previous: tuple[str, Sequence[JudgementRow]] | None = None,
    accepted: Mapping[str, Mapping[str, str]] | None = None,
) -> ProbeReport | None:
    """The probes' effects, gates, change against `previous`, and the biased items that
    `accepted` (probe -> item -> reason, from probe_expectations.toml) does not accept."""
    effects = effects_from_rows(rows, fields, score)
    if not effects:
        return None
    thresholds = gates.max_flip if gates is not None else {}
    changes = compare_probes(previous[1], rows, fields, score) if previous else ()
    unaccepted = tuple(
        f"{probe} {outcome.item_id}"
        for probe, outcomes in outcomes_from_rows(rows, fields, score).items()
        for outcome in outcomes
        if outcome.biased and outcome.item_id not in (accepted or {}).get(probe, {})
    )
    return ProbeReport(
        score,
        tuple(effects),
        noise_repeats(rows, fields),
        tuple(flip_gates(effects, thresholds, gates.alpha if gates is not None else 0.05)),
        previous[0] if previous and changes else None,
        changes,
        unaccepted,
    )


def compare_probes(
    before: Sequence[JudgementRow], after: Sequence[JudgementRow], fields: Sequence[str], score: str
) -> tuple[ProbeChange, ...]:
    """Each probe both versions ran, paired per item: did the prompt change its bias?"""
    old, new = outcomes_from_rows(before, fields, score), outcomes_from_rows(after, fields, score)
    changes = []
    for probe in (p for p in new if p in old):
        was = {o.item_id: o.biased for o in old[probe]}
        pairs = [(was[o.item_id], o.biased) for o in new[probe] if o.item_id in was]
        if pairs:
            b, a = [x for x, _ in pairs], [y for _, y in pairs]
            test = mcnemar_exact(b, a)
            changes.append(ProbeChange(probe, wilson(sum(b), len(b)), wilson(sum(a), len(a)), test))
    return tuple(changes)
