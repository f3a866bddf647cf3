"""The first screen of report.md and index.html: the verdict's reasons (at most five, then
"and N more") and the table of the figures that decide it. Both read one `FirstScreen`."""

from __future__ import annotations

from collections.abc import Mapping

from judges.core.quoting import md_prose
from judges.reports.model.summary import FirstScreen
from judges.reports.render.charts import esc

__all__ = ["FIGURES_HEAD", "fingerprint_rows", "first_screen_html", "first_screen_md"]

FIGURES_HEAD = ("Deciding figure", "Value [95%]", "n", "Against", "Reads")


def _cell(text: str) -> str:
    """A figure's cell: the harness's words around a model's name, which may hold markup."""
    return " ".join(md_prose(text).split()).replace("|", "\\|")


def _rows(screen: FirstScreen) -> list[list[str]]:
    several = len({f.model for f in screen.figures}) > 1
    return [
        [f"{f.model}: {f.title()}" if several else f.title(), f.value, str(f.n), f.against, f.reads]
        for f in screen.figures
    ]


def first_screen_md(screen: FirstScreen) -> list[str]:
    # The reasons and the warning are the harness's sentences, naming models and sets.
    lines = [f"**Warning: {md_prose(screen.warning)}.**", ""] if screen.warning else []
    lines += ["Why:", "", *(f"- {md_prose(reason)}" for reason in screen.shown_reasons()), ""]
    if screen.figures:
        lines += [
            "| " + " | ".join(FIGURES_HEAD) + " |",
            "|" + "---|" * len(FIGURES_HEAD),
            *("| " + " | ".join(_cell(c) for c in row) + " |" for row in _rows(screen)),
            "",
        ]
    return lines


def first_screen_html(screen: FirstScreen) -> str:
    reasons = "".join(f"<li>{esc(reason)}</li>" for reason in screen.shown_reasons())
    table = ""
    if screen.figures:
        head = "".join(f"<th>{esc(h)}</th>" for h in FIGURES_HEAD)
        body = "".join(
            "<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in row) + "</tr>"
            for row in _rows(screen)
        )
        table = f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    return f'<div class="card first"><h3>Why</h3><ul>{reasons}</ul>{table}</div>'


def fingerprint_rows(fingerprints: Mapping[str, tuple[str, ...]]) -> list[tuple[str, str]]:
    """(runs, fingerprint): runs judged by one and the same judge share one row."""
    by_judge: dict[str, list[str]] = {}
    for run, found in fingerprints.items():
        by_judge.setdefault("; ".join(found), []).append(run)
    rows = []
    for judge, runs in by_judge.items():
        label = ", ".join(runs)
        if len(runs) > 1 and len(runs) == len(fingerprints):
            label = f"all {len(runs)} runs: {label}"
        rows.append((label, judge))
    return rows
