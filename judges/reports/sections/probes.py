"""The "Bias probes" section of a report: flip rates against the noise floor, and gates.

Built from one model's rows of one prompt version (probe runs, the main run, the redraw
run `probe-noise`, and the noise-floor run for the majority-vote repeats), so
`python -m judges report` rebuilds it without judging.
"""

from __future__ import annotations

from html import escape

from judges.reports.sections.prose import inline_html
from judges.stats.estimates.intervals import Rate
from judges.stats.reliability.probes import (
    ProbeEffect,
)
from judges.verdicts.probe_messages import against_noise, explained
from judges.verdicts.probes import ProbeReport


def changes_markdown(report: ProbeReport) -> list[str]:
    """The probes in the paired version comparison (comparison.md and report.md)."""
    if not report.changes:
        return []
    lines = [
        f"Bias probes against prompt {report.previous} (biased rate, paired per item; "
        "McNemar b = biased before only, c = biased now only):",
        "",
        "| probe | before | now | b | c | two-sided McNemar exact p |",
        "|---|---|---|---|---|---|",
    ]
    for c in report.changes:
        lines.append(
            f"| {c.probe} | {_rate(c.before)} | {_rate(c.after)} | {c.test.b} | {c.test.c} | "
            f"{c.test.p_value:.3g} |"
        )
    return [*lines, ""]


def _rate(rate: Rate | None) -> str:
    if rate is None or rate.n == 0:
        return "-"
    return f"{rate.successes}/{rate.n} = {rate.rate:.2f} [{rate.low:.2f}, {rate.high:.2f}]"


def _repeats(n: int | None) -> str:
    if n is None:
        return "more repeats than any budget (off the mode half the time or more)"
    return f"{n} repeat" + ("" if n == 1 else "s")


def _flips(effect: ProbeEffect) -> str:
    """The redraw's flip rate, with McNemar's p for the probe's flips against it."""
    if effect.noise_flips is None or effect.flip_test is None:
        return "-"
    return f"{_rate(effect.noise_flips)} (two-sided p = {effect.flip_test.p_value:.3g})"


def _gate(report: ProbeReport, probe: str) -> str:
    for gate in report.gates:
        if gate.name.startswith(f"max_flip.{probe} "):
            if gate.threshold is None:
                return "no gate"
            verdict = {True: "pass", False: "FAIL", None: "not evaluated"}[gate.passed]
            return f"<= {gate.threshold:.2f} {verdict}"
    return "no gate"


