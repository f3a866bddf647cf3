"""The report says plainly whether a judge ranks better than random, and counts coercions."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

from judges.core.results import read_jsonl, write_jsonl
from judges.core.spec import load_catalog
from judges.reports.write import rebuild_reports

REPO = Path(__file__).parent.parent
PLANTED = REPO / "planted_sets"
RECORDED = REPO / "reports" / "relevance" / "1.0" / "results.jsonl"


def build(tmp_path: Path, judge: str, rows: list, coerce: bool = False) -> tuple[str, dict]:
    folder = tmp_path / "reports" / judge / "1.0"
    folder.mkdir(parents=True)
    write_jsonl(folder / "results.jsonl", rows)
    catalog = dict(load_catalog())
    spec = catalog[judge]
    catalog[judge] = dataclasses.replace(
        spec, config=spec.config.model_copy(update={"coerce": coerce})
    )
    rebuild_reports(tmp_path / "reports", PLANTED, judge, catalog=catalog)
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return (folder / "report.md").read_text(encoding="utf-8"), report["models"][0]


def test_the_recorded_relevance_judge_is_reported_as_no_better_than_random(
    tmp_path: Path,
) -> None:
    markdown, model = build(tmp_path, "relevance", read_jsonl(RECORDED))
    assert "### As a ranker" in markdown
    assert "- not better than a random ranking (hard-negative AUC 0.59 [" in markdown
    assert "random 0.50; p = " in markdown
    auc = next(m for m in model["ranking"]["metrics"] if m["metric"] == "hard_negative_auc")
    assert (auc["random"], auc["better_than_random"], auc["n"]) == (0.5, False, 17)
    assert "coercions" not in model  # a strict judge has no coercion line


def test_a_judge_that_orders_by_gold_level_is_reported_as_better(tmp_path: Path) -> None:
    # The ranking is over the planted items' main run (probes and the reading list aside).
    rows = [row for row in read_jsonl(RECORDED) if row.run == "main"]
    gold = {3: 0.95, 2: 0.7, 1: 0.4, 0: 0.1}
    for row in rows:
        level = next(e.value for e in row.expect if e.field == "level")
        row.verdict = {**(row.verdict or {}), "score": gold[level]}
        row.status = "ok"
    markdown, _ = build(tmp_path, "relevance", rows)
    assert "- better than a random ranking (hard-negative AUC 1.00 [1.00, 1.00] n=17" in markdown


def test_other_judges_have_no_ranking_section(tmp_path: Path) -> None:
    source = REPO / "reports" / "geval" / "1.0" / "results.jsonl"
    markdown, model = build(tmp_path, "geval", read_jsonl(source))
    assert "As a ranker" not in markdown and "ranking" not in model


def test_lenient_coercions_are_counted_on_their_own_line(tmp_path: Path) -> None:
    rows = read_jsonl(REPO / "reports" / "geval" / "1.0" / "results.jsonl")
    main = [row for row in rows if row.run == "main"]
    main[0].coerced = ["coverage.score: '4' -> 4", "fluency.score: 2.0 -> 2"]
    main[1].coerced = ["coverage.score: '3' -> 3"]
    markdown, model = build(tmp_path, "geval", rows, coerce=True)
    line = f"Lenient parsing (coerce = true): 2/{len(main)} judgements needed a conversion, "
    assert f"- {line}" in markdown
    assert "(coverage.score 2, fluency.score 1)" in model["coercions"]
    shutil.rmtree(tmp_path / "reports")
    _, strict = build(tmp_path, "geval", rows, coerce=False)
    assert "2/" in strict["coercions"]  # coerced rows are counted even if coerce was removed
