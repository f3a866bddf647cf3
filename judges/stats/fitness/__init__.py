"""Fitness: is the judge better than chance at what its set measures? The top concern: it
may import every other `stats` package, and none imports it.

- `judge`: entry point: `judge_fitness` (every chance test of a judge, version and model)
  and `accepted_not_fit`
- `chance`: `ChanceTest`, `Fitness`; detection vs controls, accuracy vs chance, defect scores
  below control scores (exact and rank tests)
- `permutation`: permutation tests of agreement, rank correlation, ranking and repeats
- `power`: how often a judge right 90% of the time passes each test: which tests decide
- `pairwise`: pairwise judges' figures (accuracy per order, positional agreement) and their
  chance test
- `published`: a release's published figures beside those recomputed from its rows
- `evaluator`: a judge model's evaluator-leaderboard figures on a set (agreement, position,
  length and list bias with their tests, parsed replies, price and time)
- `leaderboard`: every model per set ranked by agreement, exact McNemar between neighbours
"""
