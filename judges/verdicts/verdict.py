"""One judge model's verdict under one prompt version: everything the word is made of.

Fitness (the chance tests), the floors of gates.toml, the regression family against the
accepted baseline, the bias probes, what the recording lacks, and the items that missed.
The pytest suite asserts on it, the report renders it and `judges baseline` accepts from
it: one object, so the three can never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from judges.core.results import JudgementRow, outcome
from judges.stats.estimates.floors import Gate, not_evaluated
from judges.stats.fitness.chance import Fitness
from judges.stats.planning.categories import CategoryPower
from judges.stats.ranking.reading_list import ReadingListResult
from judges.stats.regression.gates import Regression
from judges.stats.regression.sensitivity import ScoreSensitivity, Sensitivity
from judges.stats.reliability.gates import NoiseFloor, Panel, SmeCalibration, TestRetest
from judges.stats.reliability.label_stability import LabelStability
from judges.verdicts.completeness import missing_reason
from judges.verdicts.probes import ProbeReport
from judges.verdicts.vocabulary import Verdict

__all__ = ["Failure", "ModelVerdict", "key_fields"]


def key_fields(verdict: Mapping[str, Any] | None) -> dict[str, Any]:
    """A verdict's short fields (scores, flags, names), without the raw reply and rationale."""

    def short(value: Any) -> bool:
        return value is None or isinstance(value, str | int | float | bool)

    return {
        key: value
        for key, value in sorted((verdict or {}).items())
        if key not in ("raw", "rationale", "rationales", "judge_prompt_version")
        and (short(value) or (isinstance(value, list) and all(short(v) for v in value)))
    }


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
            "returned": key_fields(row.verdict),
            "rationale": self.rationale,
            "raw": self.raw,
            "error": row.error,
            "attempts": [a.model_dump(mode="json") for a in row.attempts if a.error],
            "accepted_miss": self.accepted_miss,
        }


