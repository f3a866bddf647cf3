"""The first screen of a report: can I trust this judge, and what changed?

The verdict, at most five reasons in plain words (then "and N more"), and a small table of
the figures that decide it, each with its n, its interval and what chance or the previous
prompt gives. Every format (report.md, index.html, the overview page, the terminal and the
step summary) reads this one summary, so they say the same thing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from judges.reports.format import p_is, p_value, rate, sided_p
from judges.reports.model.data import FolderReport, ModelReport
from judges.reports.sections import sensitivity
from judges.reports.sections.fitness import cannot_show, chance_reading, named
from judges.stats.estimates.intervals import Rate
from judges.stats.estimates.paired_tests import binomial_midp
from judges.stats.fitness.chance import ChanceTest
from judges.stats.regression.comparison import Comparison
from judges.stats.regression.gates import PairedCounts, Regression
from judges.stats.regression.sensitivity import Sensitivity
from judges.verdicts.deciding import Cause, Reason, deciding, ordered
from judges.verdicts.vocabulary import AT_CHANCE, FAIL, NOT_FIT, PASS, WORSE

__all__ = [
    "LINE_LIMIT",
    "MAX_REASONS",
    "RESULT_LIMIT",
    "Figure",
    "FirstScreen",
    "baseline_warning",
    "first_screen",
    "one_line",
    "worse_than_previous",
]

MAX_REASONS = 5
LINE_LIMIT = 160  # one screen line: the Result line, a terminal verdict line
RESULT_LIMIT = LINE_LIMIT - len("**Result: **")  # report.md's line, bold marks and all
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
    deciding: Reason | None = None  # the reason that decides the word (verdicts.deciding)
    by_model: Mapping[str, str] = field(default_factory=dict)  # each model's deciding clause

    def result(self, limit: int = RESULT_LIMIT) -> str:
        """The verdict and its deciding reason in one line of at most `limit` characters."""
        return one_line(self.word, self.label, self.deciding, limit)

    def details(self) -> list[str]:
        """The whole verdict, for the line after the Result line, when it says more."""
        return [] if self.result().startswith(self.verdict) else [self.verdict]

    def shown_reasons(self, limit: int = MAX_REASONS) -> list[str]:
        """At most `limit` reasons, then "and N more" (the full list is in the sections)."""
        if len(self.reasons) <= limit:
            return list(self.reasons)
        rest = len(self.reasons) - limit
        return [*self.reasons[:limit], f"and {rest} more (in the sections below)"]

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "deciding": None
            if self.deciding is None
            else {"cause": self.deciding.cause.name.lower(), "reason": self.deciding.name},
            "deciding_by_model": dict(self.by_model),
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
    # Counted as the verdict line counts: deciding tests; the others are shown, no more.
    decisive = [t for t in family if t.testable]
    failing = sum(not t.fit for t in decisive)
    note = f"{failing} of {len(decisive)} deciding tests not better than chance"
    if len(family) > len(decisive):
        note += f", {len(family) - len(decisive)} more decide nothing"
    note = note if len(family) > 1 else ""
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


def _model_reasons(m: ModelReport, who: str, version: str) -> list[Reason]:
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
        text = f"{who}accepted misses now met (remove them from expectations.toml)"
        reasons.append(
            Reason(Cause.ACCEPTED_MET, f"{text}: {named(list(m.accepted_met))}", text, "", m.model)
        )
    if m.probes is not None and m.probes.unaccepted:
        n = len(m.probes.unaccepted)
        text = f"{who}{n} biased probe item{'s' * (n != 1)} (probe_expectations.toml)"
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
    reasons += _fitness_reasons(m, who)
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


def _fitness_reasons(m: ModelReport, who: str) -> list[Reason]:
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
        return [Reason(Cause.UNDECIDED, text, short, "grow the set (`python -m judges plan`)",
                       m.model)]  # fmt: skip
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
    weakest = _weakest(tests)
    short = f"{who}{chance_reading(weakest)} on {weakest.name}"
    figure = f"{_test_value(weakest)} n={weakest.n}; {len(tests)} of {decisive} deciding tests fail"
    # The deciding test named first, so the first reason starts with the Result line's.
    tests = [weakest, *(t for t in tests if t is not weakest)]
    worse = [t.name for t in tests if chance_reading(t) == WORSE]
    at = [t.name for t in tests if chance_reading(t) != WORSE]
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


def _pairwise_reasons(report: FolderReport) -> list[Reason]:
    """A pairwise judge's sets: those NOT FIT or failing, and those at chance that
    gates.toml keeps."""
    reasons = []
    for problem in report.pairwise.problems() if report.pairwise is not None else []:
        cause = Cause.NOT_FIT if problem.endswith(NOT_FIT) else Cause.FLOOR
        reasons.append(Reason(cause, problem, problem))
    accepted = report.pairwise_accepted_not_fit()
    if accepted:  # a pairwise judge: its sets at chance that gates.toml keeps
        sets = [entry.removesuffix(f": {NOT_FIT}") for entry in accepted]
        text = f"{AT_CHANCE} on {len(sets)} sets, accepted in gates.toml: {named(sets, 3)}"
        short = f"{AT_CHANCE} on {len(sets)} set{'s' * (len(sets) != 1)}"
        reasons.append(Reason(Cause.NOT_FIT_ACCEPTED, text, short, named(sets, 1)))
    return reasons


def one_line(word: str, label: str, reason: Reason | None, limit: int) -> str:
    """The verdict and the reason that decides it, in at most `limit` characters: the
    figure's parts go first when room runs out, from the last ("value n=20; 3 of 3 deciding
    tests fail"), and the reason's name is cut (" ...") only when it alone is too long."""
    lead = label if label == f"{NOT_FIT} (accepted)" else word
    if reason is None:
        return _cut(lead, limit)
    head = f"{lead}, but {reason.name}" if reason.cause == Cause.BLIND else f"{lead}: {reason.name}"
    parts = reason.figure.split("; ") if reason.figure else []
    # A blind gate's figure reads on ("...: 48 planted defects would see 15 points (it has 32)").
    opens, closes = (": ", "") if reason.cause == Cause.BLIND else (" (", ")")
    lines = [f"{head}{opens}{'; '.join(parts[:k])}{closes}" for k in range(len(parts), 0, -1)]
    lines.append(head)
    fitting = [line for line in lines if len(line) <= limit]
    return fitting[0] if fitting else _cut(head, limit)


