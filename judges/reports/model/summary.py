"""The first screen of a report: can I trust this judge, and what changed?

The verdict, at most five reasons in plain words (then "and N more"), and a small table of
the figures that decide it, each with its n, its interval and what chance or the previous
prompt gives. Every format (report.md, index.html, the overview page, the terminal and the
step summary) reads this one summary, so they say the same thing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judges.reports.format import p_value, rate, sided_p
from judges.reports.model.data import FolderReport, ModelReport
from judges.reports.sections import sensitivity
from judges.reports.sections.fitness import cannot_show, chance_reading, named
from judges.stats.estimates.intervals import Rate
from judges.stats.estimates.paired_tests import binomial_midp
from judges.stats.fitness.chance import ChanceTest
from judges.stats.regression.comparison import Comparison
from judges.stats.regression.gates import PairedCounts, Regression
from judges.stats.regression.sensitivity import Sensitivity
from judges.verdicts.vocabulary import AT_CHANCE, FAIL, NOT_FIT, PASS, WORSE

__all__ = [
    "MAX_REASONS",
    "Figure",
    "FirstScreen",
    "baseline_warning",
    "first_screen",
    "worse_than_previous",
]

MAX_REASONS = 5
MAX_FIGURES = 8  # per model: the table must fit the first screen
ALPHA = 0.05


@dataclass(frozen=True)
class Figure:
    """One deciding figure: what it is, its value with interval, n, what it is held against
    (chance, a threshold or the previous prompt) and how it reads."""

    model: str
    what: str
    value: str
    n: int
    against: str
    reads: str
    note: str = ""  # e.g. "deciding: 5 of 6 not better than chance"

    def title(self) -> str:
        return f"{self.what} ({self.note})" if self.note else self.what

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "what": self.what,
            "note": self.note,
            "value": self.value,
            "n": self.n,
            "against": self.against,
            "reads": self.reads,
        }


@dataclass(frozen=True)
class FirstScreen:
    judge: str
    version: str
    word: str
    label: str  # the word, with "(accepted)" where gates.toml keeps a NOT FIT
    verdict: str
    reasons: tuple[str, ...]  # every reason, most decisive first
    figures: tuple[Figure, ...]
    warning: str | None = None  # an accepted baseline worse than its predecessor

    def shown_reasons(self, limit: int = MAX_REASONS) -> list[str]:
        """At most `limit` reasons, then "and N more" (the full list is in the sections)."""
        if len(self.reasons) <= limit:
            return list(self.reasons)
        rest = len(self.reasons) - limit
        return [*self.reasons[:limit], f"and {rest} more (in the sections below)"]

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "warning": self.warning,
            "reasons": list(self.reasons),
            "figures": [figure.as_dict() for figure in self.figures],
        }


def _rate(r: Rate) -> str:
    return rate(r.successes, r.n, r.rate)


def _p(value: float) -> str:
    return p_value(value)


def worse_than_previous(c: Comparison) -> str | None:
    """A sentence when the version detects significantly fewer planted defects than the
    previous one (one-sided McNemar mid-p < 0.05, as the regression gate would judge it)."""
    b, discordant = c.mcnemar.b, c.mcnemar.b + c.mcnemar.c
    if discordant == 0 or binomial_midp(b, discordant) >= ALPHA:
        return None
    return (
        f"significantly worse than prompt {c.before} at detecting planted defects: "
        f"{_rate(c.detection_before)} -> {_rate(c.detection_after)} on the "
        f"{c.detection_after.n} planted defects judged under both, {b} caught->missed vs "
        f"{c.mcnemar.c} missed->caught, one-sided McNemar "
        f"mid-p = {_p(binomial_midp(b, discordant))}"
    )


def _change_reads(c: Comparison) -> str:
    b, cc = c.mcnemar.b, c.mcnemar.c
    if b + cc == 0:
        return "no item changed"
    if binomial_midp(b, b + cc) < ALPHA:
        verdict = "worse"
    elif binomial_midp(cc, b + cc) < ALPHA:
        verdict = "better"
    else:
        verdict = "no significant change"
    midp = _p(binomial_midp(b, b + cc))
    return f"{verdict} ({b} caught->missed, {cc} missed->caught, one-sided mid-p = {midp})"


def _family(test: ChanceTest) -> str:
    return test.name.split(":")[0]


def _weakest(tests: Sequence[ChanceTest]) -> ChanceTest:
    """The test of a family that decides it: the failing one with the weakest evidence of
    being better than chance, or, when all pass, the passing one nearest to failing."""
    failing = [t for t in tests if t.testable and not t.fit]
    pool = failing or [t for t in tests if t.testable] or list(tests)
    return max(pool, key=lambda t: (chance_reading(t) == WORSE, t.p_value, t.name))


def _test_figure(model: str, family: Sequence[ChanceTest]) -> Figure:
    test = _weakest(family)
    failing = sum(t.testable and not t.fit for t in family)
    note = f"deciding: {failing} of {len(family)} not better than chance" if len(family) > 1 else ""
    if math.isnan(test.value):
        value = f"undefined ({test.detail})" if test.detail else "undefined"
    else:
        value = f"{test.value:.2f} [{test.low:.2f}, {test.high:.2f}]"
    reading = chance_reading(test)
    p = sided_p(test.p_value, test.p_worse if reading == WORSE else None)
    return Figure(model, test.name, f"{test.statistic} {value}", test.n,
                  f"chance {test.chance:g}", f"{reading} ({p})", note)  # fmt: skip


def _figures(m: ModelReport) -> list[Figure]:
    figures = []
    if m.fitness is not None and m.chance_tests_apply:
        families: dict[str, list[ChanceTest]] = {}
        for test in m.fitness.tests:
            families.setdefault(_family(test), []).append(test)
        figures += [
            _test_figure(m.model, tests)
            for tests in families.values()
            if any(t.testable for t in tests)  # a family too small to test decides nothing
        ]
    for gate in m.gates:
        if gate.passed is False:
            against = f"threshold {gate.threshold_text()}"
            what = f"gate {gate.name}"
            figures.append(Figure(m.model, what, gate.value_text(), gate.value.n, against, FAIL))
    # The accepted baseline the gates use first, then the previous version if it is another.
    baseline = m.baseline_comparison
    if baseline is None and m.comparison is not None:
        baseline = m.comparison if m.comparison.before == m.baseline_version else None
    detection = next((g for g in m.regressions if g.name == "regression.detection"), None)
    if baseline is not None and baseline.detection_after.n:
        reads = _gate_reads(detection) if detection is not None else _change_reads(baseline)
        what = f"detection, paired with the accepted baseline prompt {baseline.before}"
        figures.append(_detection_figure(m.model, baseline, what, reads))
    figures += [_sensitivity_figure(m.model, found) for found in m.sensitivity]
    c = m.comparison
    if c is not None and c is not baseline and c.detection_after.n:
        what = f"detection, paired with prompt {c.before}"
        figures.append(_detection_figure(m.model, c, what, _change_reads(c)))
    return figures[:MAX_FIGURES]


def _detection_figure(model: str, c: Comparison, what: str, reads: str) -> Figure:
    after = c.detection_after
    value = f"{_rate(after)} [{after.low:.2f}, {after.high:.2f}]"
    before = f"prompt {c.before}: {_rate(c.detection_before)}"
    return Figure(model, what, value, after.n, before, reads)


def _gate_reads(gate: Regression) -> str:
    """How the detection regression gate decided, in its family (Holm, both draws)."""
    counts = gate.result
    flips = (
        f"{counts.worse} caught->missed, {counts.better} missed->caught"
        if isinstance(counts, PairedCounts)
        else "no paired counts"
    )
    verdict = {True: "no regression", False: "REGRESSION", None: "not evaluated"}[gate.passed]
    if not gate.decides:
        verdict = "decides nothing"
    return f"{verdict} ({flips}; the regression gate, Holm over its family)"


def _sensitivity_figure(model: str, found: Sensitivity) -> Figure:
    value = sensitivity.value(found)
    reads = (
        f"BLIND: {sensitivity.needs(found)}"
        if found.blind
        else "nothing to drop"
        if found.nothing_to_drop
        else "sees it"
    )
    return Figure(
        model, sensitivity.title(found), value, found.n,
        f"gates.toml min_detectable_drop {found.required * 100:.0f} points", reads,
    )  # fmt: skip


def _model_reasons(m: ModelReport, who: str, version: str) -> tuple[list[str], list[str]]:
    """(what fails the run, what says whether to trust the judge), in plain words."""
    failing = []
    for gate in m.gates:
        if gate.passed is False:
            failing.append(
                f"{who}gate {gate.name} failed: {gate.value_text()}, threshold "
                f"{gate.threshold_text()}"
            )

    for regression in m.regressions:
        name, baseline, why = regression.name, regression.baseline, regression.why
        if regression.passed is False:
            failing.append(f"{who}{name} worse than {baseline}: {why}")
        elif regression.passed is None and regression.decides:
            failing.append(f"{who}{name} vs {baseline} not evaluated: {why}")
    if m.new_failures:
        n = len(m.new_failures)
        failing.append(f"{who}{n} new failure{'s' * (n != 1)} of {m.n_main} items (failures.md)")
    if m.accepted_met:
        failing.append(
            f"{who}accepted misses now met (remove them from expectations.toml): "
            + named(list(m.accepted_met))
        )
    if m.missing_items:
        failing.append(f"{who}{len(m.missing_items)} planted items not judged")
    failing += [f"{who}lacks the run {run}" for run in m.missing_runs]
    trust = []
    if blind := [found for found in m.sensitivity if found.blind]:
        trust.append(who + blind_reason(blind, itself=m.baseline_version == version))
    if not m.fit and m.chance_tests_apply:
        tests = m.fitness.failing if m.fitness is not None else []
        worse = [t.name for t in tests if chance_reading(t) == WORSE]
        at = [t.name for t in tests if chance_reading(t) != WORSE]
        if worse:
            trust.append(f"{who}worse than chance on {named(worse, 3)}")
        if at:
            trust.append(f"{who}{AT_CHANCE} on {named(at, 3)}")
        if not tests:
            trust.append(f"{who}{m.fitness_reasons()[0]}")
        # Why it is accepted is in the verdict line itself, right above the reasons.
    elif m.undecided and m.fitness is not None and m.chance_tests_apply:
        trust.append(f"{who}{cannot_show(m.fitness)[0]}")
    elif m.fit and m.fitness is not None and m.chance_tests_apply:
        trust.append(f"{who}better than chance on all {len(m.fitness.decisive)} deciding tests")
    # A gate without data decides nothing: named, never counted as a failure.
    trust += [
        f"{who}gate {gate.name} not evaluated (no data): {gate.value_text()}"
        for gate in m.gates
        if gate.passed is None and gate.threshold is not None
    ]
    # Against the baseline itself the regression family decided (with Holm's correction):
    # a sentence calling the same flips "significantly worse" alone would contradict it.
    decided = m.comparison is not None and m.comparison.before == m.baseline_version
    if m.comparison is not None and m.baseline_version != m.comparison.after and not decided:
        previous = worse_than_previous(m.comparison)
        if previous is not None:
            trust.append(f"{who}{previous}")
    return failing, trust


def blind_reason(blind: Sequence[Sensitivity], itself: bool) -> str:
    """One sentence for every paired gate that cannot see gates.toml's drop: "blind to
    detection drops under 27 points and to rises in control false positives under 55
    points (gates.toml asks for 15): 168 planted defects, 196 controls would see it"."""
    seen = " and to ".join(sensitivity.blind_to(found).removeprefix("blind to ") for found in blind)
    whose = "as the accepted baseline, its gates are " if itself else ""
    needs = ", ".join(sensitivity.enough(found) for found in blind)
    return (
        f"{whose}blind to {seen} (gates.toml asks for {blind[0].required * 100:.0f}): "
        f"{needs} would see it"
    )