def probes_markdown(report: ProbeReport) -> list[str]:
    lines = [
        "### Bias probes",
        "",
        explained([e.probe for e in report.effects]),
        "",
        "| probe | n | flips | redraw flips | judge-pleasing | biased | noise floor (biased) "
        "| vs noise | gate |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for e in report.effects:
        errors = f" ({e.errors} errors)" if e.errors else ""
        lines.append(
            f"| {e.probe} | {e.biased.n}{errors} | {_rate(e.flips)} | {_flips(e)} | "
            f"{_rate(e.pleasing)} | {_rate(e.biased)} | {_rate(e.noise)} | {against_noise(e)} | "
            f"{_gate(report, e.probe)} |"
        )
    r = report.repeats
    if r is not None:
        per_item = ", ".join(f"{k} {v:.2f}" for k, v in r.per_item.items())
        if r.repeats is None:  # then no budget suffices for the least stable item either
            vote = (
                "so no number of repeats makes a majority vote return the modal verdict 95% "
                "of the time (a draw is off the mode half the time or more)"
            )
        else:
            vote = (
                f"so a majority vote needs {_repeats(r.repeats)} to return the modal verdict "
                f"95% of the time (least stable item: {_repeats(r.worst_repeats)})"
            )
        lines += [
            "",
            f"Noise-floor runs ({r.n_items} items x {r.draws} draws): the chance that two "
            f"draws of one item differ is {r.flip:.2f} on average ({per_item}); a draw is off "
            f"its item's modal verdict {r.off_mode:.2f} of the time, {vote}.",
        ]
    changes = changes_markdown(report)
    return [*lines, *(["", *changes] if changes else [])]


# -- index.html: a bar per probe with its interval, the noise-floor band behind it -------

_LABEL_W, _BAR_W, _RIGHT_W, _ROW_H, _TOP = 120, 520, 360, 34, 30


def _bar(index: int, effect: ProbeEffect, threshold: float | None) -> str:
    cy = _TOP + _ROW_H * index + _ROW_H / 2
    x0 = _LABEL_W
    out = [
        f'<text x="{x0 - 10}" y="{cy + 5:.1f}" font-size="14" text-anchor="end">'
        f"{escape(effect.probe)}</text>"
        f'<rect x="{x0}" y="{cy - 11:.1f}" width="{_BAR_W}" height="22" fill="#eef1f4"/>'
    ]
    noise = effect.noise
    if noise is not None and noise.n:
        lo, hi = x0 + noise.low * _BAR_W, x0 + noise.high * _BAR_W
        out.append(
            f'<rect class="noise-band" x="{lo:.1f}" y="{cy - 14:.1f}" width="{hi - lo:.1f}" '
            f'height="28" fill="#d8dee4" opacity="0.9"><title>noise floor '
            f"{escape(_rate(noise))}</title></rect>"
        )
    b = effect.biased
    if b.n:
        lo, hi = x0 + b.low * _BAR_W, x0 + b.high * _BAR_W
        out.append(
            f'<rect x="{x0}" y="{cy - 7:.1f}" width="{b.rate * _BAR_W:.1f}" height="14" '
            f'fill="#5b8def"><title>{escape(effect.probe)}: biased {escape(_rate(b))}'
            f"</title></rect>"
            f'<line x1="{lo:.1f}" y1="{cy:.1f}" x2="{hi:.1f}" y2="{cy:.1f}" stroke="#1d232a" '
            'stroke-width="2"/>'
        )
    if threshold is not None:
        x = x0 + threshold * _BAR_W
        out.append(
            f'<line x1="{x:.1f}" y1="{cy - 15:.1f}" x2="{x:.1f}" y2="{cy + 15:.1f}" '
            'stroke="#cf222e" stroke-width="2" stroke-dasharray="4 3">'
            f"<title>gate: at most {threshold:.2f}</title></line>"
        )
    out.append(
        f'<text x="{x0 + _BAR_W + 12}" y="{cy + 5:.1f}" font-size="13">'
        f"{escape(_rate(b))} (noise {escape(_rate(noise))})</text>"
    )
    return "".join(out)


def probes_svg(report: ProbeReport) -> str:
    """Bars of each probe's biased rate with its Wilson interval over the noise band."""
    thresholds = {g.name.split(" ")[0].removeprefix("max_flip."): g.threshold for g in report.gates}
    width = _LABEL_W + _BAR_W + _RIGHT_W
    height = _TOP + _ROW_H * len(report.effects) + 10
    out = [
        f'<svg class="probes" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        'role="img" aria-label="Bias probes: biased flip rate per probe against the noise floor">',
        "<title>Bias probes: biased rate per probe (bar, Wilson interval), noise floor (band), "
        "gate (dashed)</title>",
    ]
    for tick in (0, 0.25, 0.5, 0.75, 1):
        x = _LABEL_W + tick * _BAR_W
        out.append(
            f'<line x1="{x:.1f}" y1="{_TOP - 6}" x2="{x:.1f}" y2="{height - 6}" stroke="#e1e4e8"/>'
            f'<text x="{x:.1f}" y="{_TOP - 12}" font-size="12" text-anchor="middle" '
            f'fill="#57606a">{tick * 100:.0f}%</text>'
        )
    for index, effect in enumerate(report.effects):
        out.append(_bar(index, effect, thresholds.get(effect.probe)))
    out.append("</svg>")
    return "".join(out)


def probes_html(report: ProbeReport) -> str:
    """The section's card: the chart, the verdict per probe, and the repeats a vote needs."""
    rows = "".join(
        f"<tr><td>{escape(e.probe)}</td><td class='num'>{escape(_rate(e.flips))}</td>"
        f"<td class='num'>{escape(_flips(e))}</td><td class='num'>{escape(_rate(e.pleasing))}</td>"
        f"<td class='num'>{escape(_rate(e.biased))}</td>"
        f"<td class='num'>{escape(_rate(e.noise))}</td><td>{escape(against_noise(e))}</td>"
        f"<td>{escape(_gate(report, e.probe))}</td></tr>"
        for e in report.effects
    )
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "Probe",
            "Flips",
            "Redraw flips",
            "Judge-pleasing",
            "Biased",
            "Noise floor (biased)",
            "Vs noise",
            "Gate",
        )
    )
    lines = probes_markdown(report)
    repeats = lines[-1] if report.repeats is not None else ""
    return (
        f'<h3>Bias probes</h3>{probes_svg(report)}<p class="caption">'
        f"{inline_html(explained([e.probe for e in report.effects]))}</p>"
        f"<table><tr>{head}</tr>{rows}</table>"
        + (f'<p class="caption">{inline_html(repeats)}</p>' if repeats else "")
    )
