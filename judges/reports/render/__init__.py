"""The report model -> text; imports `reports.model` and `reports.sections`. The markdown and
HTML renderers never import each other.

- `files`: entry point: every file of a report folder, by name
- `markdown`: report.md and comparison.md; `failures_md`: failures.md
- `html`: index.html, one self-contained page; `charts` (inline SVG), `failures_html`,
  `fitness` (the fitness section, also in report.md)
- `first_screen`: the reasons and deciding figures that open report.md and index.html
- `overview`: reports/index.html, every judge, prompt version and model on one page
- `github`: GitHub Actions step summary and `::error` annotations
"""
