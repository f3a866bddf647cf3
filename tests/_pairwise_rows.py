"""A pairwise judgement row as the harness writes it: the winner in each order, met when
the judge named the better output (`gold`) in both."""

from __future__ import annotations

from judges.core.results import JudgementRow

MODEL = "local:smollm2-135m"


def pairwise_row(
    version: str, item_id: str, category: str, gold: str, winners: tuple[str, str]
) -> JudgementRow:
    return JudgementRow(
        judge="pairwise",
        prompt_version=version,
        prompt_hash="h",
        model=MODEL,
        item_id=item_id,
        category=category,
        control=False,
        status="ok",
        expect=[
            {"field": "winner_original", "op": "==", "value": gold},
            {"field": "winner_swapped", "op": "==", "value": gold},
        ],
        met=winners == (gold, gold),
        verdict={"winner_original": winners[0], "winner_swapped": winners[1]},
    )
