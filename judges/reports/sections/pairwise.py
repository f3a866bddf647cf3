"""The "Pairwise judges" section of a report: per set, every judge model side by side.

Words the sets `judges.verdicts.pairwise` computes from a version's main-run rows of a
pairwise judge, with each model's gates.toml table for its floors and accepted failures, so
`python -m judges report` rebuilds it without judging. The LLMBar columns are the figures of
a release's `statistics.json`, recomputed from the rows as its code does;
regression_tests/test_pairwise.py asserts they equal the published ones.
"""

from __future__ import annotations

from typing import Any

from judges.core.quoting import md_cell, md_prose, md_text
from judges.core.thresholds import distinct_digits, threshold_text
from judges.reports.format import number, p_value, rate_percent_short, sided_p
from judges.sets.folder import GATES_FILE
from judges.stats.estimates.intervals import Rate
from judges.stats.fitness.chance import ChanceTest
from judges.stats.fitness.pairwise import SetOutcome
from judges.verdicts.pairwise import ModelSet, PairwiseReport, set_verdict
from judges.verdicts.vocabulary import AT_CHANCE, BETTER, TOO_FEW, WORSE, Reading

EXPLAINED = (
    "Every item is judged in both orders. Accuracy is against the gold label, each k/n with "
    "its 95% Wilson interval: in the original order, in the swapped order, in both, and the "
    "average (k of 2n judgements, two per item, not independent). Agreement: the same winner "
    "named in both orders. Chance: exact sign test, right in both orders against wrong in "
    "both (a coin or a position-follower is as likely to be wrong twice as right twice: "
    "50%), each one-sided p-value named by its side. A set is NOT FIT unless significantly "
    "better than chance, FAIL if a floor of "
    f"{GATES_FILE} fails, else PASS. LLMBar columns are computed as the paper's code does: "
    "`equal` counts two replies without a winner as the same winner, and its kappas encode "
    "a winner '1' as 1 and anything else as 0 against gold labels 1 or 2 (so they are not "
    "Cohen's kappa against the gold label)."
)


def finding(test: ChanceTest) -> Reading:
    """How a set's chance test reads: better than, at or worse than chance (each by its
    one-sided test), or too few to test."""
    if test.fit:
        return BETTER
    if test.worse_than_chance:
        return WORSE
    return AT_CHANCE if test.testable else TOO_FEW


def chance_p(test: ChanceTest) -> str:
    """Both one-sided p-values, each naming its side; no figure when nothing was decided."""
    if test.n == 0:
        return "no item decided alike in both orders: nothing to test"
    return f"one-sided {sided_p(test.p_value, test.p_worse)}"


def chance_sentence(test: ChanceTest) -> str:
    """The finding with its figure, interval, counts and sided p-values; never a nan."""
    if test.n == 0:
        return f"{finding(test)} ({chance_p(test)}; {test.detail})"
    share = (
        f"{test.statistic} {test.k}/{test.n} = {number(test.value)} "
        f"[{number(test.low)}, {number(test.high)}], chance 0.5"
    )
    return f"{finding(test)} ({share}; {chance_p(test)}; {test.detail})"


def set_reasons(outcome: SetOutcome) -> list[str]:
    """Why a set is NOT FIT or FAILs, one line each."""
    reasons = []
    if not outcome.figures.chance.fit:
        reasons.append(chance_sentence(outcome.figures.chance))
    if outcome.agreement_passed is False and outcome.min_agreement is not None:
        agreement, floor = outcome.figures.agreement, outcome.min_agreement
        places = distinct_digits(agreement.rate, floor)  # 28/47 = 0.596, never 0.60
        reasons.append(
            f"positional agreement {agreement.successes}/{outcome.figures.n} = "
            f"{agreement.rate:.{places}f} below min_agreement {threshold_text(floor)}"
        )
    return reasons


def model_set_dict(entry: ModelSet) -> dict[str, Any]:
    return {"model": entry.model, **outcome_dict(entry.outcome), "llmbar": entry.llmbar}


def pairwise_dict(report: PairwiseReport) -> dict[str, Any]:
    """report.json's `pairwise`: every set, the tests between models, the leaderboards."""
    return {
        "sets": {c: [model_set_dict(m) for m in models] for c, models in report.sets.items()},
        "mcnemar_between_models": [p.as_dict() for p in report.pairs],
        "leaderboard": [board.as_dict() for board in report.leaderboards],
    }


def outcome_dict(outcome: SetOutcome) -> dict[str, Any]:
    """report.json's entry for one set: the figures, the finding, the verdict and reasons."""
    found = outcome.as_dict()
    found["chance"] = {"finding": finding(outcome.figures.chance), **found["chance"]}
    accepted = found.pop("accepted")
    verdict = {"verdict": set_verdict(outcome), "reasons": set_reasons(outcome)}
    return found | verdict | {"accepted": accepted}


def _rate(rate: Rate) -> str:
    return rate_percent_short(rate)


def _verdict(entry: ModelSet) -> str:
    outcome = entry.outcome
    verdict = f"**{set_verdict(outcome)}**"
    if reasons := set_reasons(outcome):
        verdict += ": " + "; ".join(reasons)
    if outcome.accepted:
        verdict += f" (accepted: {outcome.accepted})"
    return verdict


def pairwise_markdown(report: PairwiseReport) -> list[str]:
    lines = ["## Pairwise judges, per set", "", EXPLAINED, ""]
    for category, entries in report.sets.items():
        n = entries[0].outcome.figures.n
        lines += [
            f"### {category} ({n} items)",
            "",
            "| model | original order | swapped order | average | both orders | agreement "
            "| chance | no winner |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for e in entries:
            f = e.outcome.figures
            lines.append(
                f"| {md_cell(e.model)} | {_rate(f.original)} | {_rate(f.swapped)} "
                f"| {_rate(f.average)} | {_rate(f.both)} | {_rate(f.agreement)} "
                f"| {finding(f.chance)} ({chance_p(f.chance)}) | {f.no_winner} |"
            )
        lines += [
            "",
            "LLMBar's figures, recomputed from the rows:",
            "",
            "| model | correct_False | correct_True | correct_average | correct_both | equal "
            "| kappa_False | kappa_True | kappa_agreement |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for e in entries:
            s = e.llmbar
            lines.append(
                f"| {md_cell(e.model)} | {s['correct_False']} | {s['correct_True']} | "
                f"{s['correct_average']} | {s['correct_both']} | {s['equal']} | "
                f"{s['kappa_False']:.4f} | {s['kappa_True']:.4f} | {s['kappa_agreement']:.4f} |"
            )
        lines += ["", *(f"- {md_text(e.model)}: {md_prose(_verdict(e))}" for e in entries), ""]
        pairs = [p for p in report.pairs if p.category == category]
        if pairs:
            lines += [
                "Between models (right in both orders, exact McNemar on the same items):",
                "",
                "| first | second | first right | second right | only first | only second | p |",
                "|---|---|---|---|---|---|---|",
                *(
                    f"| {md_cell(p.first)} | {md_cell(p.second)} | {p.first_right}/{p.test.n} | "
                    f"{p.second_right}/{p.test.n} | {p.test.b} | {p.test.c} "
                    f"| {p_value(p.test.p_value)} |"
                    for p in pairs
                ),
                "",
            ]
    return lines
