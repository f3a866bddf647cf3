"""The fitness of one judge, prompt version and model: its chance tests, from its rows.

What a set measures decides which tests apply, each where its rows exist:

- planted detection (sets with controls): defects flagged more often than controls,
  overall and per category where n allows;
- scores (sets with controls): defects score lower than controls on each dimension their
  planted error targets (the fields their expectations bound from above);
- SME calibration (versions with SME labels): kappa and Spearman above 0;
- ranking (sets of graded query-document items): nDCG@10 above random rankings, and the
  reading list's hard-negative AUC above random orderings;
- pairwise sets (items that expect a winner in both orders): per set, right in both orders
  more often than wrong in both (the sign test of judges.stats.fitness.pairwise);
- test-retest and noise: answers agree beyond chance on every dimension and the flag.

A dimension the judge answers with one value in both runs (or every repeat) says nothing
about repeatability: that test is shown but decides nothing (the other tests catch a constant
judge). A judge that answers one value in one run and varies in the other is NOT FIT.

Which tests decide: the pooled ones (planted detection overall, ranking, reading list,
pairwise sets) wherever a perfect judge could pass them. A subgroup test (per category,
per dimension, and each field's noise, retest and SME test) decides only where a judge right
on 90% of its judgements passes it with 95% probability at the set's size
(judges.stats.fitness.power), and only while the chances that such a judge fails any
deciding test add up to 5% at most (most powerful first); elsewhere it is a diagnostic
("weak on fabrication").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from judges.core.results import JudgementRow
from judges.sets.items import PlantedItem
from judges.sets.reading_list import RUN as READING_LIST_RUN
from judges.sets.sme import SmeLabel
from judges.stats.estimates.floors import detected
from judges.stats.estimates.pairing import all_integers, flag_of, number_of
from judges.stats.fitness.chance import (
    ChanceTest,
    Fitness,
    collect,
    detection_vs_controls,
    scores_lower_on_defects,
)
from judges.stats.fitness.pairwise import by_category, figures, is_pairwise, judged
from judges.stats.fitness.permutation import (
    agreement_above_chance,
    ranking_above_random,
    repeats_agree_above_chance,
    spearman_above_chance,
)
from judges.stats.fitness.power import (
    agreement_power,
    decide_by_power,
    detection_power,
    repeats_power,
    spearman_power,
    within_budget,
)
from judges.stats.ranking.metrics import random_expectation
from judges.stats.ranking.random_draws import draw_metrics
from judges.stats.ranking.ranker import N_DRAWS, per_query, queries_from_rows
from judges.stats.ranking.reading_list import judge_scores
from judges.stats.reliability.calibration import judge_and_human, sme_dimension

__all__ = ["SetFacts", "is_ranking_set", "judge_fitness", "pairwise_test_name"]

LOWER = ("<=", "<")  # an expectation that bounds a score from above targets that dimension
Scales = Mapping[str, tuple[float, float]]  # a dimension's (minimum, maximum), where stated
MAX_SCALE_VALUES = 101  # a rating scale's values at most (0-100); wider is a count


@dataclass(frozen=True)
class _Categories:
    """Answers as category indices, and what a power figure needs of the categories."""

    index: tuple[int, ...]
    k: int
    values: tuple[float, ...] | None  # the categories' values, which quadratic weights measure


def _categories(
    answers: Sequence[float | str], numeric: bool, scale: tuple[float, float] | None = None
) -> _Categories:
    """Category indices of answers (ordered for numbers).

    A number field whose reply model states a rating scale of whole numbers takes every
    value of it: a good judge's wrong answer may be any value the field takes, not only the
    ones this run gave (a run that never gave 1 on a 1-5 scale made the power figure assume
    near errors only, and read too high). A wider range (a count, not a rating) keeps the
    values seen.
    """
    seen = set(answers)
    if numeric and scale is not None:
        low, high = scale
        if all_integers((low, high, *map(float, seen))) and 0 < high - low < MAX_SCALE_VALUES:
            seen |= set(range(int(low), int(high) + 1))
    cats = sorted(seen, key=float if numeric else str)
    where = {v: i for i, v in enumerate(cats)}
    spacing = tuple(float(v) for v in cats) if numeric else None
    return _Categories(tuple(where[v] for v in answers), len(cats), spacing)


def _detection(main: Sequence[JudgementRow]) -> list[ChanceTest]:
    defects = [row for row in main if not row.control]
    controls = [row for row in main if row.control and row.status == "ok"]
    if not defects or not any(row.control for row in main):
        return []
    false_positives = sum(not row.met for row in controls)
    pooled = detection_vs_controls(
        sum(map(detected, defects)), len(defects), false_positives, len(controls),
        name="planted detection",
    )  # fmt: skip
    # The pooled test decides wherever a perfect judge could pass; its power is shown.
    power = detection_power(len(defects), len(controls)) if pooled.testable else None
    tests = [dataclasses.replace(pooled, power=power)]
    for category in sorted({row.category for row in defects}):
        mine = [row for row in defects if row.category == category]
        test = detection_vs_controls(
            sum(map(detected, mine)), len(mine), false_positives, len(controls),
            name=f"planted detection: {category}",
        )  # fmt: skip
        tests.append(decide_by_power(test, detection_power(len(mine), len(controls))))
    return tests


def _scores(main: Sequence[JudgementRow], dimensions: Sequence[str]) -> list[ChanceTest]:
    controls = [row for row in main if row.control and row.status == "ok"]
    if not controls:
        return []
    targeted: dict[str, list[float]] = {}
    for row in main:
        if row.control or row.status != "ok":
            continue
        for dim in sorted({e.field for e in row.expect if e.op in LOWER} & set(dimensions)):
            value = number_of(row.verdict, dim)
            if value is not None:
                targeted.setdefault(dim, []).append(value)
    tests = []
    for dim, defects in sorted(targeted.items()):
        control_values = [v for row in controls if (v := number_of(row.verdict, dim)) is not None]
        test = scores_lower_on_defects(
            defects, control_values, name=f"scores: {dim} lower on defects"
        )
        # Right or wrong per item, the rank test is Fisher's: the detection power applies.
        tests.append(decide_by_power(test, detection_power(len(defects), len(control_values))))
    return tests


def _sme(
    main: Sequence[JudgementRow],
    labels: Sequence[SmeLabel],
    dimensions: Sequence[str],
    scales: Scales,
) -> list[ChanceTest]:
    dimension = sme_dimension(dimensions)
    pairs = judge_and_human(main, labels, dimension)
    judge = [j for j, _ in pairs.values()]
    human = [h for _, h in pairs.values()]
    # The expert's labels are a draw too (one person, once): a good judge agrees with them
    # less than with the truth, so the power that lets an SME test decide counts both draws.
    spearman = spearman_above_chance(judge, human, name=f"SME Spearman: {dimension}")
    tests = [decide_by_power(spearman, spearman_power(tuple(human), both_drawn=True))]
    if all_integers(judge + human):
        kappa = agreement_above_chance(judge, human, name=f"SME kappa: {dimension}")
        truth = _categories(human, numeric=True, scale=scales.get(dimension))
        power = agreement_power(
            truth.index, truth.k, quadratic=True, both_drawn=True, values=truth.values
        )
        tests.append(decide_by_power(kappa, power))
    return tests


def pairwise_test_name(category: str) -> str:
    return f"pairwise chance: {category}"


def _pairwise(main: Sequence[JudgementRow]) -> list[ChanceTest]:
    """Per set, the sign test of the report's pairwise section (right in both orders against
    wrong in both), testable by the set's size.

    The sign test counts only items decided alike in both orders, so a judge that names one
    position throughout decides none; that is the judge at chance, not a set too small to
    test: whether even a perfect judge could pass depends on the items, not on the judge.
    """
    tests = []
    for category, items in by_category(judged(main)).items():
        test = figures(category, items).chance
        perfect = test.chance ** len(items)  # every item right in both orders
        apart = f"{len(items) - test.n} of {len(items)} items not decided alike in both orders"
        tests.append(
            dataclasses.replace(
                test,
                name=pairwise_test_name(category),
                detail=f"{test.detail}; {apart}",
                testable=perfect < test.alpha,
            )
        )
    return tests


@dataclass(frozen=True)
class SetFacts:
    """What the chance tests need from a planted set, read from its files above `stats`
    (`judges.verdicts.inputs`): the items by id, the SME labels where this version is
    calibrated, and the reading list's grades and candidates."""

    items: Mapping[str, PlantedItem]
    sme_labels: Sequence[SmeLabel] | None = None  # None: this version is not calibrated
    reading_list_labels: Mapping[str, int] | None = None  # candidate id -> expert grade
    reading_list_candidates: Mapping[str, str] | None = None  # item id -> candidate id

    def item(self, item_id: str) -> PlantedItem:
        return self.items[item_id]

    @property
    def ranking(self) -> bool:
        return is_ranking_set(tuple(self.items.values()))


