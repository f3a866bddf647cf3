"""index.html of a report folder: one self-contained page of inline CSS and inline SVG.

No script, font or request leaves the page, so it renders the same offline, as a CI
artefact and in a headless browser.
"""

from __future__ import annotations

from collections.abc import Sequence

from judges.reports.format import p_value
from judges.reports.model.data import FolderReport, ModelReport
from judges.reports.model.summary import baseline_warning, first_screen
from judges.reports.render.charts import (
    change_legend,
    change_svg,
    detection_svg,
    esc,
    histogram_svg,
    rate_text,
    stat_text,
)
from judges.reports.render.failures_html import FAILURES_CSS, failures_html
from judges.reports.render.first_screen import fingerprint_rows, first_screen_html
from judges.reports.render.fitness import fitness_html
from judges.reports.sections.cost import ESTIMATED_NOTE, cost_cell
from judges.reports.sections.leaderboard import leaderboard_html
from judges.reports.sections.probes import probes_html
from judges.reports.sections.prose import inline_html
from judges.verdicts.vocabulary import FAIL, PASS, WORDS, colour_rules

__all__ = ["render_html"]

_CSS = (
    """
*{box-sizing:border-box}
body{margin:0;background:#f6f7f9;color:#1d232a;font:15px/1.45 system-ui,-apple-system,
"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1200px;margin:0 auto;padding:24px 32px 48px}
h1{font-size:26px;margin:0 0 12px}
h2{font-size:21px;margin:36px 0 10px;padding-bottom:4px;border-bottom:2px solid #d0d7de}
h3{font-size:16px;margin:0 0 10px}
.card{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:16px 20px;
margin:14px 0;overflow-x:auto}
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
.cols>div{min-width:0;max-width:100%}
.note{color:#7d4e00}
.caption{color:#57606a;font-size:13px;margin:4px 0 0}
svg{display:block;max-width:100%;height:auto}
svg text{font-family:inherit}
.banner{border-radius:8px;padding:14px 20px;margin:0 0 14px;font-size:18px;font-weight:700;
border:2px solid}
"""
    + colour_rules(".banner")
    + """.banner span{display:block;font-size:14px;font-weight:400;color:#1d232a;margin-top:4px}
.banner span.decides{font-size:15px;font-weight:700}
.banner details{font-size:14px;font-weight:400;color:#1d232a;margin-top:4px}
.banner summary{cursor:pointer}
.first{border-left:4px solid #0969da}
.first ul{margin:0 0 10px;padding-left:20px}.first td{font-size:13px}
"""
)


def _category(category: str, control: bool) -> str:
    return f"{category} (control)" if control and category != "control" else category


