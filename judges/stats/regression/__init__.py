"""Is a run worse than the accepted baseline? Imports `estimates` and `reliability` only.

- `gates`: entry point: the regression gates of one run against the baseline run
  (detection, control false positives, scores, SME), each with the drop it can detect
- `comparison`: two prompt versions on the same items: flips, McNemar, per-dimension change
"""
