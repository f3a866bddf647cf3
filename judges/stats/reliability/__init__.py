"""Is the judge consistent: with itself, with other judges, with humans, under edits?

Imports `judges.stats.estimates` only. Entry point: `gates.evaluate_reliability` (and
`gates` re-exports each analysis's result types).

- `agreement`: exact/adjacent agreement, Spearman, Kendall, weighted kappa, alpha
- `noise`: noise floor (repeats) and test-retest (two runs)
- `panel`: the cross-check panel
- `calibration`: the judge against SME labels
- `label_stability`: does each categorical label survive another draw?
- `probes`: bias-probe flip rates against the noise floor; majority-vote repeats
- `gates`: the floors of gates.toml applied to all of the above
"""

# The public import (docs/layout.md), kept stable: `from judges.stats.reliability import ...`.
from judges.stats.reliability.gates import *  # noqa: F403
from judges.stats.reliability.gates import __all__  # noqa: F401
