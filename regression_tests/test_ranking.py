"""The relevance judge as a ranker, and the reading-list baselines.

Per query, the planted documents are ranked by the judge's weighted score (replayed from
the main run) and scored against their expected levels; a seeded random ranking is the
baseline. Metrics come from the output order and the labels only.
"""

import json
import random

from judges.core.checks import assert_accounted
from judges.sets.reading_list import evaluate_run
from judges.stats.ranking import (
    LEVEL_TO_LABEL,
    evaluate_ranking,
    lower_bound_corrected_ndcg,
    mean_metrics,
    popularity_ranking,
    random_baseline,
    rank_by_score,
)
from judges.stats.reading_list import gate_failures


def _per_query(rows, planted):
    """Metrics per query: judge ranking, random baseline, asta-bench's corrected nDCG."""
    by_query: dict[str, dict[str, tuple[float | None, int, int | None]]] = {}
    for row in rows:
        item = planted.item(row.item_id)
        expected = next(e.value for e in item.expect if e.field == "level")
        verdict = row.verdict or {}
        score = verdict.get("score") if row.status == "ok" else None
        doc = item.inputs["document"]["id"]
        by_query.setdefault(item.inputs["query"], {})[doc] = (score, expected, verdict.get("level"))
    judge, baseline, corrected = [], [], []
    for docs in by_query.values():
        labels = {doc: LEVEL_TO_LABEL[expected] for doc, (_, expected, _) in docs.items()}
        ranking = rank_by_score({doc: score for doc, (score, _, _) in docs.items()})
        judge.append(evaluate_ranking(ranking, labels))
        baseline.append(random_baseline(sorted(docs), labels, n_draws=200, seed=0))
        # asta-bench ranks by the judge's own levels; failed judgements count as level 0.
        corrected.append(
            {"lbc_ndcg": lower_bound_corrected_ndcg([docs[d][2] or 0 for d in ranking])}
        )
    return judge, baseline, corrected, sum(len(d) for d in by_query.values())


def test_relevance_judge_as_ranker(ranking_set, judge_runner, judges_session):
    gate_set = ranking_set
    planted = judges_session.planted_sets[gate_set.judge]
    rows = judge_runner.replay_set(gate_set)
    judge, baseline, corrected, n_ranked = _per_query(rows, planted)
    # Every planted document is ranked, judged or not: nothing is silently dropped.
    assert n_ranked == len(planted.items)
    metrics = mean_metrics(judge) | mean_metrics(corrected)
    random_metrics = mean_metrics(baseline)
    assert all(0.0 <= value <= 1.0 for value in metrics.values())
    # The order in which judgements arrive (or were cached) must not matter.
    shuffled = list(rows)
    random.Random(7).shuffle(shuffled)
    again, _, again_corrected, _ = _per_query(shuffled, planted)
    assert mean_metrics(again) | mean_metrics(again_corrected) == metrics
    print(f"judge ranking over {len(judge)} queries: {metrics}")
    print(f"random baseline: {random_metrics}")
    gates = judge_runner.gates(gate_set)
    thresholds = gates.ranking if gates is not None else {}
    failed = {k: (metrics[k], v) for k, v in thresholds.items() if metrics[k] < v}
    assert not failed, f"ranking below its gates (value, threshold): {failed}"


def test_reading_list_baselines(judges_session):
    """A citation counter is fooled by expert-excluded, well-cited hard negatives."""
    path = judges_session.settings.planted_sets / "relevance" / "reading_list.json"
    reading_list = json.loads(path.read_text(encoding="utf-8"))
    candidates = reading_list["candidates"]
    labels = {c["id"]: c["label"] for c in candidates}
    popularity = evaluate_ranking(
        popularity_ranking({c["id"]: c["citations"] for c in candidates}), labels
    )
    chance = random_baseline(sorted(labels), labels, n_draws=500, seed=0)
    perfect = evaluate_ranking(sorted(labels, key=lambda c: (-labels[c], c)), labels)
    print(f"popularity: {popularity}\nrandom: {chance}")
    assert len(candidates) >= 30 and sum(label == 0 for label in labels.values()) >= 8
    assert abs(chance["hard_negative_auc"] - 0.5) < 0.05
    assert popularity["hard_negative_auc"] < chance["hard_negative_auc"]
    assert all(value == 1.0 for key, value in perfect.items() if key != "recall@10")


def test_reading_list_item(reading_list_case, judge_runner):
    """One reading-list candidate judged: a verdict or an explained error, scored as a ranking."""
    assert_accounted(judge_runner.judge(reading_list_case, run="reading_list"), 1)


def test_reading_list_judged(reading_list_set, judge_runner, judges_session):
    """The judge ranks the expert's reading list, next to citation counts and chance."""
    planted = judges_session.planted_sets[reading_list_set.judge]
    rows = judge_runner.replay_set(reading_list_set, run="reading_list")
    result = evaluate_run(rows, planted)
    # Every candidate is ranked, judged or not: nothing is silently dropped.
    assert result.n_candidates == len(planted.reading_list) == len(rows)
    print(result.headline())
    gates = judge_runner.gates(reading_list_set)
    failed = gate_failures(result, gates.reading_list if gates is not None else {})
    assert not failed, f"reading list below its gates (value, threshold): {failed}"
