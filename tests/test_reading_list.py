"""The reading list: loading (hostile files), its candidates as judged items, and the judge
scored as a ranker next to citation counts and chance, with gates that fail bad judges."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import roc_auc_score

from judges.core.results import JudgementRow
from judges.core.spec import load_catalog
from judges.sets.items import PlantedSetError
from judges.sets.planted import load_planted_set
from judges.sets.reading_list import TIERS, load_reading_list, reading_list_items
from judges.stats.ranking.reading_list import (
    SHOWN,
    bootstrap_over_candidates,
    evaluate_reading_list,
    evaluate_scores,
    gate_failures,
    judge_scores,
)

REAL = Path(__file__).parent.parent / "planted_sets" / "relevance" / "reading_list.json"


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "reading_list.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def good() -> dict[str, Any]:
    return json.loads(REAL.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda d: d["candidates"][3].update(label=5), "candidates.3.label"),
        (lambda d: d["candidates"][3].update(label="3"), "candidates.3.label"),
        (lambda d: d["candidates"][4].pop("citations"), "candidates.4.citations"),
        (lambda d: d["candidates"].append(dict(d["candidates"][0])), "appears twice"),
        (lambda d: d.update(criteria=[]), "criteria"),
        (lambda d: d.update(extra=1), "extra"),
    ],
)
def test_a_bad_reading_list_names_file_and_field(tmp_path: Path, change, where: str) -> None:
    data = good()
    change(data)
    with pytest.raises(PlantedSetError) as error:
        load_reading_list(write(tmp_path, data))
    assert str(tmp_path) in str(error.value) and where in str(error.value)


def test_unreadable_json_is_an_error_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(PlantedSetError, match="not a readable JSON file"):
        load_reading_list(write(tmp_path, "{not json"))


def test_every_candidate_becomes_one_item_with_its_tier() -> None:
    reading_list = load_reading_list(REAL)
    items = reading_list_items(reading_list, "relevance")
    assert len(items) == len(reading_list.candidates) == 40
    assert [item.id for item in items[:2]] == ["RD-01", "RD-02"]
    for item, candidate in zip(items, reading_list.candidates, strict=True):
        assert item.category == TIERS[candidate.label]
        assert item.inputs["document"]["id"] == candidate.id
        load_catalog()["relevance"].parse_inputs(item.inputs)


def test_the_relevance_set_loads_the_reading_list_as_items() -> None:
    spec = load_catalog()["relevance"]
    planted = load_planted_set(REAL.parent.parent, spec)
    assert (
        planted.run_versions("reading_list") == ("1.0", "1.1") and len(planted.reading_list) == 40
    )
    assert planted.item("RD-07").inputs["document"]["id"] == "rl-cand-07"


def test_a_criteria_list_the_judge_refuses_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "relevance"
    folder.mkdir()
    for name in ("items.jsonl", "set.toml"):
        (folder / name).write_text((REAL.parent / name).read_text(encoding="utf-8"))
    data = good()
    data["criteria"] = [{"name": "a b", "weight": 0.5}, {"name": "A_B", "weight": 0.5}]
    (folder / "reading_list.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(PlantedSetError, match="does not fit the inputs of relevance"):
        load_planted_set(tmp_path, load_catalog()["relevance"])


# --------------------------------------------------------------------------- as a ranker

LIST = load_reading_list(REAL)
LABELS = LIST.labels
CITATIONS = {c.id: c.citations for c in LIST.candidates}


def result_for(scores: dict[str, float | None], n_resamples: int = 200):
    return evaluate_reading_list(LIST.query, LABELS, CITATIONS, scores, n_resamples=n_resamples)


def test_a_judge_that_agrees_with_the_expert_separates_cited_from_excluded() -> None:
    result = result_for({c: float(label) for c, label in LABELS.items()})
    auc = result.ranker("judge").metrics["hard_negative_auc"]
    assert auc.value == 1.0 and auc.n == 40 and auc.low <= 1.0
    assert result.headline().split("? ")[1].startswith("Yes")
    assert (result.n_cited, result.n_excluded, result.n_failed) == (30, 10, 0)


def test_the_auc_matches_sklearn_on_random_judges() -> None:
    rng = random.Random(5)
    for _ in range(20):
        scores = {c: rng.random() for c in LABELS}
        auc = evaluate_scores(scores, LABELS)["hard_negative_auc"]
        ids = sorted(LABELS)
        expected = roc_auc_score([LABELS[c] >= 1 for c in ids], [scores[c] for c in ids])
        assert auc == pytest.approx(expected)


def test_citation_counts_are_fooled_by_well_cited_hard_negatives() -> None:
    result = result_for(dict.fromkeys(LABELS, 1.0))
    citations = result.ranker("citations").metrics["hard_negative_auc"]
    chance = result.ranker("random").metrics["hard_negative_auc"]
    assert citations.high < 0.5 < chance.high and abs(chance.value - 0.5) < 0.03


def test_a_reversed_judge_is_called_wrong_way_round() -> None:
    result = result_for({c: -float(label) for c, label in LABELS.items()})
    assert "wrong way round" in result.headline()


@pytest.mark.parametrize(
    "judge",
    [
        lambda rng: dict.fromkeys(LABELS, 0.5),  # constant
        lambda rng: {c: rng.random() for c in LABELS},  # random
        lambda rng: dict.fromkeys(LABELS, 1.0),  # rates everything relevant
        lambda rng: {c: -float(v) for c, v in LABELS.items()},  # reversed
        lambda rng: dict.fromkeys(LABELS),  # every judgement failed
    ],
    ids=["constant", "random", "agrees-with-everything", "reversed", "all-failed"],
)
def test_gates_set_at_a_good_judge_fail_bad_judges(judge) -> None:
    good_judge = evaluate_scores({c: float(v) for c, v in LABELS.items()}, LABELS)
    thresholds = {key: round(good_judge[key] - 0.05, 2) for key in SHOWN}
    failed = gate_failures(result_for(judge(random.Random(0)), n_resamples=20), thresholds)
    assert {"hard_negative_auc", "ndcg@10"} <= set(failed)


def test_unknown_gate_metrics_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown metric"):
        gate_failures(result_for(dict.fromkeys(LABELS, 1.0)), {"ndcg@5": 0.5})


def _row(item_id: str, status: str = "ok", score: float | None = 0.5) -> JudgementRow:
    return JudgementRow(
        judge="relevance", prompt_version="1.0", prompt_hash="h", model="local:m",
        item_id=item_id, category="relevant", control=False, run="reading_list",
        status=status, verdict={"score": score} if status == "ok" else None,
        error=None if status == "ok" else "boom",
    )  # fmt: skip


def test_judge_scores_keep_failures_and_refuse_gaps_and_doubles() -> None:
    candidate_of = {"RD-01": "a", "RD-02": "b"}
    scores = judge_scores([_row("RD-01"), _row("RD-02", "unparseable")], candidate_of)
    assert scores == {"a": 0.5, "b": None}
    with pytest.raises(ValueError, match="without a judgement: \\['b'\\]"):
        judge_scores([_row("RD-01")], candidate_of)
    with pytest.raises(ValueError, match="judged twice"):
        judge_scores([_row("RD-01"), _row("RD-01"), _row("RD-02")], candidate_of)


def test_the_report_section_answers_the_question_with_every_ranker() -> None:
    from judges.reports.sections import reading_list as section
    from judges.reports.sections.reading_list import reading_list_md

    # The section spells every metric the statistics compute, in their order.
    assert tuple(section.SHOWN) == SHOWN

    result = result_for({c: float(v) for c, v in LABELS.items()}, n_resamples=20)
    text = "\n".join(reading_list_md(result, "relevance 1.0 on local:m"))
    assert result.headline() in text and "n = 40 candidates (30 cited" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "[" in line]
    assert [row.split(" | ")[0] for row in rows] == [
        "| relevance 1.0 on local:m",
        "| citation counts",
        "| random order",
    ]
    assert all(row.count("[") == len(SHOWN) for row in rows)
    assert "| Ranker | nDCG@10 | essential nDCG@10 | Recall@10 (grade >= 3) | MRR | MAP | " in text


def test_the_number_of_resamples_asked_for_is_the_number_drawn() -> None:
    scores = {c: float(label) + 0.1 * (i % 3) for i, (c, label) in enumerate(LABELS.items())}
    result = result_for(scores, n_resamples=20)
    assert result.ranker("judge").metrics == bootstrap_over_candidates(
        scores, LABELS, n_resamples=20
    )
    assert result.ranker("judge").metrics != bootstrap_over_candidates(scores, LABELS)
