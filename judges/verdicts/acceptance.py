"""Whether a recorded prompt version may become the accepted baseline: the policy of
`python -m judges baseline --accept`, decided from the version's verdicts.

The checks run in order and the first that refuses stops acceptance: a partial recording,
runs the judge has that the version lacks, NOT FIT without a reason, UNDECIDED (no chance
test can decide at the set's size, so a coin flip would be accepted too) without a reason,
significantly worse than the current baseline without a reason, floors its table would
keep that it fails, and last misses it would bury without a reason (a control marked down,
an item without a verdict: an error, a reply it could not read, a dropped item; a judge
accepted NOT FIT has its control misses accepted with it).
The command only prints what is decided here, and writes when nothing refuses.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from judges.core.results import JudgementRow
from judges.sets.planted import PlantedSet
from judges.stats.estimates.floors import Gate
from judges.verdicts.verdict import ModelVerdict

__all__ = [
    "Acceptance",
    "Refusal",
    "acceptance",
    "asked_items",
    "buried_misses",
    "missing_reasons",
    "recording_gaps",
]


class Refusal(enum.Enum):
    """What refuses a version, in the order the checks run."""

    PARTIAL = "partial"  # items set.toml asks for are not recorded
    LACKING = "lacking"  # runs the judge has are not recorded for the version
    NOT_FIT = "not_fit"  # no better than chance, and no --accept-not-fit reason
    UNDECIDED = "undecided"  # nothing could show it, and no --accept-undecided reason
    REGRESSION = "regression"  # worse than the baseline, and no --accept-regression reason
    FLOORS = "floors"  # fails floors its table would keep, and no --reset-floors
    MISSES = "misses"  # new control misses or items without a verdict, and no reason


@dataclass(frozen=True)
class Acceptance:
    """Every check of one version against acceptance, per judge model."""

    version: str
    asked: Mapping[str, list[str]]  # items set.toml asks the main run for
    gaps: Mapping[str, list[str]]  # of those, the ones without a row
    lacking: Mapping[str, tuple[str, ...]]  # runs of the judge the version lacks
    not_fit: Mapping[tuple[str, str], str | None]  # accept_not_fit to write per table
    not_fit_refused: tuple[str, ...]  # NOT FIT models nothing accepts
    undecided: tuple[str, ...]  # models whose set no chance test can decide at its size
    regressions: Mapping[str, list[str]]  # gates worse than the current baseline
    failing_floors: Mapping[str, list[Gate]]  # floors the kept table would fail
    # Per model, the misses acceptance would add to expectations.toml that need a reason:
    # controls the judge marked down, and items with no verdict (row status not ok).
    control_misses: Mapping[str, list[JudgementRow]] = field(default_factory=dict)
    no_verdict: Mapping[str, list[JudgementRow]] = field(default_factory=dict)
    # Models accepted NOT FIT (now or before), with the reason: their control misses are
    # what NOT FIT means, accepted with it.
    not_fit_reasons: Mapping[str, str] = field(default_factory=dict)

    @property
    def buried_controls(self) -> dict[str, list[JudgementRow]]:
        """The control misses that need a reason of their own."""
        return {m: rows for m, rows in self.control_misses.items() if m not in self.not_fit_reasons}

    def refusal(
        self,
        accept_regression: bool,
        reset_floors: bool,
        accept_undecided: bool = False,
        accept_control_miss: bool = False,
        accept_no_verdict: bool = False,
    ) -> Refusal | None:
        """The first check that refuses, or None when the version may be accepted."""
        if self.gaps:
            return Refusal.PARTIAL
        if self.lacking:
            return Refusal.LACKING
        if self.not_fit_refused:
            return Refusal.NOT_FIT
        if self.undecided and not accept_undecided:
            return Refusal.UNDECIDED
        if self.regressions and not accept_regression:
            return Refusal.REGRESSION
        if self.failing_floors and not reset_floors:
            return Refusal.FLOORS
        if (self.buried_controls and not accept_control_miss) or (
            self.no_verdict and not accept_no_verdict
        ):
            return Refusal.MISSES
        return None

    def regressed(self, reason: str) -> dict[tuple[str, str], str]:
        """accept_regression to write per table: the reason, for each model found worse."""
        return {(model, self.version): reason for model in self.regressions}

    def undecided_reasons(self, reason: str) -> dict[tuple[str, str], str]:
        """accept_undecided to write per table: the reason, for each undecided model."""
        return {(model, self.version): reason for model in self.undecided}

    def miss_reasons(
        self, control_miss: str, no_verdict: str
    ) -> dict[tuple[str, str], dict[str, str]]:
        """Per table, the reason given for each new control miss and item without a
        verdict, written beside its accepted miss in expectations.toml."""
        reasons: dict[tuple[str, str], dict[str, str]] = {}
        for found, reason in ((self.control_misses, control_miss), (self.no_verdict, no_verdict)):
            for model, rows in found.items():
                why = reason
                if found is self.control_misses and model in self.not_fit_reasons:
                    why = reason or f"accepted NOT FIT: {self.not_fit_reasons[model]}"
                table = reasons.setdefault((model, self.version), {})
                table.update({row.item_id: why for row in rows})
        return reasons


def buried_misses(
    rows: Sequence[JudgementRow],
    version: str,
    accepted: Mapping[tuple[str, str], Mapping[str, str]],
) -> tuple[dict[str, list[JudgementRow]], dict[str, list[JudgementRow]]]:
    """Per model, the main run's controls marked down and items without a verdict that
    expectations.toml does not accept yet: what acceptance would otherwise bury."""
    controls: dict[str, list[JudgementRow]] = {}
    no_verdict: dict[str, list[JudgementRow]] = {}
    for row in sorted(rows, key=lambda r: (r.model, r.item_id)):
        if (
            row.run != "main"
            or row.repeat != 0
            or row.item_id in accepted.get((row.model, version), {})
        ):
            continue
        if row.status != "ok":
            no_verdict.setdefault(row.model, []).append(row)
        elif row.control and not row.met:
            controls.setdefault(row.model, []).append(row)
    return controls, no_verdict


def asked_items(planted: PlantedSet, version: str, models: list[str]) -> dict[str, list[str]]:
    """Per judge model: the items set.toml asks the version's main run to judge."""
    return {model: [i.id for i in planted.main_items(version, model)] for model in models}


