"""The fitness section of a report, rendered from the model: each chance test with its n,
interval and p-value, in report.md and index.html. Its figures come from
`judges.reports.sections.fitness`."""

from __future__ import annotations

from judges.reports.format import sided_p
from judges.reports.model.data import ModelReport
from judges.reports.render.charts import esc
from judges.reports.sections.fitness import cannot_show, chance_reading, weak_spots
from judges.sets.folder import GATES_FILE
from judges.stats.fitness.chance import ChanceTest
from judges.verdicts.vocabulary import AT_CHANCE, BETTER, FIT, NOT_FIT, WORSE

__all__ = ["FITNESS_INTRO", "fitness_html", "fitness_md"]

FITNESS_INTRO = (
    "Is the judge better than chance at what this set measures? Each test's threshold is "
    f"chance itself (one-sided, alpha 0.05), so no floor in {GATES_FILE} can move it: detection "
    "of planted defects against the control false-positive rate (Fisher exact; Newcombe "
    "interval of the difference), defect scores below control scores on the targeted "
    "dimension (Mann-Whitney; AUC), agreement with SME labels, test-retest and noise beyond "
    "chance (permutation tests of kappa, Spearman and alpha), ranking against random "
    "rankings. A test that even a perfect judge could not pass at its n cannot decide; a "
    "per-category, per-dimension, noise, retest or SME test decides only where a judge right "
    "90% of the time passes it with 95% probability (its power), else it is a diagnostic. "
    "A test reads worse than chance when its one-sided test (p worse < 0.05) or its 95% "
    "interval, wholly below chance, says so; either way it is not better than chance."
)


def _headline(m: ModelReport) -> str:
    if m.fitness is None:
        return f"**{NOT_FIT}**: no planted set to test the judge against chance."
    weak = "".join(f" {line[0].upper()}{line[1:]}." for line in weak_spots(m.fitness))
    if m.fit and m.fitness.undecided:
        return f"**{FIT}, undecided**: {cannot_show(m.fitness)[0]}."
    if m.fit:
        deciding = len(m.fitness.decisive)
        return f"**{FIT}**: {BETTER} on all {deciding} deciding tests.{weak}"
    failing = m.fitness.failing
    worse = sum(chance_reading(t) == WORSE for t in failing)
    split = f" ({worse} {WORSE}, {len(failing) - worse} {AT_CHANCE})" if worse else ""
    head = (
        f"**{NOT_FIT}**: not better than chance on {len(failing)} of "
        f"{len(m.fitness.decisive)} deciding tests{split}."
    )
    if not m.fitness.tests:
        head = f"**{NOT_FIT}**: no chance test applies to this set."
    if m.accept_not_fit:
        head += f" Accepted in {GATES_FILE} (accept_not_fit): {m.accept_not_fit}"
    return head


def false_alarm_sentence(m: ModelReport) -> str:
    """The set's own false-alarm figure for fitness: a judge right 90% of the time."""
    if m.fitness is None or not m.fitness.decisive:
        return ""
    return (
        "A judge right on 90% of its judgements, re-recorded unchanged, fails one of these "
        f"deciding tests at most {m.fitness.false_alarm_bound():.1%} of the time (each test's "
        "power summed, a union bound); the whole verdict's simulated false-alarm rate is in "
        "`python -m judges docs gates-and-verdicts`."
    )


def _cells(test: ChanceTest) -> list[str]:
    def num(value: float) -> str:
        return "-" if value != value else f"{value:.2f}"

    interval = "-" if test.low != test.low else f"[{num(test.low)}, {num(test.high)}]"
    value = "undefined" if test.value != test.value else num(test.value)  # Counts says why

    reading = chance_reading(test)
    # Each p-value names its side: better (the test that decides) and, for a judge below
    # chance, worse.
    p = sided_p(test.p_value, test.p_worse if reading == WORSE else None)
    return [
        test.name, reading.upper(), test.statistic, value, interval, f"{test.chance:g}", p,
        str(test.n), "-" if test.power is None else f"{test.power:.2f}", test.detail,
    ]  # fmt: skip


# Power: the probability that a judge right 90% of the time passes the test at its n.
HEAD = [
    "Test", "Reads", "Statistic", "Value", "95% interval", "Chance", "one-sided p", "n",
    "Power (90% judge)", "Counts",
]  # fmt: skip


def fitness_md(m: ModelReport) -> list[str]:
    if not m.chance_tests_apply:
        return []  # a pairwise judge's chance tests are per set, in their own section
    lines = ["### Fitness: better than chance?", "", _headline(m), "", FITNESS_INTRO, ""]
    if sentence := false_alarm_sentence(m):
        lines += [sentence, ""]
    if m.fitness is None or not m.fitness.tests:
        return lines
    lines += ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    lines += ["| " + " | ".join(_cells(t)) + " |" for t in m.fitness.tests]
    return [*lines, ""]


def fitness_html(m: ModelReport) -> str:
    if not m.chance_tests_apply:
        return ""
    headline = esc(_headline(m).replace("**", ""))
    rows = ""
    if m.fitness is not None:
        for test in m.fitness.tests:
            kind = "pass" if test.fit_ignoring_power else ("na" if not test.testable else "fail")
            cells = [esc(cell) for cell in _cells(test)]
            cells[1] = f'<span class="{kind}">{cells[1]}</span>'
            rows += "<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>"
    table = (
        "<table><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in HEAD) + "</tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        if rows
        else ""
    )
    sentence = false_alarm_sentence(m)
    extra = f"<p>{esc(sentence)}</p>" if sentence else ""
    return (
        f'<div class="card"><h3>Fitness: better than chance?</h3><p>{headline}</p>'
        f"{extra}{table}"
        f'<p class="caption">{esc(FITNESS_INTRO)}</p></div>'
    )