def _badge(label: str) -> str:
    kind = label.split(" ")[0].replace("false", "false-positive")
    return f'<span class="badge {esc(kind)}">{esc(label)}</span>'


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], wrap: bool = False) -> str:
    """A table of cells that are already HTML; `wrap`: long cells may break over lines."""
    header = "".join(f"<th>{cell}</th>" for cell in head)
    cell_class = "" if wrap else ' class="num"'
    body = "".join(
        "<tr>" + "".join(f"<td{cell_class}>{cell}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"


_DECIDES_NOTHING = '<span class="na">decides nothing</span>'  # a gate no outcome could fail


def _gate_cell(passed: bool | None, threshold: float | None) -> str:
    if passed is None:
        text = "not evaluated" if threshold is not None else "no threshold"
        return f'<span class="na">{text}</span>'
    return '<span class="pass">pass</span>' if passed else f'<span class="fail">{FAIL}</span>'


def _facts(m: ModelReport) -> str:
    passed, failed, unevaluated = m.gate_counts
    statuses = "; ".join(
        f"{run}: " + ", ".join(f"{n} {status}" for status, n in counts.items())
        for run, counts in m.status_by_run.items()
    )
    items = f"{m.n_main}" + (f" of {m.planted_items} planted" if m.planted_items else "")
    facts = [  # label, value already in HTML
        ("Main-run items", esc(items)),
        ("Control false-positive rate", esc(rate_text(m.control_false_positive))),
        ("Error rate (main run)", esc(rate_text(m.error_rate))),
        *([("Lenient parsing", esc(m.coercions))] if m.coercions else []),
        *([("As a ranker", "<br>".join(esc(x) for x in m.ranking_lines()))] if m.ranking else []),
        ("Gates", f"{passed} passed, {failed} failed, {unevaluated} not evaluated"),
        (
            "Failures",
            f'{esc(m.failure_counts())} (<a href="#failures-{esc(m.model)}">below</a>, '
            '<a href="failures.md">failures.md</a>)',
        ),
        ("Rows by run and status", esc(statuses)),
    ]
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{v}</td></tr>" for k, v in facts)
    gates = _table(
        ["Gate", "Value", "Threshold", "Result"],
        [
            [
                esc(g.name),
                esc(g.value_text()),
                esc(g.threshold_text()),
                _gate_cell(g.passed, g.threshold),
            ]
            for g in m.gates
        ]
        + [
            [
                esc(f"{g.name} vs {g.baseline}"),
                esc(g.why),
                "not significantly worse",
                _gate_cell(g.passed, 0.0)
                if g.decides
                else '<span class="na">decides nothing</span>',
            ]
            for g in (*m.regressions, *m.retest_regressions)
        ],
        wrap=True,
    )
    source = esc(m.gates_table) if m.gates_table else "no thresholds set"
    return (
        f'<div class="cols"><div><h3>Summary</h3><table>{rows}</table></div>'
        f'<div><h3>Gates</h3>{gates}<p class="caption">{source}</p></div></div>'
    )


def _reliability(m: ModelReport) -> str:
    rows: list[list[str]] = []
    if m.noise_floor is not None:
        for name, d in m.noise_floor.dimensions.items():
            rows.append(
                ["Noise floor", esc(name), "all repeats agree", esc(stat_text(d.exact_match))]
            )
    if m.test_retest is not None:
        for name, r in m.test_retest.dimensions.items():
            rows.append(["Test-retest", esc(name), "exact match", esc(stat_text(r.exact_match))])
    if m.panel is not None:
        rows.append(["Panel", "all", "agreement within 1", esc(stat_text(m.panel.agreement))])
        rows.append(["Panel", "overall", "contested", esc(stat_text(m.panel.contested_rate))])
    if m.sme is not None:
        rows.append(["SME", esc(m.sme.dimension), "Spearman rho", esc(stat_text(m.sme.spearman))])
        rows.append(["SME", esc(m.sme.dimension), "quadratic kappa", esc(stat_text(m.sme.kappa))])
    if not rows:
        return ""
    table = _table(["Section", "Dimension", "Measure", "Value [95%]"], rows)
    return f'<div class="card"><h3>Reliability (details in report.md)</h3>{table}</div>'


def _changes(report: FolderReport, m: ModelReport) -> str:
    previous = report.previous_version
    if previous is None:
        return f"<p>{esc(report.version)} is the first prompt version: nothing to compare.</p>"
    c = m.comparison
    if c is None:
        return f"<p>No main-run rows of prompt {esc(previous)} to pair with.</p>"
    p = esc(p_value(c.mcnemar.p_value))
    lines = [
        f"<p>{c.n_pairs} items paired. Detection of planted defects: {esc(c.before)} "
        f"{esc(rate_text(c.detection_before))} &rarr; {esc(c.after)} "
        f"{esc(rate_text(c.detection_after))}. Flips: <b>{c.mcnemar.b}</b> caught &rarr; missed, "
        f"<b>{c.mcnemar.c}</b> missed &rarr; caught; two-sided McNemar exact p = {p} "
        f"(n = {c.mcnemar.n}).</p>"
    ]
    if c.flips:
        lines.append(
            _table(
                ["Item", "Category", esc(c.before), "", esc(c.after)],
                [
                    [
                        esc(f.item_id),
                        esc(_category(f.category, f.control)),
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
            f'<h3 style="margin-top:16px">Mean change per dimension ({esc(c.after)} - '
            f"{esc(c.before)}), paired bootstrap 95%</h3>{change_svg(c)}{change_legend()}"
        )
    return "".join(lines)


def _model_section(report: FolderReport, m: ModelReport) -> str:
    notes = "".join(f'<li class="note">{esc(note)}</li>' for note in m.notes)
    histograms = "".join(histogram_svg(dim, values) for dim, values in m.scores.items())
    against = f"prompt {report.previous_version}" if report.previous_version else "previous prompt"
    return "".join(
        [
            f"<h2>Model {esc(m.model)}</h2>",
            f"<ul>{notes}</ul>" if notes else "",
            fitness_html(m),
            '<div class="card"><h3>Detection per category</h3>',
            detection_svg(m),
            '<p class="caption">Bar: share of planted defects caught. Whisker: Wilson 95% '
            "interval. Red dashes: the gate's minimum.</p></div>",
            f'<div class="card">{_facts(m)}</div>',
            _reliability(m),
            f'<div class="card">{probes_html(m.probes)}</div>' if m.probes else "",
            '<div class="card"><h3>Score distributions (main run)</h3>',
            f'<div class="grid">{histograms}</div>' if histograms else "<p>No dimensions.</p>",
            "</div>",
            f'<div class="card"><h3>Changes against {esc(against)}</h3>',
            _changes(report, m),
            "</div>",
            failures_html(m),
        ]
    )


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _banner(report: FolderReport) -> str:
    """The verdict word at the top (PASS, FAIL, NOT FIT, INCOMPLETE), then the reason that
    decides it (report.md's Result line), then the whole verdict."""
    screen = first_screen(report)
    verdict, word, result = report.verdict(), report.verdict_word(), screen.result()
    gates = sum(m.gate_counts[0] for m in report.models)  # those with a threshold, all passed
    accepted = sum(len(m.accepted_misses) for m in report.models)
    # The whole verdict, unless the Result line above already says all of it: folded, so
    # the first-screen card below stays on the first screen (its reasons say it in parts).
    whole = verdict.removeprefix(f"{word}: ").removeprefix(f"{word}, but ")
    more = (
        f"<details><summary>In full</summary>{esc(_sentence(whole))}.</details>"
        if screen.details()
        else ""
    )
    detail = (
        f"Better than chance at what the set measures; every planted item met its "
        f"expectation or is an accepted miss ({accepted} accepted), and every gate with a "
        f"threshold passed ({gates} gates)."
        if word == PASS
        else "See fitness, gates and failures."
    )
    # The Result line: its lead ("NOT FIT (accepted)") is the banner's word, its reason below.
    lead, _, reason = result.partition(": ")
    decides = f'<span class="decides">{esc(reason)}</span>' if reason else ""
    kind = WORDS[word].colour.css
    warning = baseline_warning(report)
    if warning:  # an accepted baseline worse than the prompt before it says so up here
        detail += f" Warning: {_sentence(warning)}."
    return (
        f'<div class="banner {kind}" role="status">{esc(lead)}{decides}{more}'
        f"<span>{esc(detail)}</span></div>"
    )


def render_html(report: FolderReport) -> str:
    """The whole page."""
    facts = [
        ("Prompt version", report.version),
        ("Previous version", report.previous_version or "-"),
        ("Prompt hash", report.prompt_line()),
        ("Models", ", ".join(m.model for m in report.models) or "-"),
        ("Rows by run", ", ".join(f"{r} {n}" for r, n in report.rows_by_run.items()) or "-"),
        *(
            (f"Judge fingerprint ({runs})", judge)
            for runs, judge in fingerprint_rows(report.fingerprints)
        ),
    ]
    header = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in facts)
    warnings = list(report.notes)
    if report.reprompted:
        warnings.insert(0, f"judged under more than one prompt: {', '.join(report.reprompted)}")
    notes = "".join(f'<li class="note">{esc(note)}</li>' for note in warnings)
    usage = _table(
        ["Model", "Run", "Rows", "Calls", "Input tokens", "Output tokens", "Cost (USD)"],
        [
            [
                esc(u.model),
                esc(u.run),
                *map(str, (u.rows, u.usage.calls, u.usage.input_tokens)),
                str(u.usage.output_tokens),
                esc(cost_cell(u.usage)),
            ]
            for u in report.usage
        ],
    )
    if any(u.usage.estimated_calls for u in report.usage):
        usage += f'<p class="note">{inline_html(ESTIMATED_NOTE)}</p>'
    title = f"{report.judge}, prompt {report.version}"
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{esc(title)}</title><style>{_CSS}{FAILURES_CSS}</style></head><body><main>",
            f"<h1>{esc(title)}</h1>",
            _banner(report),
            first_screen_html(first_screen(report)),
            f'<div class="card"><table>{header}</table>',
            '<p class="caption">Computed from every row of results.jsonl. Full tables: '
            '<a href="report.md">report.md</a>, <a href="report.json">report.json</a>.</p>',
            f"<ul>{notes}</ul>" if notes else "",
            "</div>",
            leaderboard_html(report.pairwise.leaderboards) if report.pairwise else "",
            *(_model_section(report, m) for m in report.models),
            f'<h2>Cost and tokens</h2><div class="card">{usage}</div>',
            "</main>\n</body></html>\n",
        ]
    )
