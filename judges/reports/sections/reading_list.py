"""The reading-list section of a report: the judge next to citation counts and chance."""

from __future__ import annotations

from judges.stats.ranking.reading_list import ReadingListResult

# Each metric as a reader spells it, in the table's order.
SHOWN = {
    "ndcg@10": "nDCG@10",
    "essential_ndcg@10": "essential nDCG@10",
    "recall@10": "Recall@10 (grade >= 3)",
    "mrr": "MRR",
    "map": "MAP",
    "hard_negative_auc": "hard-negative AUC",
}


def _cell(estimate: object) -> str:
    value, low, high = (getattr(estimate, k) for k in ("value", "low", "high"))
    return f"{value:.2f} [{low:.2f}, {high:.2f}]"


def reading_list_md(result: ReadingListResult, judge_label: str) -> list[str]:
    """Markdown lines: the headline sentence, then one row per ranker with intervals."""
    head = "| Ranker | " + " | ".join(SHOWN.values()) + " |"
    lines = [
        f"### Reading list (run `reading_list`: 1 query, {result.n_candidates} candidates)",
        "",
        result.headline(),
        "",
        head,
        "|" + "---|" * (len(SHOWN) + 1),
    ]
    names = {"judge": judge_label, "citations": "citation counts", "random": "random order"}
    for ranker in result.rankers:
        cells = " | ".join(_cell(ranker.metrics[key]) for key in SHOWN)
        lines.append(f"| {names.get(ranker.name, ranker.name)} | {cells} |")
    lines += [
        "",
        f"n = {result.n_candidates} candidates ({result.n_cited} cited by the expert, "
        f"{result.n_excluded} excluded), 1 query; {result.n_failed} judgements failed (ranked "
        "last, never dropped). Intervals: 95% percentile bootstrap over the candidates (with "
        "one query no interval over queries exists); for the random order, the central 95% "
        "of seeded random orderings. Recall@10 and MRR count grade >= 3 as relevant; the AUC "
        "counts grade >= 1 as cited and grade 0 as excluded.",
        "",
    ]
    return lines
