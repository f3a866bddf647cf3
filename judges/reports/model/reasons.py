"""A verdict's reasons in words: each with its cause (`judges.verdicts.deciding` orders
them and picks the one that decides), the sentence the first screen lists, and the clause
(with its figure) the one-line Result gives."""

from __future__ import annotations

import math
from collections.abc import Sequence

from judges.reports.format import p_is, p_value, rate
from judges.reports.model.data import FolderReport, ModelReport
from judges.reports.sections import sensitivity
from judges.reports.sections.fitness import (
    cannot_show,
    chance_reading,
    named,
    worse_and_at_chance,
)
from judges.sets.folder import EXPECTATIONS_FILE, GATES_FILE, PROBE_EXPECTATIONS_FILE
from judges.stats.estimates.intervals import Rate
from judges.stats.fitness.chance import ChanceTest
from judges.stats.regression.comparison import Comparison
from judges.stats.regression.gates import PairedCounts, Regression
from judges.stats.regression.sensitivity import Sensitivity
from judges.verdicts.deciding import Cause, Reason
from judges.verdicts.vocabulary import AT_CHANCE, NOT_FIT, WORSE

__all__ = ["blind_reason", "model_reasons", "pairwise_reasons", "weakest", "worse_than_previous"]


def _rate(r: Rate) -> str:
    return rate(r.successes, r.n, r.rate)


def _p(value: float) -> str:
    return p_value(value)


def worse_than_previous(c: Comparison) -> str | None:
    """A sentence when the version detects significantly fewer planted defects than the
    previous one (one-sided McNemar mid-p < 0.05, as the regression gate would judge it)."""
    if not c.significantly_worse:
        return None
    return (
        f"significantly worse than prompt {c.before} at detecting planted defects: "
        f"{_rate(c.detection_before)} -> {_rate(c.detection_after)} on the "
        f"{c.detection_after.n} planted defects judged under both, {c.mcnemar.b} caught->missed vs "
        f"{c.mcnemar.c} missed->caught, one-sided McNemar "
        f"mid-p = {_p(c.midp_worse)}"
    )


def weakest(tests: Sequence[ChanceTest]) -> ChanceTest:
    """The test of a family that decides it: the failing one with the weakest evidence of
    being better than chance, or, when all pass, the passing one nearest to failing."""
    failing = [t for t in tests if t.testable and not t.fit]
    pool = failing or [t for t in tests if t.testable] or list(tests)
    return max(pool, key=lambda t: (chance_reading(t) == WORSE, t.p_value, t.name))


def model_reasons(m: ModelReport, who: str, judge: str, version: str) -> list[Reason]:
    """Every reason of one model's verdict, each with its cause (`judges.verdicts.deciding`
    orders them), its sentence and its one-line clause."""
    reasons = [
        Reason(
            Cause.FLOOR,
            f"{who}gate {gate.name} failed: {gate.value_text()}, threshold {gate.threshold_text()}",
            f"{who}gate {gate.name} failed",
            f"{gate.value_text()}, threshold {gate.threshold_text()}",
            m.model,
        )
        for gate in m.gates
        if gate.passed is False
    ]
    for regression in m.regressions:
        name, baseline, why = regression.name, regression.baseline, regression.why
        if regression.passed is False:
            reasons.append(
                Reason(
                    Cause.REGRESSION,
                    f"{who}{name} worse than {baseline}: {why}",
                    f"{who}{name} worse than {baseline}",
                    _regression_figure(regression),
                    m.model,
                )
            )
        elif regression.passed is None and regression.decides:
            text = f"{who}{name} vs {baseline} not evaluated: {why}"
            reasons.append(Reason(Cause.NOTE, text, f"{who}{name} not evaluated", "", m.model))
    if m.new_failures:
        n = len(m.new_failures)
        text = f"{who}{n} new failure{'s' * (n != 1)} of {m.n_main} items"
        reasons.append(Reason(Cause.NEW_FAILURE, f"{text} (failures.md)", text, "", m.model))
    if m.accepted_met:
        text = f"{who}accepted misses now met (remove them from {EXPECTATIONS_FILE})"
        reasons.append(
            Reason(Cause.ACCEPTED_MET, f"{text}: {named(list(m.accepted_met))}", text, "", m.model)
        )
    if m.probes is not None and m.probes.unaccepted:
        n = len(m.probes.unaccepted)
        text = f"{who}{n} biased probe item{'s' * (n != 1)} ({PROBE_EXPECTATIONS_FILE})"
        reasons.append(Reason(Cause.BIASED_PROBE, text, text, "", m.model))
    # INCOMPLETE's one-line reason is the same in every format (`incomplete_reason`).
    missing = f"{who}{m.incomplete_reason()}"
    if m.missing_items:
        text = f"{who}{len(m.missing_items)} planted items not judged"
        reasons.append(Reason(Cause.MISSING, text, missing, "", m.model))
    reasons += [
        Reason(Cause.MISSING, f"{who}lacks the run {run}", missing, "", m.model)
        for run in m.missing_runs
    ]
    if blind := [found for found in m.sensitivity if found.blind]:
        text = who + blind_reason(blind, itself=m.baseline_version == version)
        short = f"{who}{sensitivity.blind_to(blind[0])}"
        reasons.append(Reason(Cause.BLIND, text, short, sensitivity.needs(blind[0]), m.model))
    # The command that plans the set, as `plan` takes it: the judge, and the model where a
    # folder has several.
    plan = f"python -m judges plan {judge}" + (f" --model {m.model}" if who else "")
    reasons += _fitness_reasons(m, who, plan)
    # A gate without data decides nothing: named, never counted as a failure.
    reasons += [
        Reason(
            Cause.NOTE,
            f"{who}gate {gate.name} not evaluated (no data): {gate.value_text()}",
            f"{who}gate {gate.name} not evaluated",
            "",
            m.model,
        )
        for gate in m.gates
        if gate.passed is None and gate.threshold is not None
    ]
    # Against the baseline itself the regression family decided (with Holm's correction):
    # a sentence calling the same flips "significantly worse" alone would contradict it.
    decided = m.comparison is not None and m.comparison.before == m.baseline_version
    if m.comparison is not None and m.baseline_version != m.comparison.after and not decided:
        previous = worse_than_previous(m.comparison)
        if previous is not None:
            short = f"{who}significantly worse than prompt {m.comparison.before}"
            reasons.append(Reason(Cause.NOTE, f"{who}{previous}", short, "", m.model))
    return reasons


