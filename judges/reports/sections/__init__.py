"""A report's inputs and sections, each from its own data; imports no other `reports` package.

- `sources`: the judge's spec, planted set and SME labels a report needs besides its rows
- `prose`: report prose written once in Markdown, shown in HTML
- one module per section, its text from figures computed below: `coercions`, `estimate`, `fitness`
  (the chance tests; rendered by `render.fitness`), `label_stability`, `leaderboard`,
  `pairwise`, `probes`, `reading_list`, `regressions`
"""
