"""finale_report.md from the report data: one small function per section.

Every section reads only the report dictionary, so the markdown can be rebuilt from
finale_report.json alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from judges.finale.config import CROSS, PRIMARY
from judges.finale.formats import num as _num
from judges.finale.formats import usd as _usd
from judges.finale.plan import FINALISTS_FILE

__all__ = ["METADATA_BEGIN", "METADATA_END", "render_markdown"]

# The same markers as the judge reports: everything outside them is identical between runs.
METADATA_BEGIN = "<!-- judges:run-metadata:begin -->"
METADATA_END = "<!-- judges:run-metadata:end -->"
_SHORT = {"faithfulness": "Faith", "coverage": "Cov", "coherence": "Coh", "fluency": "Flu"}

Report = Mapping[str, Any]


def render_markdown(report: Report) -> str:
    """finale_report.md, laid out as the methodology asks, then the run-metadata block."""
    lines: list[str] = []
    for section in (_head, _incomplete, _verdicts, _agreement, _errors, _promotion, _missing):
        lines += section(report)
    lines += _metadata(report)
    return "\n".join(lines) + "\n"


def _contested_cell(entry: Mapping[str, Any]) -> str:
    if entry["cross"] is None:
        return "not cross-checked"
    if entry["contested"] is None:
        return "n/a (no paired scores)"
    diff = entry["difference"]
    return f"{'**yes**' if entry['contested'] else 'no'} ({diff:+.2f})"


def _head(report: Report) -> list[str]:
    cost = report["cost"]
    return [
        f"# Finale sweep \u2014 {report['tag']}",
        "",
        f"_Total spend: {_usd(cost['total_usd'])} (cap {_usd(cost['cap_usd'])})_",
        "",
        f"Judge `{report['judge']}` prompt {report['prompt_version']}, one call per dimension "
        f"({', '.join(report['dimensions'])}; integers 1-5). "
        f"Qualifier: {report['promotion']['qualifier_metric']}.",
        "",
        f"- Primary judge: {report['judges'][PRIMARY]['label']}",
        f"- Cross-check judge: {report['judges'][CROSS]['label']}",
        f"- Contested: the primary and cross-check overall means, over the episodes both "
        f"scored, differ by more than {report['contested_threshold']:g}.",
        "",
    ]


def _incomplete(report: Report) -> list[str]:
    missing = report["missing"]
    if not missing["judgements"]:
        return []
    return [
        f"> **Incomplete: the cost cap stopped the run.** {missing['judgements']} of "
        f"{report['planned']['judgements']} judgements ({missing['dimension_scores']} "
        "dimension scores) are missing; see [What is missing](#what-is-missing). Means "
        "below cover only what was scored.",
        "",
    ]


def _verdicts(report: Report) -> list[str]:
    dims = report["dimensions"]
    head = ["Rank", "Run", *(_SHORT.get(d, d[:4].title()) for d in dims), "Mean", "Contested?"]
    lines = ["## Verdicts by stratum", ""]
    for verdict in report["verdicts"]:
        lines += [f"### {verdict['stratum']}", ""]
        if not verdict["finalists"]:
            lines += ["No finalists.", ""]
            continue
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for e in verdict["finalists"]:
            p = e["primary"]
            run = e["run"] if p["scored"] == e["episodes"] else (
                f"{e['run']} ({p['scored']}/{e['episodes']} episodes)"
            )  # fmt: skip
            cells = [str(e["rank"]), run, *(_num(p["dimensions"][d], 2) for d in dims),
                     _num(p["overall"], 2), _contested_cell(e)]  # fmt: skip
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def _agreement_row(e: Mapping[str, Any]) -> str:
    rate = e["agreement"]["exact_or_adjacent"]
    agree = (
        "-" if not rate["n"] else
        f"{rate['successes']}/{rate['n']} = {rate['rate']:.2f} "
        f"[{rate['low']:.2f}, {rate['high']:.2f}]"
    )  # fmt: skip
    return (
        f"| {e['stratum']} | {e['run']} | {_num(e['primary']['overall'], 2)} | "
        f"{_num(e['cross']['overall'], 2)} | "
        f"{'-' if e['difference'] is None else format(e['difference'], '+.2f')} | "
        f"{agree} | {_contested_cell(e)} |"
    )


def _agreement(report: Report) -> list[str]:
    lines = ["## Cross-check agreement", ""]
    checked = [e for v in report["verdicts"] for e in v["finalists"] if e["cross"] is not None]
    if not checked:
        return [*lines, "No finalist was cross-checked.", ""]
    lines += [
        "Exact-or-adjacent agreement (|primary - cross| <= 1) over every (episode, "
        "dimension) pair both judges scored, with a 95% Wilson interval.",
        "",
        "| Stratum | Run | Primary mean | Cross mean | Difference | Agreement | Contested? |",
        "|---|---|---|---|---|---|---|",
        *(_agreement_row(e) for e in checked),
    ]
    pooled = report["agreement"]["pooled"]
    if pooled and pooled["n"]:
        lines += [
            "",
            f"Pooled over all cross-checked finalists: {pooled['successes']}/{pooled['n']} = "
            f"{pooled['rate']:.2f} [{pooled['low']:.2f}, {pooled['high']:.2f}].",
        ]
    return [*lines, ""]


def _errors(report: Report) -> list[str]:
    errors = [(run, role, counts) for run, by_role in report["errors"].items()
              for role, counts in by_role.items() if counts]  # fmt: skip
    lines = ["## Errors", ""]
    if errors:
        lines += ["| Run | Judge | Failed judgements |", "|---|---|---|"]
        for run, role, counts in errors:
            text = ", ".join(f"{status} {n}" for status, n in counts.items())
            lines.append(f"| {run} | {role} | {text} |")
    else:
        lines.append("No judgement failed (cost-capped ones are listed under what is missing).")
    return [*lines, ""]


def _stratum_details(s: Mapping[str, Any], metric: str, floor_ratio: float) -> list[str]:
    lines = [f"### {s['name']}", ""]
    if s["leader"] is None:
        return [*lines, "No candidates.", ""]
    lines += [
        f"- Leader: {s['leader']} ({metric} {_num(s['leader_metric'])})",
        f"- Floor: {_num(s['floor'])} ({floor_ratio:g} x leader)",
        f"- Promoted: {', '.join(s['promoted']) or 'none'}",
    ]
    if s["rejected"]:
        lines.append("- Rejected:")
        lines += [f"  - {r['run']} ({_num(r['metric'])}): {r['reason']} ({r['detail']})"
                  for r in s["rejected"]]  # fmt: skip
    else:
        lines.append("- Rejected: none")
    return [*lines, ""]


def _promotion(report: Report) -> list[str]:
    promotion = report["promotion"]
    rules = promotion["rules"]
    metric = promotion["qualifier_metric"]
    lines = [
        "## Promotion details",
        "",
        f"By {metric}: top {rules['top_per_stratum']} per stratum, floor "
        f"{rules['floor_ratio']:g} x stratum leader, global cap {rules['global_cap']}; "
        f"cross-check on the top {rules['cross_top_per_stratum']} finalists per stratum by "
        f"{metric}. First matching stratum wins.",
        "",
    ]
    for s in promotion["strata"]:
        lines += _stratum_details(s, metric, rules["floor_ratio"])
    if promotion["unstratified"]:
        lines += ["### Unstratified (not promoted)", ""]
        lines += [f"- {r['run']} ({_num(r['metric'])}): {r['detail']}"
                  for r in promotion["unstratified"]]  # fmt: skip
        lines.append("")
    return lines


def _missing(report: Report) -> list[str]:
    missing = report["missing"]
    if not missing["judgements"]:
        return []
    cost = report["cost"]
    return [
        "## What is missing",
        "",
        f"The cost cap ({_usd(cost['cap_usd'])}) was reached after {_usd(cost['total_usd'])}; "
        "these judgements were not made (every dimension of each is a `cost_cap` row in "
        f"{FINALISTS_FILE}). Raise the cap and run again to complete them.",
        "",
        "| Run | Episode | Judge |",
        "|---|---|---|",
        *(f"| {m['run']} | {m['episode_id']} | {m['judge']} |" for m in missing["items"]),
        "",
    ]


def _metadata(report: Report) -> list[str]:
    return [
        "---",
        "",
        METADATA_BEGIN,
        "## Run metadata",
        "",
        "Everything above is identical between runs over the same judge replies; this block "
        "is not.",
        "",
        *(f"- {key}: {value}" for key, value in report["run_metadata"].items()),
        METADATA_END,
    ]