def _cut(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, ending " ..." where cut: at a space in the
    second half of the room, else inside a word (a long model name is still named).
    textwrap.shorten would drop a word longer than the room whole."""
    if len(text) <= limit:
        return text
    room = limit - len(" ...")
    space = text.rfind(" ", 0, room + 1)
    return text[: space if space > room // 2 else room].rstrip() + " ..."


def first_screen(report: FolderReport) -> FirstScreen:
    """The summary every format opens with."""
    several = len(report.models) > 1
    found: list[Reason] = []
    by_model: dict[str, str] = {}
    for m in report.models:
        mine = _model_reasons(m, f"{m.model}: " if several else "", report.version)
        found += mine
        first = deciding(mine, m.verdict_word())
        if first is not None:  # each overview row names its own model's deciding reason
            head = f"{first.name} ({first.figure})" if first.figure else first.name
            by_model[m.model] = head.removeprefix(f"{m.model}: ")
    found += _pairwise_reasons(report)
    word = report.verdict_word()
    if word == PASS and not found:
        text = "every gate passed and every planted item met its expectation"
        found.append(Reason(Cause.PASSED, text, text))
    reasons = ordered(found, word)
    figures = tuple(f for m in report.models for f in _figures(m))
    return FirstScreen(
        report.judge, report.version, word, report.label(), report.verdict(),
        tuple(r.text for r in reasons), figures, baseline_warning(report),
        deciding(reasons, word), by_model,
    )  # fmt: skip
