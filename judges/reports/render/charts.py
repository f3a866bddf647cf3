"""The inline SVG charts of index.html, drawn from the report's numbers, and the text helpers
the page shares with them."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from html import escape

from judges.reports.format import percent, rate_percent
from judges.reports.model.data import ModelReport
from judges.stats.estimates.intervals import Estimate, Rate
from judges.stats.regression.comparison import Comparison, DimensionChange

_BAR = "#5b8def"
_BAR_ALL = "#2f5fb3"
_GRID = "#e1e4e8"
_RED = "#cf222e"


def esc(value: object) -> str:
    return escape(str(value), quote=True)


pct = percent


def rate_text(rate: Rate) -> str:
    return rate_percent(rate)


def stat_text(stat: Rate | Estimate | None) -> str:
    if stat is None:
        return "-"
    if isinstance(stat, Rate):
        return rate_text(stat)
    if stat.n == 0:
        return "no data (n=0)"
    if math.isnan(stat.low) or math.isnan(stat.high):
        if math.isnan(stat.value):
            return f"undefined (one value throughout: no agreement beyond chance) n={stat.n}"
        return f"{stat.value:.2f} (no interval) n={stat.n}"
    return str(stat)


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
        f'height="{height}" role="img" aria-label="Detection per category of {esc(m.model)}">',
        f"<title>Detection per category, {esc(m.model)}</title>",
    ]
    for tick in (0, 0.25, 0.5, 0.75, 1):
        x = label_w + tick * bar_w
        out.append(
            f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{height - 6}" '
            f'stroke="{_GRID}"/><text x="{x:.1f}" y="{top - 12}" font-size="12" '
            f'text-anchor="middle" fill="#57606a">{pct(tick)}</text>'
        )
    for index, (label, rate, threshold, overall) in enumerate(rows):
        cy = top + row_h * index + row_h / 2
        weight = ' font-weight="700"' if overall else ""
        out.append(
            f'<text x="{label_w - 10}" y="{cy + 5:.1f}" font-size="14" text-anchor="end"'
            f"{weight}>{esc(label)}</text>"
            f'<rect x="{label_w}" y="{cy - 9:.1f}" width="{bar_w}" height="18" fill="#eef1f4"/>'
        )
        if rate.n:
            low, high = label_w + rate.low * bar_w, label_w + rate.high * bar_w
            out.append(
                f'<rect x="{label_w}" y="{cy - 9:.1f}" width="{rate.rate * bar_w:.1f}" '
                f'height="18" fill="{_BAR_ALL if overall else _BAR}">'
                f"<title>{esc(label)}: {esc(rate_text(rate))}</title></rect>"
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
                f"<title>gate: at least {pct(threshold)}</title></line>"
            )
        out.append(
            f'<text x="{label_w + bar_w + 12}" y="{cy + 5:.1f}" font-size="13"{weight}>'
            f"{esc(rate_text(rate))}</text>"
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
        f'height="{height}" role="img" aria-label="Scores of {esc(dimension)}">',
        f'<text x="{left}" y="18" font-size="13" font-weight="600">{esc(dimension)}</text>'
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
            f'height="{bar_h:.1f}" fill="{_BAR}"><title>{esc(label)}: {count}</title></rect>'
            f'<text x="{x + slot / 2:.1f}" y="{base + 15}" font-size="11" '
            f'text-anchor="middle" fill="#57606a">{esc(label)}</text>'
        )
        if count:
            out.append(
                f'<text x="{x + slot / 2:.1f}" y="{base - bar_h - 3:.1f}" font-size="11" '
                f'text-anchor="middle">{count}</text>'
            )
    out.append("</svg>")
    return "".join(out)


_GOOD = "#1a7f37"
_NEUTRAL = "#57606a"


def _good_colour(good: bool | None) -> str:
    return _NEUTRAL if good is None else _GOOD if good else _RED


def _change_row(d: DimensionChange, cy: float, x_of: Callable[[float], float], at: int) -> str:
    """One dimension on one side: its label, interval, coloured dot and numbers."""
    change = d.change
    way = f"{'higher' if d.higher_is_better else 'lower'} is better"
    verdict = {True: "good", False: "bad", None: "no change"}[d.good]
    if not d.directed:
        way, verdict = "the expectations ask for exact values", "no good direction"
    out = [
        f'<text x="{at - 10}" y="{cy + 5:.1f}" font-size="14" text-anchor="end">'
        f"{esc(d.dimension)}, {esc(d.side)}</text>"
    ]
    if not math.isnan(change.low):
        out.append(
            f'<line x1="{x_of(change.low):.1f}" y1="{cy:.1f}" x2="{x_of(change.high):.1f}" '
            f'y2="{cy:.1f}" stroke="#1d232a" stroke-width="2"/>'
        )
    if not math.isnan(change.value):
        out.append(
            f'<circle class="change-{verdict.replace(" ", "-")}" cx="{x_of(change.value):.1f}" '
            f'cy="{cy:.1f}" r="5" fill="{_good_colour(d.good)}"><title>{esc(d.dimension)} on '
            f"{esc(d.side)}: {verdict} ({esc(way)})</title></circle>"
        )
    return "".join(out)


def change_svg(comparison: Comparison) -> str:
    """Mean change per dimension and side (after - before) as dots with paired bootstrap
    whiskers, each dot coloured by whether the change is good for the side's purpose."""
    dims = comparison.dimensions
    label_w, plot_w, right_w, row_h, top = 260, 480, 260, 28, 30
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
        out.append(_change_row(d, cy, x_of, label_w))
        out.append(
            f'<text x="{label_w + plot_w + 12}" y="{cy + 5:.1f}" font-size="13">'
            f"{esc(stat_text(d.change))}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def change_legend() -> str:
    """What the dot colours of the mean-change plot mean (HTML, under the plot)."""
    dots = [
        (_GOOD, "good for the purpose"),
        (_RED, "bad for the purpose"),
        (_NEUTRAL, "no change, or no good direction"),
    ]
    keys = " ".join(
        f'<span style="color:{colour}">&#9679;</span> {esc(text)}' for colour, text in dots
    )
    return (
        f'<p class="caption legend">{keys}. Colour follows the purpose, not the sign: on '
        "controls a higher score is good (a harmless answer keeps its marks); on planted "
        "defects a lower score is good (the judge marks the defect down), as the score "
        "regression gates judge it. Where the items' expectations ask for exact values "
        "(a relevance level), no direction is good as such. Whisker: paired bootstrap 95% "
        "interval.</p>"
    )