def _fitness_reasons(m: ModelReport, who: str, plan: str) -> list[Reason]:
    """What fitness says of the judge: the failing chance tests (the weakest one's figure
    decides a NOT FIT), what the set cannot show, or better than chance on all."""
    if m.fitness is None or not m.chance_tests_apply:
        if not m.fit and m.chance_tests_apply:  # no planted set to test against chance
            cause = Cause.NOT_FIT_ACCEPTED if m.accept_not_fit else Cause.NOT_FIT
            text = f"{who}{m.fitness_reasons()[0]}"
            return [Reason(cause, text, text, "", m.model)]
        return []
    if m.fit and m.undecided:
        text = f"{who}{cannot_show(m.fitness)[0]}"
        short = f"{who}no chance test can decide at this set's size"
        return [Reason(Cause.UNDECIDED, text, short, f"grow the set: `{plan}`", m.model)]
    decisive = len(m.fitness.decisive)
    if m.fit:
        text = f"{who}better than chance on all {decisive} deciding tests"
        return [Reason(Cause.PASSED, text, text, "", m.model)]
    cause = Cause.NOT_FIT_ACCEPTED if m.accept_not_fit else Cause.NOT_FIT
    tests = m.fitness.failing
    if not tests:
        text = f"{who}{m.fitness_reasons()[0]}"
        return [Reason(cause, text, text, "", m.model)]
    # The figure of the test with the weakest evidence decides: worse than chance first.
    weakest_test = weakest(tests)
    short = f"{who}{chance_reading(weakest_test)} on {weakest_test.name}"
    figure = (
        f"{_test_value(weakest_test)} n={weakest_test.n}; {len(tests)} of {decisive} deciding "
        "tests fail"
    )
    # The deciding test named first, so the first reason starts with the Result line's.
    tests = [weakest_test, *(t for t in tests if t is not weakest_test)]
    worse, at = worse_and_at_chance(tests)
    reasons = []
    if worse:
        reasons.append(f"{who}worse than chance on {named(worse, 3)}")
    if at:
        reasons.append(f"{who}{AT_CHANCE} on {named(at, 3)}")
    # Why it is accepted is in the verdict line itself, right above the reasons.
    return [Reason(cause, text, short, figure, m.model) for text in reasons]


def _test_value(test: ChanceTest) -> str:
    """`detection - control FP 0.00 [-0.32, 0.24]`: a chance test's statistic and value."""
    if math.isnan(test.value):
        return f"{test.statistic} undefined"
    return f"{test.statistic} {test.value:.2f} [{test.low:.2f}, {test.high:.2f}]"


def _regression_figure(regression: Regression) -> str:
    """A failed regression gate's counts: `22 caught->missed vs 4 missed->caught, mid-p =
    0.0002` (detection), items worse and better (controls), or the change in a score."""
    result = regression.result
    if isinstance(result, PairedCounts):
        words = ("caught->missed", "missed->caught")
        if regression.name != "regression.detection":
            words = ("items worse", "better")
        return f"{result.worse} {words[0]} vs {result.better} {words[1]}, " + p_is(
            result.p_value, "mid-p"
        )
    if result is None:
        return ""
    return f"change {result.value:+.2f} [{result.low:+.2f}, {result.high:+.2f}] n={result.n}"


def blind_reason(blind: Sequence[Sensitivity], itself: bool) -> str:
    """One sentence for every paired gate that cannot see gates.toml's drop: "blind to
    detection drops under 27 points and to rises in control false positives under 55
    points (gates.toml asks for 15): 168 planted defects, 196 controls would see it"."""
    seen = " and to ".join(sensitivity.blind_to(found).removeprefix("blind to ") for found in blind)
    whose = "as the accepted baseline, its gates are " if itself else ""
    needs = ", ".join(sensitivity.enough(found) for found in blind)
    return (
        f"{whose}blind to {seen} ({GATES_FILE} asks for {blind[0].required * 100:.0f}): "
        f"{needs} would see it"
    )


def pairwise_reasons(report: FolderReport) -> list[Reason]:
    """A pairwise judge's sets: those NOT FIT or failing, and those at chance that
    gates.toml keeps."""
    reasons = []
    for problem in report.pairwise.problems() if report.pairwise is not None else []:
        cause = Cause.NOT_FIT if problem.endswith(NOT_FIT) else Cause.FLOOR
        reasons.append(Reason(cause, problem, problem))
    accepted = report.pairwise_accepted_not_fit()
    if accepted:  # a pairwise judge: its sets at chance that gates.toml keeps
        sets = [entry.removesuffix(f": {NOT_FIT}") for entry in accepted]
        text = f"{AT_CHANCE} on {len(sets)} sets, accepted in {GATES_FILE}: {named(sets, 3)}"
        short = f"{AT_CHANCE} on {len(sets)} set{'s' * (len(sets) != 1)}"
        reasons.append(Reason(Cause.NOT_FIT_ACCEPTED, text, short, named(sets, 1)))
    return reasons