def is_ranking_set(items: Sequence[PlantedItem]) -> bool:
    """A set of graded documents per query: its fitness is ranking, not detection."""
    return bool(items) and all(
        {"query", "document"} <= set(item.inputs) and any(e.field == "level" for e in item.expect)
        for item in items
    )


def _ranking(main: Sequence[JudgementRow], facts: SetFacts) -> list[ChanceTest]:
    queries = queries_from_rows(main, facts)
    if not queries:
        return []
    values = [metrics["ndcg@10"] for metrics in per_query(queries)]
    draws = [
        draw_metrics(list(q.labels), q.labels, n_draws=N_DRAWS, seed=q.seed)["ndcg@10"]
        for q in queries
    ]
    random_value = float(np.mean([random_expectation(q.labels)["ndcg@10"] for q in queries]))
    return [
        ranking_above_random(
            values, np.mean(draws, axis=0), random_value, name="ranking: planted queries"
        )
    ]


def _reading_list(
    rows: Sequence[JudgementRow], labels: Mapping[str, int], candidate_of: Mapping[str, str]
) -> list[ChanceTest]:
    """Hard-negative AUC: the expert's cited candidates above the excluded ones.

    With every candidate ranked (a failed judgement last), a random ordering is a random
    split of the scores into cited and excluded: the Mann-Whitney test is its exact test.
    """
    scores = judge_scores([row for row in rows if row.run == READING_LIST_RUN], candidate_of)
    judged = [s for s in scores.values() if s is not None and s == s]
    last = min(judged, default=0.0) - 1.0  # a failed judgement ranks below every score
    value = {cid: last if s is None or s != s else float(s) for cid, s in scores.items()}
    cited = [value[cid] for cid, label in sorted(labels.items()) if label >= 1]
    excluded = [value[cid] for cid, label in sorted(labels.items()) if label == 0]
    test = scores_lower_on_defects(excluded, cited, name="ranking: reading list")
    detail = f"1 query, {len(cited)} cited vs {len(excluded)} excluded"
    return [dataclasses.replace(test, statistic="hard-negative AUC", detail=detail)]


