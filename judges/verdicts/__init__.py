"""One verdict per judge, prompt version and model, computed once and read by every consumer.

Between `stats` (numbers) and `reports` (words): `build.build_verdict` composes a model's
fitness, floors, regression family, bias probes and completeness from its rows and the
set's inputs (`inputs.Sources`, every file read once here); the pytest suite asserts on the
result, the report renders it (`judges.reports.model.data.ModelReport` is a `ModelVerdict`
with what a reader sees beside it) and `python -m judges baseline` accepts from it
(`acceptance`). The figures a report shows beside a verdict are computed here too
(`figures`, `pairwise`, `estimate`), so the reports only word them. Imports nothing above
`stats` and `sets`: no report, no pytest.
"""
