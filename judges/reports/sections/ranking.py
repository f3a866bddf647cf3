"""The ranking section's words: the judge as a ranker against a random ranking.

The figures come from `judges.stats.ranking.ranker` (through the report's model);
report.md, index.html, the terminal summary and the ranking test's message all read them from
here.
"""

from __future__ import annotations

from judges.reports.format import estimate, number, p_is
from judges.stats.ranking.ranker import MetricSummary, RankerSummary

__all__ = ["SHOWN", "metric_sentence", "ranker_lines"]

# Metrics the section names, in this order, with how a reader spells them.
SHOWN = {"ndcg@10": "nDCG@10", "hard_negative_auc": "hard-negative AUC", "mrr": "MRR"}


def metric_sentence(metric: MetricSummary) -> str:
    """`better than a random ranking (nDCG@10 0.71 [0.60, 0.80] n=7, random 0.52; p = ...)`."""
    name = SHOWN.get(metric.key, metric.key)
    j = metric.judge
    figure = f"{name} {estimate(j.value, j.low, j.high, j.n)}, random {number(metric.random)}"
    better = "better" if metric.better_than_random else "not better"
    return f"{better} than a random ranking ({figure}; {p_is(metric.p_value)})"


def ranker_lines(summary: RankerSummary) -> list[str]:
    """The section's lead and one line per metric shown."""
    head = (
        f"Ranked by its scores, tie-aware, over {summary.queries} queries ({summary.documents} "
        "documents), against a random ranking of the same documents:"
    )
    return [head, *(f"- {metric_sentence(summary.metrics[key])}" for key in SHOWN)]