def _fields(dimensions: Sequence[str], flag: str | None) -> list[tuple[str, bool]]:
    """(field, numeric): every dimension, and the flag as a nominal field."""
    return [(dim, True) for dim in dimensions] + ([(flag, False)] if flag else [])


def _read(row: JudgementRow, field: str, numeric: bool) -> float | str | None:
    if row.status != "ok":
        return None
    if numeric:
        return number_of(row.verdict, field)
    value = flag_of(row.verdict, field)
    return None if value is None else str(value)


def _uninformative(test: ChanceTest, why: str) -> ChanceTest:
    return dataclasses.replace(test, testable=False, detail=f"n={test.n}; {why}")


def _retest(
    rows: Sequence[JudgementRow], dimensions: Sequence[str], flag: str | None, scales: Scales
) -> list[ChanceTest]:
    main = {row.item_id: row for row in rows if row.run == "main"}
    # A retest of several draws: its first, as every statistic but the agreement gate reads.
    again = {row.item_id: row for row in rows if row.run == "retest" and row.repeat == 0}
    tests = []
    for field, numeric in _fields(dimensions, flag):
        pairs = [
            (a, b)
            for item in sorted(main.keys() & again.keys())
            if (a := _read(main[item], field, numeric)) is not None
            and (b := _read(again[item], field, numeric)) is not None
        ]
        first, second = [a for a, _ in pairs], [b for _, b in pairs]
        test = agreement_above_chance(
            first, second, name=f"test-retest: {field}",
            weights="quadratic" if numeric else "nominal",
        )  # fmt: skip
        if len(set(first) | set(second)) == 1:
            test = _uninformative(test, "one value in both runs: stable, but says nothing")
        elif test.testable:
            # A good judge's right answers: the main run's, or the retest's where main is
            # constant (a side that varies while the other does not is what fails).
            truth = first if len(set(first)) > 1 else second
            cats = _categories(truth, numeric, scales.get(field) if numeric else None)
            power = agreement_power(
                cats.index, cats.k, quadratic=numeric, both_drawn=True, values=cats.values
            )
            test = decide_by_power(test, power)
        tests.append(test)
    return tests


