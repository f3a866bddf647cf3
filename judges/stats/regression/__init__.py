"""Is a run worse than the accepted baseline? Imports `estimates` and `reliability` only.

- `gates`: the regression gates of one run against a baseline run (detection, control false
  positives, scores, SME), each with the drop it can detect
- `reference`: the baseline as two draws (its main and retest runs): a gate fails only where
  the run is worse than both
- `family`: entry point: a version's gates as one family under Holm's correction
  (`version_regressions`)
- `comparison`: two prompt versions on the same items: flips, McNemar, per-dimension change
"""
