"""The judge as a ranker; imports `judges.stats.estimates` only.

- `metrics`: tie-aware nDCG, recall, MRR, MAP, hard-negative AUC (the scalar reference)
- `metrics_matrix`: the same metrics for a matrix of rankings at once (numpy)
- `random_draws`: metrics of many seeded random rankings, as arrays
- `ranker`: entry point for planted queries: per query, against the exact random expectation
- `reading_list`: entry point for the expert's reading list, beside citations and chance
"""

# The public import (docs/layout.md), kept stable: `from judges.stats.ranking import ndcg_at_k`.
from judges.stats.ranking.metrics import *  # noqa: F403
from judges.stats.ranking.metrics import __all__  # noqa: F401
