"""A labelled row for the pass-rate estimate: a control or a defect of judge `j`, met when ok."""

from __future__ import annotations

from judges.core.results import JudgementRow


def estimate_row(
    item: str, control: bool, verdict: dict | None, status: str = "ok"
) -> JudgementRow:
    return JudgementRow(
        judge="j", prompt_version="1", prompt_hash="h", model="m", item_id=item,
        category="control" if control else "cousin", control=control, status=status,
        verdict=verdict, met=None if status != "ok" else True,
    )  # fmt: skip
