"""The report model: rows -> data, no rendering; imports `reports.sections`, never a renderer.

- `build`: entry point: `build_report`, a folder's report from its merged rows
- `data`: the report as data (`FolderReport`, `ModelReport`, `Failure` ...)
- `folders`: results.jsonl of a reports folder: a session's rows merged over the disk
- `metadata`: run metadata, kept out of committed files (.run.json)
- `snapshots`: the per-item verdict table syrupy guards
- `summary`: the first screen: the verdict's reasons, deciding figures, the baseline warning
"""
