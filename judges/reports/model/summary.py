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

from judges.reports.format import p_value, rate, sided_p
from judges.reports.model.data import FolderReport, ModelReport
from judges.reports.model.reasons import (
    model_reasons,
    pairwise_reasons,
    weakest,
    worse_than_previous,
)
from judges.reports.model.result_line import RESULT_LIMIT, one_line
from judges.reports.sections import sensitivity
from judges.reports.sections.fitness import chance_reading
from judges.sets.folder import GATES_FILE
from judges.stats.estimates.intervals import Rate
from judges.stats.fitness.chance import ChanceTest
from judges.stats.regression.comparison import Comparison
from judges.stats.regression.gates import PairedCounts, Regression
from judges.stats.regression.sensitivity import ScoreSensitivity, Sensitivity
from judges.verdicts.deciding import Cause, Reason, deciding, ordered
from judges.verdicts.vocabulary import FAIL, PASS, WORSE

__all__ = ["MAX_REASONS", "Figure", "FirstScreen", "baseline_warning", "first_screen"]

MAX_REASONS = 5
MAX_FIGURES = 8  # per model: the table must fit the first screen


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


def _change_reads(c: Comparison) -> str:
    b, cc = c.mcnemar.b, c.mcnemar.c
    if b + cc == 0:
        return "no item changed"
    if c.significantly_worse:
        verdict = "worse"
    elif c.significantly_better:
        verdict = "better"
    else:
        verdict = "no significant change"
    midp = _p(c.midp_worse)
    return f"{verdict} ({b} caught->missed, {cc} missed->caught, one-sided mid-p = {midp})"


def _family(test: ChanceTest) -> str:
    return test.name.split(":")[0]


def _test_figure(model: str, family: Sequence[ChanceTest]) -> Figure:
    test = weakest(family)
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
    if score := _score_sensitivity_figure(m.model, m.score_sensitivity):
        figures.append(score)
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
        f"declared {found.required * 100:.0f} points ({GATES_FILE})", reads,
    )  # fmt: skip


def _score_sensitivity_figure(model: str, found: Sequence[ScoreSensitivity]) -> Figure | None:
    """One row for every score gate: the range of mean drops they see, weakest named."""
    seen = [f for f in found if not math.isnan(f.drop) and f.drop >= 0.005]
    if not seen:
        return None
    weakest, strongest = max(seen, key=lambda f: f.drop), min(seen, key=lambda f: f.drop)
    value = sensitivity.score_range(weakest, strongest)
    gates = "the score gate sees" if len(seen) == 1 else f"the {len(seen)} score gates see"
    what = f"smallest mean score drop {gates} (80% power)"
    return Figure(model, what, value, weakest.n, "no declared drop", "stated")


def baseline_warning(report: FolderReport) -> str | None:
    """The banner's warning when this version is the accepted baseline and is significantly
    worse than the prompt before it."""
    found = []
    for m in report.models:
        worse = worse_than_previous(m.comparison) if m.comparison is not None else None
        if worse is not None and m.baseline_version == report.version:
            who = f"{m.model}: " if len(report.models) > 1 else ""
            found.append(f"{who}this accepted baseline ({GATES_FILE}) is {worse}")
    return "; ".join(found) or None


def first_screen(report: FolderReport) -> FirstScreen:
    """The summary every format opens with."""
    several = len(report.models) > 1
    found: list[Reason] = []
    by_model: dict[str, str] = {}
    for m in report.models:
        mine = model_reasons(m, f"{m.model}: " if several else "", report.judge, report.version)
        found += mine
        first = deciding(mine, m.verdict_word())
        if first is not None:  # each overview row names its own model's deciding reason
            head = f"{first.name} ({first.figure})" if first.figure else first.name
            by_model[m.model] = head.removeprefix(f"{m.model}: ")
    found += pairwise_reasons(report)
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