def _noise(
    rows: Sequence[JudgementRow], dimensions: Sequence[str], flag: str | None, scales: Scales
) -> list[ChanceTest]:
    by_item: dict[str, list[JudgementRow]] = {}
    for row in rows:
        if row.run == "noise":
            by_item.setdefault(row.item_id, []).append(row)
    tests = []
    for field, numeric in _fields(dimensions, flag):
        units = [
            [
                v
                for row in sorted(repeats, key=lambda r: r.repeat)
                if (v := _read(row, field, numeric)) is not None
            ]
            for _, repeats in sorted(by_item.items())
        ]
        test = repeats_agree_above_chance(
            units, name=f"noise: {field}", weights="quadratic" if numeric else "nominal"
        )
        if len({v for unit in units for v in unit}) == 1:
            test = _uninformative(test, "one value in every repeat: stable, but says nothing")
        elif test.testable:
            scale = scales.get(field) if numeric else None
            test = decide_by_power(test, _noise_power(units, numeric, scale))
        tests.append(test)
    return tests


def _noise_power(
    units: Sequence[Sequence[float | str]], numeric: bool, scale: tuple[float, float] | None
) -> float:
    """A good judge's chance to pass the noise test: each item's usual answer is right."""
    kept = [list(unit) for unit in units if len(unit) >= 2]
    cats = _categories([v for unit in kept for v in unit], numeric, scale)
    usual, start = [], 0
    for unit in kept:
        mine = cats.index[start : start + len(unit)]
        usual.append(max(sorted(set(mine)), key=mine.count))
        start += len(unit)
    sizes = tuple(len(unit) for unit in kept)
    return repeats_power(tuple(usual), sizes, cats.k, quadratic=numeric, values=cats.values)


def judge_fitness(
    rows: Sequence[JudgementRow],
    facts: SetFacts,
    *,
    dimensions: Sequence[str],
    flag: str | None = None,
    scales: Scales | None = None,
) -> Fitness:
    """Every chance test that applies to one judge, prompt version and model (its rows).

    scales: each dimension's (minimum, maximum) as its reply model states it
    (`JudgeSpec.score_scales`); a power figure takes a wrong answer to be any value of it.
    Without one, any value the run gave.
    """
    scales = scales or {}
    main = [row for row in rows if row.run == "main"]
    runs = {row.run for row in rows}
    tests = [*_detection(main), *_scores(main, dimensions)]
    if is_pairwise(main):
        tests += _pairwise(main)
    if facts.sme_labels and main:
        tests += _sme(main, facts.sme_labels, dimensions, scales)
    if facts.ranking and main:
        tests += _ranking(main, facts)
    labels, candidates = facts.reading_list_labels, facts.reading_list_candidates
    if READING_LIST_RUN in runs and labels is not None and candidates:
        tests += _reading_list(rows, labels, candidates)
    if "retest" in runs and main:
        tests += _retest(rows, dimensions, flag, scales)
    if "noise" in runs:
        tests += _noise(rows, dimensions, flag, scales)
    return collect(within_budget(tests))
