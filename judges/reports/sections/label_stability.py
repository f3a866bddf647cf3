"""The label-stability section of a report: does each label survive another draw?"""

from __future__ import annotations

from judges.core.quoting import md_cell
from judges.stats.reliability.label_stability import LabelStability

_WHAT = {
    "retest": "of the units given a value in run `main`, the share run `retest` gave again",
    "noise": "of the units whose first repeat has a value, the share where every repeat agrees",
}


def label_stability_md(result: LabelStability) -> list[str]:
    """Markdown lines: one row per field overall, then one per value, each with its interval."""
    lines = [
        f"### Label stability (run `{result.run}`)",
        "",
        f"Per value, {_WHAT.get(result.run, result.run)} (Wilson 95% interval, n = units: "
        "items, or item x criterion pairs).",
        "",
        "| Field | Value | Kept | Left out |",
        "|---|---|---|---|",
    ]
    for name, field in result.fields.items():
        left_out = ", ".join(f"{k}: {v}" for k, v in field.excluded.items()) or "none"
        lines.append(f"| {name} | all | {field.overall} | {left_out} |")
        for value, rate in field.per_value.items():
            lines.append(f"| {name} | {md_cell(str(value))} | {rate} | |")  # a judge's label
    constant = [name for name, field in result.fields.items() if len(field.per_value) == 1]
    if constant:
        lines += [
            "",
            f"{', '.join(constant)}: every unit has one and the same value, so stability here "
            "says nothing about discrimination (a constant judge is perfectly stable).",
        ]
    return [*lines, ""]
