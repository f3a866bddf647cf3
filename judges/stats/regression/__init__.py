"""Is a run worse than the accepted baseline? Imports `estimates` and `reliability` only.

- `gates`: entry point: the regression gates of one run against the baseline run
  (detection, control false positives, scores, SME), each with the drop it can detect, one
  family per version under Holm's correction (`version_regressions`)
- `reference`: the baseline as two draws (its main and retest runs), for the gates above
- `comparison`: two prompt versions on the same items: flips, McNemar, per-dimension change
"""
