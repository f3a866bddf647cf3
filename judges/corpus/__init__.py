"""The judge in use: the outputs of several systems on the same items, judged by one or more
judges, summarised per system with intervals that respect the design (items are shared by
systems), ranked, compared across judges, and combined with a few gold labels by
prediction-powered inference.

Bottom up: `manifest` and `rows` (the documented format), `table` (rows -> arrays),
`estimates`, `change`, `ppi`, `human_agreement` and `published` (pure statistics),
`review_queue`, `report` (the report as data), `markdown` and `html` (the report as text),
`alpaca_eval` (a reader of one released benchmark into the format) and `importers` (readers
of other tools' logs: JSONL/CSV, Inspect, promptfoo, MLflow, OpenTelemetry).
"""
