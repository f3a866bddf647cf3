"""Estimates and the tests every other concern builds on; imports no other `stats` package.

- `intervals`: `Rate` (Wilson), `Estimate` (bootstrap), `McNemar`; `wilson`, `bootstrap_mean`
- `resample`: the shared bootstrap index matrices and input checks
- `paired_tests`: the one-sided paired tests ("the new run is worse"), mid-p
- `power`: the smallest drop a paired gate detects, and the items a drop needs
- `pairing`: result rows to paired values, every exclusion counted
- `floors`: `Gate`; detection and control false-positive rates against gates.toml floors
- `prevalence`: the pass rate corrected for a judge's TPR and TNR (`estimate`)
- `memo`: statistics computed once per run, shared by tests and reports
"""
