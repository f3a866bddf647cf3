"""What people read: `reports/<judge>/<version>/`, rebuilt from its results.jsonl.

A base module, three subpackages and two entry modules, bottom up; each imports only
itself and those before it (tests/test_layout.py holds it so). Data flows one way: every
figure shown is computed in `judges.verdicts` or below, and `reports` imports only result
types from `judges.stats`, no function (tests/test_layout.py holds that too).

- `format`: every figure a reader sees (p-value, rate, interval, n), formatted once;
- (the verdict words and the chance-test readings are `judges.verdicts.vocabulary`'s);
- `sections`: each section's text from its own figures (probes, pairwise, reading list,
  regressions, estimate ...);
- `model`: rows -> the report model (`build.build_report`; `data`: the model, no
  rendering), the results files of a folder (`folders`), run metadata, the snapshot table;
- `render`: the model -> files: `markdown`, `html` (+ `charts`, `failures_html`, `fitness`),
  `github`, and `files` (every file of a folder by name);
- `write`: build once, then write changed bytes or check them (`--check-reports`);
- `terminal`: the terminal summary lines.
"""
