"""What a report says, as data: one judge's prompt version, per model. No rendering here.

The builders (`build.py`) fill these classes from rows; the markdown, JSON and HTML
renderers read them and never import each other.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from judges.core.results import Usage
from judges.reports.sections import sensitivity
from judges.reports.sections.estimate import estimate_dict
from judges.reports.sections.fitness import (
    cannot_show,
    fitness_dict,
    fitness_reasons,
    not_fit_phrase,
)
from judges.reports.sections.pairwise import pairwise_dict
from judges.reports.sections.ranking import ranker_lines
from judges.reports.sections.reply_fixtures import ReplyCheck
from judges.sets.folder import GATES_FILE
from judges.stats.estimates.intervals import Rate
from judges.stats.ranking.ranker import RankerSummary
from judges.stats.regression.comparison import Comparison
from judges.verdicts.completeness import missing_reason
from judges.verdicts.estimate import PassRateEstimate
from judges.verdicts.pairwise import PairwiseReport, set_verdict
from judges.verdicts.verdict import ModelVerdict
from judges.verdicts.vocabulary import (
    FAIL,
    FAILED,
    INCOMPLETE,
    NOT_FIT,
    PASS,
    UNDECIDED,
    UNFIT,
    UNFIT_ACCEPTED,
    WORDS,
    worst,
)

RESULTS_FILE = "results.jsonl"
REPORT_MD = "report.md"
FAILURES_MD = "failures.md"
REPORT_JSON = "report.json"
INDEX_HTML = "index.html"
COMPARISON_MD = "comparison.md"
RUNS = ("main", "noise", "retest", "panel")


def _round(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), 4)


def _as_dict(result: Any) -> dict[str, Any] | None:
    return None if result is None else result.as_dict()


@dataclass(frozen=True, kw_only=True)
class ModelReport(ModelVerdict):
    """The report on one judge model under one prompt version: its verdict (every field of
    `ModelVerdict`, which decides the word) and what a reader sees beside it."""

    n_main: int
    planted_items: int | None
    detection: dict[str, Rate]
    all_defects: Rate
    control_false_positive: Rate
    error_rate: Rate
    status_by_run: dict[str, dict[str, int]]
    scores: dict[str, tuple[float, ...]]  # main-run values per dimension, sorted
    comparison: Comparison | None  # with the previous prompt version
    # With the accepted baseline the gates use, where that is not the previous version.
    baseline_comparison: Comparison | None = None
    ranking: RankerSummary | None = None  # judges whose gates.toml sets ranking thresholds
    ranking_note: str = ""  # why a ranking failure is accepted (gates.toml)
    coercions: str | None = None  # lenient parsing: the count line; None for strict judges
    pass_rate: PassRateEstimate | None = None  # set.toml `outputs`: corrected pass rate

    def fitness_reasons(self) -> list[str]:
        """Why this judge is NOT FIT, one line each; empty when it is fit."""
        if self.fitness is None:
            return ["no planted set to test it against chance"]
        return fitness_reasons(self.fitness)

    def ranking_lines(self) -> list[str]:
        if self.ranking is None:
            return []
        note = [f"- accepted in {GATES_FILE}: {self.ranking_note}"] if self.ranking_note else []
        return [*ranker_lines(self.ranking), *note]

    def failure_counts(self) -> str:
        """E.g. "2 new failures, 34 accepted misses": the two never counted together."""
        new, accepted = len(self.new_failures), len(self.accepted_misses)
        return (
            f"{new} new failure{'s' * (new != 1)}, {accepted} accepted miss{'es' * (accepted != 1)}"
        )

    def threshold(self, category: str) -> float | None:
        for gate in self.gates:
            if gate.name == f"detection[{category}]":
                return gate.threshold
        return None

    def as_dict(self) -> dict[str, Any]:
        passed, failed, unevaluated = self.gate_counts
        word = self.verdict_word()
        return {
            "model": self.model,
            "verdict_word": word,
            "verdict_label": self.verdict_label(),
            "main_rows": self.n_main,
            "planted_items": self.planted_items,
            "missing_items": list(self.missing_items),
            "missing_runs": list(self.missing_runs),
            "detection": {name: rate.as_dict() for name, rate in self.detection.items()},
            "all_defects": self.all_defects.as_dict(),
            "control_false_positive": self.control_false_positive.as_dict(),
            "error_rate": self.error_rate.as_dict(),
            "status_by_run": self.status_by_run,
            "noise_floor": _as_dict(self.noise_floor),
            "test_retest": _as_dict(self.test_retest),
            "panel": _as_dict(self.panel),
            "sme": _as_dict(self.sme),
            "gates": {
                "table": self.gates_table,
                "results": [gate.as_dict() for gate in self.gates],
                "passed": passed,
                "failed": failed,
                "not_evaluated": unevaluated,
            },
            "failures": [failure.as_dict() for failure in self.failures],
            "new_failures": len(self.new_failures),
            "accepted_misses": len(self.accepted_misses),
            "problems": self.problems(),
            "accepted_misses_met": list(self.accepted_met),
            "score_distributions": {
                dim: [
                    {"value": _round(value), "count": count}
                    for value, count in sorted(Counter(values).items())
                ]
                for dim, values in self.scores.items()
            },
            "regressions": [gate.as_dict() for gate in self.regressions],
            "retest_regressions": [gate.as_dict() for gate in self.retest_regressions],
            "category_power": [p.as_dict() for p in self.category_power],
            "comparison": _as_dict(self.comparison),
            "bias_probes": _as_dict(self.probes),
            "notes": list(self.notes),
        } | self._optional_dict()

    def verdict_label(self) -> str:
        """The word as the overview's row shows it: "NOT FIT (accepted)" where gates.toml
        keeps it, "PASS, blind under 31 points" where the detection gate cannot see the
        drop gates.toml asks for."""
        word = self.verdict_word()
        if word == NOT_FIT and self.accept_not_fit:
            return f"{word} (accepted)"
        blind = [found for found in self.sensitivity if found.blind]
        if word == PASS and blind:
            return f"{word}, {sensitivity.blind_to(blind[0])}"
        return word

    def _optional_dict(self) -> dict[str, Any]:
        # Only where they apply, so the reports of other judges keep their bytes.
        optional: dict[str, Any] = {}
        if self.sensitivity:
            optional["sensitivity"] = [found.as_dict() for found in self.sensitivity]
        if self.score_sensitivity:
            optional["score_sensitivity"] = [found.as_dict() for found in self.score_sensitivity]
        if self.ranking is not None:
            optional["ranking"] = self.ranking.as_dict() | {"accepted": self.ranking_note}
        if self.coercions is not None:
            optional["coercions"] = self.coercions
        if self.label_stability:
            optional["label_stability"] = [r.as_dict() for r in self.label_stability]
        if self.reading_list is not None:
            optional["reading_list"] = self.reading_list.as_dict()
        if self.pass_rate is not None:
            optional["pass_rate_estimate"] = estimate_dict(self.pass_rate)
        if self.fitness is not None and self.chance_tests_apply:
            # The report's words for each test (at, better or worse than chance): one
            # vocabulary in every format.
            optional["fitness"] = fitness_dict(self.fitness) | {"accepted": self.accept_not_fit}
        return optional


@dataclass(frozen=True)
class UsageLine:
    model: str
    run: str
    rows: int
    usage: Usage


@dataclass(frozen=True)
class FolderReport:
    """One `reports/<judge>/<version>/` folder's content, computed once from its rows."""

    judge: str
    version: str
    previous_version: str | None
    previous_rows: bool  # whether the previous version has a results file
    template_hash: str | None  # of the version's prompt files as they are now
    prompt_hashes: dict[str, tuple[str, ...]]  # item -> hashes of its rendered prompts
    rows_by_run: dict[str, int]
    dimensions: tuple[str, ...]
    flag: str | None
    sme_labels: str | None  # the label file, as shown
    models: tuple[ModelReport, ...]
    usage: tuple[UsageLine, ...]
    notes: tuple[str, ...]
    fingerprints: dict[str, tuple[str, ...]] = field(default_factory=dict)  # run -> judges
    # Lines of results.jsonl that are not rows (`file:line: reason`); counted in `notes`.
    damaged: tuple[str, ...] = ()
    pairwise: PairwiseReport | None = None  # pairwise judges: every model per set
    # A callable judge's reply fixtures and properties: apart from every statistic.
    reply_checks: tuple[ReplyCheck, ...] = ()

    @property
    def reprompted(self) -> list[str]:
        """Items whose rows were judged under different prompts (changed between sessions)."""
        return [item for item, hashes in self.prompt_hashes.items() if len(hashes) > 1]

    def prompt_line(self) -> str:
        template = f"template {self.template_hash}" if self.template_hash else "template unknown"
        return f"{template}; {len(self.prompt_hashes)} items, one rendered prompt each" + (
            f" except {len(self.reprompted)}" if self.reprompted else ""
        )

    def problems(self) -> list[str]:
        """What keeps the folder from passing, per model where there are several."""
        pairwise = self.pairwise.problems() if self.pairwise is not None else []
        if len(self.models) == 1:
            return self.models[0].problems() + pairwise
        return [f"{m.model}: {p}" for m in self.models for p in m.problems()] + pairwise

    def verdict_word(self) -> str:
        """The worst of its models' words, in the words' precedence
        (`judges.verdicts.vocabulary.PRECEDENCE`), its pairwise sets counted as models."""
        if not self.models:
            return INCOMPLETE
        found = [m.standing() for m in self.models]
        # A pairwise set at chance is NOT FIT too (accepted or not, as gates.toml says).
        pairwise = self.pairwise.problems() if self.pairwise is not None else []
        if any(problem.endswith(NOT_FIT) for problem in pairwise):
            found.append(UNFIT)
        elif pairwise:
            found.append(FAILED)
        if self.pairwise_accepted_not_fit():
            found.append(UNFIT_ACCEPTED)
        return worst(found)

    def label(self) -> str:
        """The word as a one-line overview shows it: NOT FIT says when gates.toml accepts
        it, a FAIL names an accepted NOT FIT beside it, and a PASS whose paired gate cannot
        see gates.toml's min_detectable_drop says so."""
        word = self.verdict_word()
        unfit = [m for m in self.models if not m.fit and m.chance_tests_apply]
        accepted = bool(self.pairwise_accepted_not_fit()) or any(m.accept_not_fit for m in unfit)
        if word == NOT_FIT and accepted and all(m.accept_not_fit for m in unfit):
            pairwise = self.pairwise.problems() if self.pairwise is not None else []
            if not any(problem.endswith(NOT_FIT) for problem in pairwise):
                return f"{NOT_FIT} (accepted)"
        if word == FAIL and accepted:
            return f"{FAIL}; {NOT_FIT} (accepted)"
        blind = [found for m in self.models for found in m.sensitivity if found.blind]
        if word == PASS and blind:  # the terminal and step summary read it too
            return f"{PASS}, {sensitivity.blind_to(blind[0])}"
        return word

    def verdict(self) -> str:
        """The whole verdict, naming everything that decides the word: what failed, what is
        at or worse than chance (accepted or not), what is missing. A FAIL keeps an accepted
        NOT FIT in view ("FAIL: 2 gates failed; NOT FIT, accepted: why"), and a NOT FIT keeps
        the failures ("...; also 2 gates failed"). It follows the Result line (the word and
        the one reason that decides it, `summary.FirstScreen.result`) where it says more."""
        word = self.verdict_word()
        if not self.models:
            return f"{INCOMPLETE}: no main-run rows"
        if word == PASS:
            return PASS + "".join(f", but {line}" for line in self._blind_lines())
        if word == UNDECIDED:
            # Nothing failed, but nothing could show the judge better than chance either.
            undecided = [m for m in self.models if m.undecided]
            return f"{UNDECIDED}: {self._cannot_show(undecided)}"
        if word == INCOMPLETE:
            runs = sorted({run for m in self.models for run in m.missing_runs})
            return f"{INCOMPLETE}: " + missing_reason(
                sum(len(m.missing_items) for m in self.models), runs
            )
        pairwise = self.pairwise.problems() if self.pairwise is not None else []
        if word == NOT_FIT:
            problems = [p for p in self.problems() if p not in pairwise]
            accepted = [
                f"{entry} (accepted in {GATES_FILE})" for entry in self.pairwise_accepted_not_fit()
            ]
            parts = self._not_fit_parts(accepted=None) + pairwise + accepted
            also = f"; also {', '.join(problems)}" if problems else ""
            return f"{NOT_FIT}: " + "; ".join(parts) + also
        if word != FAIL:  # a word without a sentence of its own says what it means
            return f"{word}: {WORDS[word].meaning}"
        problems = [p for p in self.problems() if not p.endswith(NOT_FIT)]
        kept = self._not_fit_parts(accepted=True) + self.pairwise_accepted_not_fit()
        return (
            f"{FAIL}: "
            + ", ".join(problems)
            + "".join(f"; {NOT_FIT}, accepted: {part}" for part in kept)
        )

    def _blind_lines(self) -> list[str]:
        """Per model and paired gate that cannot see gates.toml's min_detectable_drop: how
        blind, what would see it, and the command that plans the set."""
        lines = []
        for m in self.models:
            who = f"{m.model}: " if len(self.models) > 1 else ""
            model = f" --model {m.model}" if len(self.models) > 1 else ""
            whose = "its gates are " if m.baseline_version == self.version else ""
            lines += [
                f"{who}{whose}{sensitivity.blind_to(found)}: {sensitivity.needs(found)}; "
                f"`python -m judges plan {self.judge}{model} --drop {found.required:g}` "
                "plans the set"
                for found in m.sensitivity
                if found.blind
            ]
        return lines

    def _cannot_show(self, models: list[ModelReport]) -> str:
        """What the set cannot yet show, per model where there are several."""
        lines = [(m.model, cannot_show(m.fitness)[0]) for m in models if m.fitness is not None]
        if len(self.models) == 1:
            return lines[0][1]
        return "; ".join(f"{model}: {line}" for model, line in lines)

    def pairwise_accepted_not_fit(self) -> list[str]:
        """Pairwise sets a model is NOT FIT on that gates.toml accepts: "model set"."""
        if self.pairwise is None:
            return []
        return [
            f"{entry.model} {category}: {NOT_FIT}"
            for category, entries in self.pairwise.sets.items()
            for entry in entries
            if set_verdict(entry.outcome) == NOT_FIT and entry.outcome.accepted
        ]

    def _not_fit_parts(self, accepted: bool | None) -> list[str]:
        """Per model that is not fit (accepted only, or all when `accepted` is None): what it
        is at or worse than chance on, at most five names, then why it is accepted."""
        parts = []
        for m in self.models:
            if m.fit or not m.chance_tests_apply:  # a pairwise judge's sets: `pairwise`
                continue
            if accepted is not None and bool(m.accept_not_fit) != accepted:
                continue
            failing = m.fitness.failing if m.fitness is not None else []
            why = not_fit_phrase(failing) if failing else m.fitness_reasons()[0]
            if failing and m.fitness is not None:
                why = f"{len(failing)} of {len(m.fitness.decisive)} deciding tests: {why}"
            who = f"{m.model}: " if len(self.models) > 1 else ""
            if accepted:  # "NOT FIT, accepted: why" reads the reason first
                parts.append(f"{who}{m.accept_not_fit} ({why})")
                continue
            kept = f" (accepted in {GATES_FILE}: {m.accept_not_fit})" if m.accept_not_fit else ""
            parts.append(f"{who}{why}{kept}")
        return parts

    @property
    def comparisons(self) -> list[Comparison]:
        return [m.comparison for m in self.models if m.comparison is not None]

    def as_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "prompt_version": self.version,
            "verdict_word": self.verdict_word(),
            "previous_version": self.previous_version,
            "template_hash": self.template_hash,
            "prompt_hashes": {item: list(hashes) for item, hashes in self.prompt_hashes.items()},
            "rows_by_run": self.rows_by_run,
            "dimensions": list(self.dimensions),
            "flag": self.flag,
            "sme_labels": self.sme_labels,
            "models": [m.as_dict() for m in self.models],
            "usage": [
                {"model": u.model, "run": u.run, "rows": u.rows, **u.usage.stable_dump()}
                for u in self.usage
            ],
            "notes": list(self.notes),
            "fingerprints": {run: list(found) for run, found in self.fingerprints.items()},
            **({"pairwise": pairwise_dict(self.pairwise)} if self.pairwise is not None else {}),
        }