def recording_gaps(
    rows: Sequence[JudgementRow], asked: Mapping[str, list[str]]
) -> dict[str, list[str]]:
    """Per judge model: the items set.toml asks for that its main run has no row for."""
    recorded: dict[str, set[str]] = {model: set() for model in asked}
    for row in rows:
        if row.run == "main" and row.repeat == 0:
            recorded.setdefault(row.model, set()).add(row.item_id)
    gaps = {model: [i for i in asked[model] if i not in recorded[model]] for model in asked}
    return {model: missing for model, missing in gaps.items() if missing}


def not_fit_acceptance(
    verdicts: Sequence[ModelVerdict], version: str, reason: str | None
) -> tuple[dict[tuple[str, str], str | None], list[str]]:
    """What to write of accept_not_fit for the accepted version, and the models refused.

    A NOT FIT model is refused as a baseline unless `reason` is given (which is written) or
    gates.toml already accepts it (its table is then left as it is: a pairwise judge may be
    accepted per set, in pairwise_accepted); a FIT model loses a stale acceptance.
    """
    writes: dict[tuple[str, str], str | None] = {}
    refused: list[str] = []
    for m in verdicts:
        if m.fit:
            writes[(m.model, version)] = None
        elif reason:
            writes[(m.model, version)] = reason
        elif not m.accept_not_fit:
            refused.append(m.model)
    return writes, refused


def acceptance(
    version: str,
    verdicts: Sequence[ModelVerdict],
    rows: Sequence[JudgementRow],
    planted: PlantedSet | None,
    not_fit_reason: str | None,
    probe_regressions: Callable[[], Mapping[str, str]],
) -> Acceptance:
    """Every acceptance check of `version` from its verdicts (one per judge model), its
    rows, and its probes' regressions against the baseline (per model, a line each; asked
    for only when the recording is complete)."""
    models = sorted({row.model for row in rows})
    asked = asked_items(planted, version, models) if planted is not None else {}
    gaps = recording_gaps(rows, asked)
    lacking = {m.model: m.missing_runs for m in verdicts if m.missing_runs}
    writes, refused = not_fit_acceptance(verdicts, version, not_fit_reason)
    worse = {m.model: [r.describe() for r in m.regressions if r.passed is False] for m in verdicts}
    worse = {model: lines for model, lines in worse.items() if lines}
    for model, line in (probe_regressions() if not gaps and not lacking else {}).items():
        worse.setdefault(model, []).append(line)
    failing = {m.model: [gate for gate in m.gates if gate.passed is False] for m in verdicts}
    accepted = planted.accepted_misses if planted is not None else {}
    control_misses, no_verdict = buried_misses(rows, version, accepted)
    return Acceptance(
        version=version,
        asked=asked,
        gaps=gaps,
        lacking=lacking,
        not_fit=writes,
        not_fit_refused=tuple(refused),
        undecided=tuple(m.model for m in verdicts if m.undecided),
        regressions=worse,
        failing_floors={model: gates for model, gates in failing.items() if gates},
        control_misses=control_misses,
        no_verdict=no_verdict,
        not_fit_reasons={
            m.model: not_fit_reason or m.accept_not_fit
            for m in verdicts
            if not m.fit and (not_fit_reason or m.accept_not_fit)
        },
    )


def missing_reasons(planted: PlantedSet, version: str, verdict: ModelVerdict) -> list[str]:
    """An accepted (pinned) baseline that acceptance would refuse as its tables stand now:
    NOT FIT, or worse than the baseline before it, with no reason in gates.toml (deleted by
    hand after `baseline --accept` wrote it). One line each, naming the file, the table and
    the fix; the session fails on them, whichever tests a project collects. (UNDECIDED is
    left to the verdict: baselines pinned before acceptance asked for its reason hold none.)"""
    key = (verdict.model, version)
    if key not in planted.pins or verdict.fitness is None:
        return []
    table = planted.gates.get(key)
    path = planted.folder.gates_path
    accept = f"python -m judges baseline {planted.judge} --accept {version}"
    where = f'{path}: ["{verdict.model}"."{version}"] is the accepted baseline (pinned) but'
    fix = f"restore it (git checkout -- {path}), or accept the version again with `{accept}"
    lines = []
    if not verdict.fit and not (table and table.accept_not_fit) and not verdict.accept_not_fit:
        lines.append(
            f"{where} NOT FIT and has no accept_not_fit, its reason: {fix} "
            '--accept-not-fit "<why>"`'
        )
    worse = any(gate.passed is False for gate in verdict.regressions)
    if worse and not (table and table.accept_regression):
        lines.append(
            f"{where} significantly worse than the baseline before it and has no "
            f'accept_regression, its reason: {fix} --accept-regression "<why>"`'
        )
    return lines
