"""Numbers with their uncertainty: every figure a gate, a report or a command shows.

One subpackage per concern, bottom up; each imports only itself and those before it
(tests/test_layout.py holds it so):

- `estimates`: intervals (Wilson, bootstrap, McNemar), resampling, the paired one-sided
  tests, rows to paired values, floors, the power formulas, the corrected pass rate;
- `reliability`: agreement coefficients, noise floor, test-retest, panel, SME calibration,
  label stability, bias probes, and the gates over them;
- `ranking`: tie-aware ranking metrics, random rankings, the judge as a ranker, the
  reading list;
- `regression`: a run against the accepted baseline, and two prompt versions compared;
- `planning`: what a set can detect, simulated gates, the items a drop needs (`plan`);
- `fitness`: is a judge better than chance at what its set measures (the verdict's NOT FIT).
"""
