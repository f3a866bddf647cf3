"""A session computes each shared statistic once: the same inputs, however they were read,
give the same key; different inputs never share a result."""

from __future__ import annotations

import json
from pathlib import Path

from judges.sets.reading_list import load_reading_list
from judges.stats.estimates.memo import Memo, once
from judges.stats.ranking.ranker import Query, summarise
from judges.stats.ranking.reading_list import evaluate_reading_list

REAL = Path(__file__).parent.parent / "planted_sets" / "relevance" / "reading_list.json"
LIST = load_reading_list(REAL)
CITATIONS = {c.id: c.citations for c in LIST.candidates}


def test_a_result_is_computed_once_per_key() -> None:
    memo, calls = Memo(), []
    first = memo.get("a", lambda: calls.append(1) or [1])
    assert memo.get("a", lambda: calls.append(2) or [2]) is first
    assert memo.get("b", lambda: [3]) == [3]
    assert (calls, memo.computed, memo.reused) == ([1], 2, 1)
    assert once(None, "a", lambda: "no memo: computed") == "no memo: computed"


def test_the_reading_list_is_shared_when_the_scores_are_equal_however_read() -> None:
    scores = {c: 0.1 * (i % 7) or None for i, c in enumerate(sorted(LIST.labels))}
    # As a report reads them: back from JSON text, in another order.
    read_back = dict(reversed(json.loads(json.dumps(scores)).items()))
    memo = Memo()
    args = (LIST.query, LIST.labels, CITATIONS)
    first = evaluate_reading_list(*args, scores, n_resamples=30, memo=memo)
    again = evaluate_reading_list(*args, read_back, n_resamples=30, memo=memo)
    assert again is first and (memo.computed, memo.reused) == (1, 1)
    assert first == evaluate_reading_list(*args, scores, n_resamples=30)  # same figures bare
    changed = dict(scores, **{sorted(scores)[0]: 0.99})
    other = evaluate_reading_list(*args, changed, n_resamples=30, memo=memo)
    assert other is not first and memo.computed == 2
    evaluate_reading_list(*args, scores, n_resamples=31, memo=memo)
    assert memo.computed == 3


def test_the_ranker_summary_is_shared_for_equal_queries() -> None:
    def queries(score: float) -> list[Query]:
        return [Query("q", {"a": score, "b": 0.2}, {"a": 4, "b": 0}, {"a": 3, "b": 0})]

    memo = Memo()
    first = summarise(queries(0.9), n_draws=50, memo=memo)
    assert summarise(queries(0.9), n_draws=50, memo=memo) is first
    assert summarise(queries(0.1), n_draws=50, memo=memo) is not first
    assert (memo.computed, memo.reused) == (2, 1)
