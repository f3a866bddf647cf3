"""The finale tier: promote qualifier finalists per stratum, judge them with G-Eval, report.

The qualifier metric (ROUGE-L against a reference) picks the finalists; the `geval` judge
scores every (finalist, episode) on four dimensions; a cross-check judge re-scores the top
finalists of each stratum so that judge-specific bias shows up as a `contested` flag.

Data flows one way: config (inputs) -> promotion -> plan (promotion.json, call slots) ->
report (finalists.jsonl, report data) -> markdown -> run (judging) -> cassettes -> cli.
All artifacts are byte-identical between runs over the same replies, apart from the
run-metadata block of the two reports.
"""
