"""reports/index.html: every judge, prompt version and model on one page.

Rendered from the report.json of every folder (the ones this run wrote, the others as they
are on disk), so it is a pure function of committed files: byte-identical whichever
process or worker count wrote them. No script, like every page here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from judges.reports.render.charts import esc
from judges.verdicts.vocabulary import PASS, WORDS, YELLOW, colour_rules

__all__ = ["render_overview", "version_key"]

MAX_REASONS = 5

_CSS = (
    """
*{box-sizing:border-box}
body{margin:0;background:#f6f7f9;color:#1d232a;font:13px/1.35 system-ui,-apple-system,
"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{padding:12px 16px}
h1{font-size:20px;margin:0 0 4px}
p{margin:0 0 8px}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #d0d7de}
th,td{border-bottom:1px solid #e3e7eb;padding:3px 8px;text-align:left;vertical-align:top}
th{color:#57606a;font-weight:600;background:#f6f8fa}
table.all td,table.all th{white-space:nowrap;font-size:12px}
td.cut{max-width:370px;overflow:hidden;text-overflow:ellipsis}
h2{font-size:15px;margin:16px 0 4px}
ul{margin:0 0 6px;padding-left:20px}
.w{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:700;border:1px solid}
"""
    + colour_rules(".w", YELLOW)
    + """.warn{color:#a40e26;font-weight:600}td.warn{font-weight:400}
.small{color:#57606a;font-size:12px}
"""
)


def version_key(version: str) -> tuple[tuple[int, int | str], ...]:
    """0.3 before 0.3.1 before 0.10: numbers as numbers."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in version.split("."))


def _per_thousand(usage: Sequence[Mapping[str, Any]], model: str) -> str:
    """Cost per 1,000 judgements where tokens were counted; time is not kept (see caption)."""
    mine = [u for u in usage if u["model"] == model]
    rows = sum(u["rows"] for u in mine)
    tokens = sum(u["input_tokens"] + u["output_tokens"] for u in mine)
    if not rows or not tokens:
        return "unknown; -"
    cost = math.fsum(u["cost_usd"] for u in mine) / rows * 1000
    return f"${cost:.4f}; -"


def _detection(m: Mapping[str, Any]) -> str:
    d = m["all_defects"]
    if not d["n"]:
        return "no planted defects"
    return f"{d['successes']}/{d['n']} = {d['rate']:.2f} [{d['low']:.2f}, {d['high']:.2f}]"


def _figure(f: Mapping[str, Any]) -> str:
    """`SME kappa: core_total -0.20 [-0.41, -0.01] n=17, worse than chance`: the figure
    without its statistic's name, which the report's table gives."""
    number = re.search(r"(-?\d[\d.]* \[.*|undefined.*)$", f["value"])
    reads = f["reads"].split(" (")[0]
    return f"{f['what']} {number[1] if number else f['value']} n={f['n']}, {reads}"


def _row(report: Mapping[str, Any], m: Mapping[str, Any]) -> str:
    """One line: the verdict, the reason that decides the model's verdict (with its figure),
    detection, cost, link."""
    screen = report.get("first_screen", {})
    figures = [f for f in screen.get("figures", []) if f["model"] == m["model"]]
    # A model whose verdict no reason of its own decides (a pairwise judge's, decided per
    # set) shows its first figure.
    figure = screen.get("deciding_by_model", {}).get(m["model"]) or (
        _figure(figures[0]) if figures else "-"
    )
    word = m.get("verdict_word", report["verdict_word"])
    label = m.get("verdict_label", word)
    # A PASS whose paired gate cannot see the declared drop is marked, not green.
    kind = (
        YELLOW.css
        if word == PASS and any(g["blind"] for g in m.get("sensitivity", []))
        else WORDS[word].colour.css
    )
    link = f"{report['judge']}/{report['prompt_version']}/index.html"
    worse = (
        f'<br><span class="warn">baseline worse than {esc(report["previous_version"])}</span>'
        if screen.get("warning")
        else ""
    )
    cells = [
        (f"{esc(report['judge'])} {esc(report['prompt_version'])}", ""),
        (esc(m["model"]), ""),
        (f'<span class="w {kind}">{esc(label)}</span>' + worse, ""),
        (esc(figure), f' class="cut" title="{esc(figure)}"'),
        (esc(_detection(m)), ""),
        (esc(_per_thousand(report["usage"], m["model"])), ""),
        (f'<a href="{esc(link)}">report</a>', ""),
    ]
    return "<tr>" + "".join(f"<td{extra}>{cell}</td>" for cell, extra in cells) + "</tr>"


FIGURE_HEAD = ("Deciding figure", "Value [95%]", "n", "Against", "Reads")


def _figure_row(f: Mapping[str, Any], several: bool) -> str:
    what = (f"{f['model']}: " if several else "") + f["what"]
    what += f" ({f['note']})" if f.get("note") else ""
    cells = (what, f["value"], str(f["n"]), f["against"], f["reads"])
    return "<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in cells) + "</tr>"


def _details(report: Mapping[str, Any]) -> str:
    """Per report: the warning, at most five reasons and the deciding figures."""
    screen = report.get("first_screen", {})
    reasons = list(screen.get("reasons", []))
    if len(reasons) > MAX_REASONS:
        rest = len(reasons) - MAX_REASONS
        reasons = [*reasons[:MAX_REASONS], f"and {rest} more (in the report)"]
    several = len(report["models"]) > 1
    rows = "".join(_figure_row(f, several) for f in screen.get("figures", []))
    head = "".join(f"<th>{esc(h)}</th>" for h in FIGURE_HEAD)
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>" if rows else ""
    link = f"{report['judge']}/{report['prompt_version']}/index.html"
    # The report's Result line: the verdict and the reason that decides it.
    title = f"{report['judge']} {report['prompt_version']}: {report['verdict']}"
    warning = screen.get("warning")
    return "".join(
        [
            f'<h2><a href="{esc(link)}">{esc(title)}</a></h2>',
            f'<p class="warn">Warning: {esc(warning)}</p>' if warning else "",
            "<ul>" + "".join(f"<li>{esc(reason)}</li>" for reason in reasons) + "</ul>",
            table,
        ]
    )


HEAD = [
    "Judge and prompt", "Model", "Verdict", "Deciding reason (95%)",
    "Detection (Wilson 95%)", "Cost; time per 1,000", "Report",
]  # fmt: skip


def render_overview(reports: Sequence[Mapping[str, Any]]) -> str:
    """The page, from report.json contents in the order given (judge, then version)."""
    rows = [(r, m) for r in reports for m in r["models"]]
    counts: dict[str, int] = {}
    for _, m in rows:
        label = m.get("verdict_label", "")
        counts[label] = counts.get(label, 0) + 1
    tally = ", ".join(f"{n} {label}" for label, n in sorted(counts.items()))
    head = "".join(f"<th>{esc(h)}</th>" for h in HEAD)
    body = "".join(_row(r, m) for r, m in rows)
    judges = len({r["judge"] for r in reports})
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>Judges: every judge, prompt and model</title><style>{_CSS}</style>",
            "</head><body><main><h1>Every judge, prompt version and model</h1>",
            f"<p>{judges} judges, {len(reports)} prompt versions, {len(rows)} rows: "
            f"{esc(tally)}. Each row links to its report. Cost per 1,000 judgements comes "
            "from the recorded token counts and prices (unknown: imported judgements carry "
            "none); judging time differs between runs and is kept out of committed files, so "
            "it shows as -.</p>",
            f'<table class="all"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>',
            "<p>Why each verdict, report by report (the first screen of each report):</p>",
            *(_details(report) for report in reports),
            "</main>\n</body></html>\n",
        ]
    )
