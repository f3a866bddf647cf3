"""index.html of a report folder: one self-contained page of inline CSS and inline SVG.

No script, font or request leaves the page, so it renders the same offline, as a CI
artefact and in a headless browser. Charts are drawn here from the report's numbers.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from html import escape

from judges.stats.compare import Comparison
from judges.reports.report import (
    METADATA_BEGIN,
    METADATA_END,
    FolderReport,
    ModelReport,
    RunMetadata,
)
from judges.stats.stats import Estimate, Rate

__all__ = ["render_html"]

_CSS = """
*{box-sizing:border-box}
body{margin:0;background:#f6f7f9;color:#1d232a;font:15px/1.45 system-ui,-apple-system,
"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1200px;margin:0 auto;padding:24px 32px 48px}
h1{font-size:26px;margin:0 0 12px}
h2{font-size:21px;margin:36px 0 10px;padding-bottom:4px;border-bottom:2px solid #d0d7de}
h3{font-size:16px;margin:0 0 10px}
.card{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:16px 20px;
margin:14px 0}
table{border-collapse:collapse;font-size:14px}
th,td{border-bottom:1px solid #e3e7eb;padding:4px 12px 4px 0;text-align:left;
vertical-align:top}
th{color:#57606a;font-weight:600}
td.num{font-variant-numeric:tabular-nums;white-space:nowrap}
.pass{color:#1a7f37;font-weight:600}.fail{color:#cf222e;font-weight:700}.na{color:#6e7781}
.badge{display:inline-block;padding:0 8px;border-radius:10px;font-size:13px}
.caught,.held{background:#dafbe1;color:#116329}
.missed,.false-positive{background:#ffebe9;color:#a40e26}
.error{background:#fff8c5;color:#7d4e00}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:12px}
.grid svg{background:#fbfcfd;border:1px solid #e3e7eb;border-radius:6px}
.cols{display:flex;gap:40px;flex-wrap:wrap}
.note{color:#7d4e00}
.caption{color:#57606a;font-size:13px;margin:4px 0 0}
svg{display:block;max-width:100%;height:auto}
svg text{font-family:inherit}
footer{max-width:1200px;margin:0 auto;padding:12px 32px 32px;color:#57606a;font-size:13px}
"""

_BAR = "#5b8def"
_BAR_ALL = "#2f5fb3"
_GRID = "#e1e4e8"
_RED = "#cf222e"


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _pct(value: float) -> str:
    return f"{value * 100:.0f}%"


def _rate_text(rate: Rate) -> str:
    if rate.n == 0:
        return "no items (n=0)"
    return (
        f"{rate.successes}/{rate.n} = {_pct(rate.rate)} "
        f"[{_pct(rate.low)}, {_pct(rate.high)}] n={rate.n}"
    )


def _stat_text(stat: Rate | Estimate | None) -> str:
    if stat is None:
        return "-"
    if isinstance(stat, Rate):
        return _rate_text(stat)
    if stat.n == 0:
        return "no data (n=0)"
    if math.isnan(stat.low) or math.isnan(stat.high):
        return "-" if math.isnan(stat.value) else f"{stat.value:.2f} (no interval) n={stat.n}"
    return str(stat)


# --------------------------------------------------------------------------- charts


def detection_svg(m: ModelReport) -> str:
    """Horizontal bars per category with the Wilson interval as a whisker and n printed."""
    rows = [
        (category, rate, m.threshold(category), False) for category, rate in m.detection.items()
    ]
    rows.append(("all planted defects", m.all_defects, None, True))
    label_w, bar_w, right_w, row_h, top = 220, 560, 300, 30, 30
    width, height = label_w + bar_w + right_w, top + row_h * len(rows) + 10
    out = [
        f'<svg class="detection" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="Detection per category of {_e(m.model)}">',
        f"<title>Detection per category, {_e(m.model)}</title>",
    ]
    for tick in (0, 0.25, 0.5, 0.75, 1):
        x = label_w + tick * bar_w
        out.append(
            f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{height - 6}" '
            f'stroke="{_GRID}"/><text x="{x:.1f}" y="{top - 12}" font-size="12" '
            f'text-anchor="middle" fill="#57606a">{_pct(tick)}</text>'
        )
    for index, (label, rate, threshold, overall) in enumerate(rows):
        cy = top + row_h * index + row_h / 2
        weight = ' font-weight="700"' if overall else ""
        out.append(
            f'<text x="{label_w - 10}" y="{cy + 5:.1f}" font-size="14" text-anchor="end"'
            f"{weight}>{_e(label)}</text>"
            f'<rect x="{label_w}" y="{cy - 9:.1f}" width="{bar_w}" height="18" fill="#eef1f4"/>'
        )
        if rate.n:
            low, high = label_w + rate.low * bar_w, label_w + rate.high * bar_w
            out.append(
                f'<rect x="{label_w}" y="{cy - 9:.1f}" width="{rate.rate * bar_w:.1f}" '
                f'height="18" fill="{_BAR_ALL if overall else _BAR}">'
                f"<title>{_e(label)}: {_e(_rate_text(rate))}</title></rect>"
                f'<line x1="{low:.1f}" y1="{cy:.1f}" x2="{high:.1f}" y2="{cy:.1f}" '
                'stroke="#1d232a" stroke-width="2"/>'
                f'<line x1="{low:.1f}" y1="{cy - 6:.1f}" x2="{low:.1f}" y2="{cy + 6:.1f}" '
                'stroke="#1d232a" stroke-width="2"/>'
                f'<line x1="{high:.1f}" y1="{cy - 6:.1f}" x2="{high:.1f}" y2="{cy + 6:.1f}" '
                'stroke="#1d232a" stroke-width="2"/>'
            )
        if threshold is not None:
            x = label_w + threshold * bar_w
            out.append(
                f'<line x1="{x:.1f}" y1="{cy - 13:.1f}" x2="{x:.1f}" y2="{cy + 13:.1f}" '
                f'stroke="{_RED}" stroke-width="2" stroke-dasharray="4 3">'
                f"<title>gate: at least {_pct(threshold)}</title></line>"
            )
        out.append(
            f'<text x="{label_w + bar_w + 12}" y="{cy + 5:.1f}" font-size="13"{weight}>'
            f"{_e(_rate_text(rate))}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def _bins(values: Sequence[float]) -> list[tuple[str, int]]:
    """One bin per score on an integer scale; eight equal bins otherwise."""
    low, high = min(values), max(values)
    if all(float(v).is_integer() for v in values) and high - low <= 20:
        counts = Counter(int(v) for v in values)
        return [(str(score), counts[score]) for score in range(int(low), int(high) + 1)]
    if low == high:
        return [(f"{low:g}", len(values))]
    step = (high - low) / 8
    counts = Counter(min(int((v - low) / step), 7) for v in values)
    return [(f"{low + step * i:.2g}", counts[i]) for i in range(8)]


def histogram_svg(dimension: str, values: Sequence[float]) -> str:
    """A small histogram of one dimension's main-run scores."""
    width, height, left, top, bottom = 260, 150, 12, 34, 24
    out = [
        f'<svg class="histogram" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="Scores of {_e(dimension)}">',
        f'<text x="{left}" y="18" font-size="13" font-weight="600">{_e(dimension)}</text>'
        f'<text x="{width - 10}" y="18" font-size="12" text-anchor="end" fill="#57606a">'
        f"n={len(values)}</text>",
    ]
    if not values:
        out.append(
            f'<text x="{width / 2}" y="{height / 2}" font-size="12" text-anchor="middle" '
            'fill="#6e7781">no scores</text></svg>'
        )
        return "".join(out)
    bins = _bins(values)
    plot_w, plot_h = width - 2 * left, height - top - bottom
    slot = plot_w / len(bins)
    most = max(count for _, count in bins) or 1
    base = top + plot_h
    out.append(f'<line x1="{left}" y1="{base}" x2="{width - left}" y2="{base}" stroke="#8c959f"/>')
    for index, (label, count) in enumerate(bins):
        x = left + slot * index
        bar_h = plot_h * count / most
        out.append(
            f'<rect x="{x + slot * 0.12:.1f}" y="{base - bar_h:.1f}" width="{slot * 0.76:.1f}" '
            f'height="{bar_h:.1f}" fill="{_BAR}"><title>{_e(label)}: {count}</title></rect>'
            f'<text x="{x + slot / 2:.1f}" y="{base + 15}" font-size="11" '
            f'text-anchor="middle" fill="#57606a">{_e(label)}</text>'
        )
        if count:
            out.append(
                f'<text x="{x + slot / 2:.1f}" y="{base - bar_h - 3:.1f}" font-size="11" '
                f'text-anchor="middle">{count}</text>'
            )
    out.append("</svg>")
    return "".join(out)


def change_svg(comparison: Comparison) -> str:
    """Mean change per dimension (after - before) as dots with paired bootstrap whiskers."""
    dims = comparison.dimensions
    label_w, plot_w, right_w, row_h, top = 180, 520, 280, 28, 30
    width, height = label_w + plot_w + right_w, top + row_h * len(dims) + 10
    points = [
        abs(v)
        for d in dims
        for v in (d.change.value, d.change.low, d.change.high)
        if not math.isnan(v)
    ]
    extent = max(0.5, math.ceil(max(points, default=0.5) * 2) / 2)
    centre = label_w + plot_w / 2

    def x_of(value: float) -> float:
        return centre + value / extent * (plot_w / 2)

    out = [
        f'<svg class="changes" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="Mean change per dimension">',
        "<title>Mean change per dimension</title>",
    ]
    for tick in (-extent, -extent / 2, 0.0, extent / 2, extent):
        colour = "#8c959f" if tick == 0 else _GRID
        out.append(
            f'<line x1="{x_of(tick):.1f}" y1="{top - 6}" x2="{x_of(tick):.1f}" '
            f'y2="{height - 6}" stroke="{colour}"/><text x="{x_of(tick):.1f}" y="{top - 12}" '
            f'font-size="12" text-anchor="middle" fill="#57606a">{tick:+g}</text>'
        )
    for index, d in enumerate(dims):
        cy = top + row_h * index + row_h / 2
        change = d.change
        out.append(
            f'<text x="{label_w - 10}" y="{cy + 5:.1f}" font-size="14" '
            f'text-anchor="end">{_e(d.dimension)}</text>'
        )
        if not math.isnan(change.low):
            out.append(
                f'<line x1="{x_of(change.low):.1f}" y1="{cy:.1f}" x2="{x_of(change.high):.1f}" '
                f'y2="{cy:.1f}" stroke="#1d232a" stroke-width="2"/>'
            )
        if not math.isnan(change.value):
            colour = "#1a7f37" if change.value > 0 else _RED if change.value < 0 else "#57606a"
            out.append(
                f'<circle cx="{x_of(change.value):.1f}" cy="{cy:.1f}" r="5" fill="{colour}"/>'
            )
        out.append(
            f'<text x="{label_w + plot_w + 12}" y="{cy + 5:.1f}" font-size="13">'
            f"{_e(_stat_text(change))}</text>"
        )
    out.append("</svg>")
    return "".join(out)


# --------------------------------------------------------------------------- sections


def _category(category: str, control: bool) -> str:
    return f"{category} (control)" if control and category != "control" else category


def _badge(label: str) -> str:
    kind = label.split(" ")[0].replace("false", "false-positive")
    return f'<span class="badge {_e(kind)}">{_e(label)}</span>'


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table of cells that are already HTML."""
    header = "".join(f"<th>{cell}</th>" for cell in head)
    body = "".join(
        "<tr>" + "".join(f'<td class="num">{cell}</td>' for cell in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"


def _gate_cell(passed: bool | None, threshold: float | None) -> str:
    if passed is None:
        text = "not evaluated" if threshold is not None else "no threshold"
        return f'<span class="na">{text}</span>'
    return '<span class="pass">pass</span>' if passed else '<span class="fail">FAIL</span>'


def _facts(m: ModelReport) -> str:
    passed, failed, unevaluated = m.gate_counts
    statuses = "; ".join(
        f"{run}: " + ", ".join(f"{n} {status}" for status, n in counts.items())
        for run, counts in m.status_by_run.items()
    )
    items = f"{m.n_main}" + (f" of {m.planted_items} planted" if m.planted_items else "")
    facts = [  # label, value already in HTML
        ("Main-run items", _e(items)),
        ("Control false-positive rate", _e(_rate_text(m.control_false_positive))),
        ("Error rate (main run)", _e(_rate_text(m.error_rate))),
        ("Gates", f"{passed} passed, {failed} failed, {unevaluated} not evaluated"),
        ("Failures", f'{len(m.failures)} (<a href="failures.md">failures.md</a>)'),
        ("Rows by run and status", _e(statuses)),
    ]
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in facts)
    gates = _table(
        ["Gate", "Value", "Threshold", "Result"],
        [
            [
                _e(g.name),
                _e(_stat_text(g.value)),
                "-"
                if g.threshold is None
                else f"{'&ge;' if g.at_least else '&le;'} {g.threshold:.2f}",
                _gate_cell(g.passed, g.threshold),
            ]
            for g in m.gates
        ],
    )
    source = _e(m.gates_table) if m.gates_table else "no thresholds set"
    return (
        f'<div class="cols"><div><h3>Summary</h3><table>{rows}</table></div>'
        f'<div><h3>Gates</h3>{gates}<p class="caption">{source}</p></div></div>'
    )


def _reliability(m: ModelReport) -> str:
    rows: list[list[str]] = []
    if m.noise_floor is not None:
        for name, d in m.noise_floor.dimensions.items():
            rows.append(
                ["Noise floor", _e(name), "all repeats agree", _e(_stat_text(d.exact_match))]
            )
    if m.test_retest is not None:
        for name, r in m.test_retest.dimensions.items():
            rows.append(["Test-retest", _e(name), "exact match", _e(_stat_text(r.exact_match))])
    if m.panel is not None:
        rows.append(["Panel", "all", "agreement within 1", _e(_stat_text(m.panel.agreement))])
        rows.append(["Panel", "overall", "contested", _e(_stat_text(m.panel.contested_rate))])
    if m.sme is not None:
        rows.append(["SME", _e(m.sme.dimension), "Spearman rho", _e(_stat_text(m.sme.spearman))])
        rows.append(["SME", _e(m.sme.dimension), "quadratic kappa", _e(_stat_text(m.sme.kappa))])
    if not rows:
        return ""
    table = _table(["Section", "Dimension", "Measure", "Value [95%]"], rows)
    return f'<div class="card"><h3>Reliability (details in report.md)</h3>{table}</div>'


def _changes(report: FolderReport, m: ModelReport) -> str:
    previous = report.previous_version
    if previous is None:
        return f"<p>{_e(report.version)} is the first prompt version: nothing to compare.</p>"
    c = m.comparison
    if c is None:
        return f"<p>No main-run rows of prompt {_e(previous)} to pair with.</p>"
    p = "&lt; 0.0001" if c.mcnemar.p_value < 0.0001 else f"{c.mcnemar.p_value:.4f}"
    lines = [
        f"<p>{c.n_pairs} items paired. Detection of planted defects: {_e(c.before)} "
        f"{_e(_rate_text(c.detection_before))} &rarr; {_e(c.after)} "
        f"{_e(_rate_text(c.detection_after))}. Flips: <b>{c.mcnemar.b}</b> caught &rarr; missed, "
        f"<b>{c.mcnemar.c}</b> missed &rarr; caught; McNemar exact p = {p} "
        f"(n = {c.mcnemar.n}).</p>"
    ]
    if c.flips:
        lines.append(
            _table(
                ["Item", "Category", _e(c.before), "", _e(c.after)],
                [
                    [
                        _e(f.item_id),
                        _e(_category(f.category, f.control)),
                        _badge(f.before),
                        "&rarr;",
                        _badge(f.after),
                    ]
                    for f in c.flips
                ],
            )
        )
    else:
        lines.append("<p>No item flipped.</p>")
    if c.dimensions:
        lines.append(
            f'<h3 style="margin-top:16px">Mean change per dimension ({_e(c.after)} - '
            f"{_e(c.before)}), paired bootstrap 95%</h3>{change_svg(c)}"
        )
    return "".join(lines)


def _model_section(report: FolderReport, m: ModelReport) -> str:
    notes = "".join(f'<li class="note">{_e(note)}</li>' for note in m.notes)
    histograms = "".join(histogram_svg(dim, values) for dim, values in m.scores.items())
    against = f"prompt {report.previous_version}" if report.previous_version else "previous prompt"
    return "".join(
        [
            f"<h2>Model {_e(m.model)}</h2>",
            f"<ul>{notes}</ul>" if notes else "",
            '<div class="card"><h3>Detection per category</h3>',
            detection_svg(m),
            '<p class="caption">Bar: share of planted defects caught. Whisker: Wilson 95% '
            "interval. Red dashes: the gate's minimum.</p></div>",
            f'<div class="card">{_facts(m)}</div>',
            _reliability(m),
            '<div class="card"><h3>Score distributions (main run)</h3>',
            f'<div class="grid">{histograms}</div>' if histograms else "<p>No dimensions.</p>",
            "</div>",
            f'<div class="card"><h3>Changes against {_e(against)}</h3>',
            _changes(report, m),
            "</div>",
        ]
    )


def render_html(report: FolderReport, meta: RunMetadata) -> str:
    """The whole page; the run-metadata footer sits between its markers at the end."""
    facts = [
        ("Prompt version", report.version),
        ("Previous version", report.previous_version or "-"),
        ("Prompt hash", report.prompt_line()),
        ("Models", ", ".join(m.model for m in report.models) or "-"),
        ("Rows by run", ", ".join(f"{r} {n}" for r, n in report.rows_by_run.items()) or "-"),
    ]
    header = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in facts)
    warnings = list(report.notes)
    if report.reprompted:
        warnings.insert(0, f"judged under more than one prompt: {', '.join(report.reprompted)}")
    notes = "".join(f'<li class="note">{_e(note)}</li>' for note in warnings)
    usage = _table(
        ["Model", "Run", "Rows", "Calls", "Input tokens", "Output tokens", "Cost (USD)"],
        [
            [
                _e(u.model),
                _e(u.run),
                *map(str, (u.rows, u.usage.calls, u.usage.input_tokens)),
                str(u.usage.output_tokens),
                f"{u.usage.cost_usd:.4f}",
            ]
            for u in report.usage
        ],
    )
    title = f"{report.judge}, prompt {report.version}"
    footer = "".join(f"<div><b>{_e(k)}</b>: {_e(v)}</div>" for k, v in meta.items())
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{_e(title)}</title><style>{_CSS}</style></head><body><main>",
            f"<h1>{_e(title)}</h1>",
            f'<div class="card"><table>{header}</table>',
            '<p class="caption">Computed from every row of results.jsonl. Full tables: '
            '<a href="report.md">report.md</a>, <a href="report.json">report.json</a>.</p>',
            f"<ul>{notes}</ul>" if notes else "",
            "</div>",
            *(_model_section(report, m) for m in report.models),
            f'<h2>Cost and tokens</h2><div class="card">{usage}</div>',
            f"</main>\n{METADATA_BEGIN}\n<footer><h3>Run metadata</h3>{footer}</footer>\n",
            f"{METADATA_END}\n</body></html>\n",
        ]
    )