@dataclass(frozen=True, kw_only=True)
class ModelVerdict:
    """What decides one judge model's word under one prompt version (`judges.verdicts.build`).

    `floors` holds every gates.toml threshold evaluated, by section (`detection`,
    `noise_floor`, `test_retest`, `panel`, `sme`, `label_stability`, `reading_list`,
    `probes`), so a test asserts on its own section and the report shows them all.
    """

    model: str
    fitness: Fitness | None = None  # the chance tests; None: no planted set to test against
    # Why NOT FIT is kept (gates.toml): the version's own accept_not_fit, or for a pairwise
    # judge pairwise_accepted naming every set it is at chance on.
    accept_not_fit: str = ""
    # False for pairwise judges: their chance tests (per set) are shown in the folder's
    # pairwise section, not in the model's fitness table.
    chance_tests_apply: bool = True
    missing_items: tuple[str, ...] = ()  # items set.toml asks for without a main-run row
    # Runs the judge has that this version lacks, each with why and the fix (INCOMPLETE).
    missing_runs: tuple[str, ...] = ()
    noise_floor: NoiseFloor | None = None
    test_retest: TestRetest | None = None
    panel: Panel | None = None
    sme: SmeCalibration | None = None
    label_stability: tuple[LabelStability, ...] = ()  # per value, retest and noise
    reading_list: ReadingListResult | None = None  # the judge as a ranker of the list
    probes: ProbeReport | None = None  # the bias probes, when this version was probed
    floors: Mapping[str, tuple[Gate, ...]] = field(default_factory=dict)
    gates_table: str | None = None  # where the thresholds came from; None: no table
    gates_version: str | None = None  # the earlier version whose table this one inherited
    baseline_version: str | None = None  # the accepted baseline its gates name (gates.toml)
    regressions: tuple[Regression, ...] = ()  # against the accepted baseline's main run
    retest_regressions: tuple[Regression, ...] = ()  # the retest run against this main run
    category_power: tuple[CategoryPower, ...] = ()  # what each category's gate can detect
    # What the paired regression gates (detection, control false positives) see against
    # the baseline, as their family decides; for the baseline itself, its successors' gates.
    sensitivity: tuple[Sensitivity, ...] = ()
    # What each score gate (a field's mean on defects or controls) sees, in score points.
    score_sensitivity: tuple[ScoreSensitivity, ...] = ()
    failures: tuple[Failure, ...] = ()
    accepted_met: tuple[str, ...] = ()  # accepted misses the judge now gets right
    notes: tuple[str, ...] = ()

    @property
    def gates(self) -> tuple[Gate, ...]:
        """Every floor, in the report's order of sections."""
        return tuple(gate for section in self.floors.values() for gate in section)

    def section(self, *names: str) -> tuple[Gate, ...]:
        """The floors of the named sections (a label-stability key starts with its run)."""
        return tuple(gate for name in names for gate in self.floors.get(name, ()))

    @property
    def fit(self) -> bool:
        return self.fitness is not None and self.fitness.fit

    @property
    def incomplete(self) -> bool:
        return bool(self.missing_items or self.missing_runs)

    def incomplete_reason(self) -> str:
        """INCOMPLETE's reason, the same in every format: "3 items set.toml asks for not
        judged"; empty when nothing set.toml asks for is missing."""
        return missing_reason(len(self.missing_items), self.missing_runs)

    @property
    def new_failures(self) -> tuple[Failure, ...]:
        """Failures that expectations.toml does not accept: each fails the run."""
        return tuple(f for f in self.failures if f.accepted_miss is None)

    @property
    def accepted_misses(self) -> tuple[Failure, ...]:
        """Failures listed in expectations.toml (strict xfail): known, not a new failure."""
        return tuple(f for f in self.failures if f.accepted_miss is not None)

    @property
    def gate_counts(self) -> tuple[int, int, int]:
        """(passed, failed, not evaluated), floors and regression gates together. A statistic
        shown without a threshold is informational: not a gate left unevaluated."""
        gates: tuple[Gate | Regression, ...] = (*self.gates, *self.regressions)
        results = [gate.passed for gate in gates]
        return results.count(True), results.count(False), sum(map(not_evaluated, gates))

    def problems(self) -> list[str]:
        """What keeps this model's verdict from passing, in words; empty when it passes.

        It passes when every planted item has a row that met its expectation or is an
        accepted miss, no accepted miss is now met (a strict XPASS), and every gate with a
        threshold and data passed. A gate without data (a label the judge never gives, a
        run whose every call failed) decides nothing: it is shown as not evaluated, and a
        failed call fails its own item.
        """
        _, failed, _ = self.gate_counts
        counts = [
            (failed, "gate failed", "gates failed"),
            (len(self.new_failures), "new failure", "new failures"),
            (len(self.accepted_met), "accepted miss now met", "accepted misses now met"),
            (
                len(self.probes.unaccepted) if self.probes else 0,
                "biased probe item",
                "biased probe items",
            ),
        ]
        reasons = [f"{n} {one if n == 1 else many}" for n, one, many in counts if n]
        return reasons + ([self.incomplete_reason()] if self.incomplete else [])

    @property
    def blind(self) -> bool:
        """A paired regression gate cannot see the drop gates.toml asks it to
        (min_detectable_drop): a PASS then says so."""
        return any(found.blind for found in self.sensitivity)

    @property
    def undecided(self) -> bool:
        """No chance test can decide at the set's size: a coin flip would pass as well."""
        return self.fitness is not None and self.fitness.undecided

    def verdict_word(self) -> str:
        """INCOMPLETE, NOT FIT (unaccepted), FAIL, UNDECIDED, NOT FIT (accepted) or PASS, in
        that order.

        An unaccepted NOT FIT outranks a failed gate: floors say little about a coin flip.
        A version nothing failed is PASS only where its set could have shown it at chance.
        """
        if self.incomplete:
            return Verdict.INCOMPLETE
        if not self.fit and not self.accept_not_fit:
            return Verdict.NOT_FIT
        if self.problems():
            return Verdict.FAIL
        if self.undecided:
            return Verdict.UNDECIDED
        return Verdict.PASS if self.fit else Verdict.NOT_FIT
