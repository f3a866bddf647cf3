"""The corpus report as one self-contained page (inline SVG, no script): each judge's
ranking as dots with their intervals, the judges side by side in the same chart form, and
the Markdown report's tables below, quoted."""

from __future__ import annotations

import math
from html import escape

from judges.corpus.estimates import SystemScore
from judges.corpus.manifest import Scale
from judges.corpus.report import CorpusReport, JudgeSummary

_WIDTH = 560
_ROW = 22
_LABEL = 170
_FIGURE = 90  # the figure beside each row: "97.70 n=804"
_DOT = "#2f5fb3"
_GRID = "#e1e4e8"


def _esc(value: object) -> str:
    return escape(str(value), quote=True)


def shared_axis(summaries: tuple[JudgeSummary, ...], scale: Scale) -> tuple[float, float]:
    """One axis (in score units) for every judge's chart, so a judge change reads as the
    dots moving: the range of every mean and interval end, padded."""
    ends = [v for summary in summaries for s in summary.scores
            for v in (s.score.low, s.score.high, s.score.mean) if not math.isnan(v)]  # fmt: skip
    low, high = (min(ends), max(ends)) if ends else (scale.low, scale.high)
    if high - low < 1e-9:
        low, high = low - 0.5 * (scale.high - scale.low), high + 0.5 * (scale.high - scale.low)
    pad = (high - low) * 0.05
    return low - pad, high + pad


def _ticks(low: float, high: float, factor: float) -> list[float]:
    """Round ticks (1, 2 or 5 times a power of ten, as shown) inside the axis."""
    span = (high - low) * factor
    raw = span / 4
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw) / factor
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) / step) + 1)]


def ranking_svg(summary: JudgeSummary, scale: Scale, axis: tuple[float, float]) -> str:
    """One row per ranked system: its mean as a dot, its interval as a line, its figure."""
    scores: list[SystemScore] = list(summary.scores)
    low, high = axis
    plot = _WIDTH - _LABEL - _FIGURE - 10

    def x_of(value: float) -> float:
        return _LABEL + (value - low) / (high - low) * plot

    height = _ROW * len(scores) + 30
    parts = [
        f'<svg class="ranking" role="img" width="{_WIDTH}" height="{height}" '
        f'viewBox="0 0 {_WIDTH} {height}" aria-label="{_esc(summary.judge)}: systems ranked, '
        f'with {_esc(scale.name)} and intervals">'
    ]
    for tick in _ticks(low, high, scale.factor):
        x = x_of(tick)
        parts.append(f'<line x1="{x:.1f}" y1="4" x2="{x:.1f}" y2="{height - 22}" '
                     f'stroke="{_GRID}"/>')  # fmt: skip
        parts.append(f'<text x="{x:.1f}" y="{height - 8}" font-size="11" text-anchor="middle">'
                     f"{tick * scale.factor:g}</text>")  # fmt: skip
    for row, s in enumerate(scores):
        y = 14 + row * _ROW
        parts.append(f'<text x="{_LABEL - 8}" y="{y + 4}" font-size="12" text-anchor="end">'
                     f"{_esc(s.system)}</text>")  # fmt: skip
        m = s.score
        if m.n == 0 or math.isnan(m.mean):
            continue
        if not (math.isnan(m.low) or math.isnan(m.high)):
            parts.append(f'<line x1="{x_of(m.low):.1f}" y1="{y}" x2="{x_of(m.high):.1f}" '
                         f'y2="{y}" stroke="{_DOT}" stroke-width="2"/>')  # fmt: skip
        parts.append(f'<circle cx="{x_of(m.mean):.1f}" cy="{y}" r="4" fill="{_DOT}">'
                     f"<title>{_esc(s.system)}: {m.mean * scale.factor:.2f} "
                     f"n={m.n}</title></circle>")  # fmt: skip
        parts.append(f'<text x="{_WIDTH - _FIGURE}" y="{y + 4}" font-size="11">'
                     f"{m.mean * scale.factor:.2f} n={m.n}</text>")  # fmt: skip
    parts.append("</svg>")
    return "".join(parts)


def corpus_html(report: CorpusReport, markdown: str) -> str:
    scale = report.corpus.manifest.scale
    axis = shared_axis(report.judges, scale)
    panels = "".join(
        f'<section class="panel"><h2>{_esc(s.judge)}</h2>'
        + (f"<p>against the reference {_esc(s.reference)}</p>" if s.reference else "")
        + ranking_svg(s, scale, axis)
        + "</section>"
        for s in report.judges
    )
    caveat = f'<p class="caveat">{_esc(report.change_caveat)}.</p>' if report.change_caveat else ""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Corpus report: {_esc(report.name)}</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<style>body{font:14px/1.45 system-ui,sans-serif;margin:1.5em;max-width:1220px}"
        ".panels{display:flex;flex-wrap:wrap;gap:1.5em}.panel{flex:1 1 560px}"
        "svg{max-width:100%;height:auto}.caveat{color:#9a6700}"
        "pre{white-space:pre-wrap;background:#f6f8fa;padding:1em;overflow-x:auto}</style>"
        f"</head><body><h1>Corpus report: {_esc(report.name)}</h1>"
        f"<p>{_esc(scale.name)}, each system's mean over its items with a 95% interval; "
        f"licence: {_esc(report.corpus.manifest.licence)}.</p>{caveat}"
        f'<div class="panels">{panels}</div>'
        f"<h2>Tables</h2><pre>{_esc(markdown)}</pre></body></html>\n"
    )