def baseline_warning(report: FolderReport) -> str | None:
    """The banner's warning when this version is the accepted baseline and is significantly
    worse than the prompt before it."""
    found = []
    for m in report.models:
        worse = worse_than_previous(m.comparison) if m.comparison is not None else None
        if worse is not None and m.baseline_version == report.version:
            who = f"{m.model}: " if len(report.models) > 1 else ""
            found.append(f"{who}the accepted baseline (gates.toml), yet {worse}")
    return "; ".join(found) or None


def first_screen(report: FolderReport) -> FirstScreen:
    """The summary every format opens with."""
    failing, trust = [], []
    several = len(report.models) > 1
    for m in report.models:
        fails, trusts = _model_reasons(m, f"{m.model}: " if several else "", report.version)
        failing += fails
        trust += trusts
    pairwise = report.pairwise.problems() if report.pairwise is not None else []
    accepted = report.pairwise_accepted_not_fit()
    if accepted:  # a pairwise judge: its sets at chance that gates.toml keeps
        sets = [entry.removesuffix(f": {NOT_FIT}") for entry in accepted]
        pairwise.append(
            f"{AT_CHANCE} on {len(sets)} sets, accepted in gates.toml: {named(sets, 3)}"
        )
    word = report.verdict_word()
    # What decides the word comes first: fitness for NOT FIT, failures for FAIL.
    reasons = [*trust, *pairwise, *failing] if word == NOT_FIT else [*failing, *pairwise, *trust]
    if word == PASS and not reasons:
        reasons = ["every gate passed and every planted item met its expectation"]
    figures = tuple(f for m in report.models for f in _figures(m))
    return FirstScreen(
        report.judge, report.version, word, report.label(), report.verdict(), tuple(reasons),
        figures,
        baseline_warning(report),
    )  # fmt: skip
