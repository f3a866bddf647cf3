"""The report model -> text; imports `reports.model` and `reports.sections`. The markdown and
HTML renderers never import each other.

- `files`: entry point: every file of a report folder, by name
- `markdown`: report.md, failures.md, comparison.md
- `html`: index.html, one self-contained page; `charts` (inline SVG), `failures_html`,
  `fitness` (the fitness section, also in report.md)
- `github`: GitHub Actions step summary and `::error` annotations
"""
