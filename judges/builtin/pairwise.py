"""Verdict model of the pairwise judge: which of two outputs follows an instruction better.

Every judgement asks twice, one facet per order: `original` shows the outputs in the
item's order (output_1 as "Output (a)"), `swapped` shows them the other way round. Each
reply names the output it prefers by its position on screen ("a" or "b"); the verdict maps
both back to the item's labels ("1" or "2"), so the two orders can be compared. A reply
that names no winner (`"winner": null`, as imported releases may hold) makes the verdict
`incomplete`, naming the order: an explicit error row that still keeps the other order's
winner, so no judgement is dropped from the statistics.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from judges.core.parsing import reply_as

Position = Literal["a", "b"]
Label = Literal["1", "2"]
ORDERS = ("original", "swapped")


class Inputs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    instruction: str = Field(min_length=1)
    output_1: str
    output_2: str

    def prompt_fields(self) -> dict[str, str]:
        return {
            "instruction": self.instruction,
            "output_1": self.output_1,
            "output_2": self.output_2,
        }


class PairwiseReply(BaseModel):
    """One order's reply: the preferred output by position, and why (or the released text)."""

    model_config = ConfigDict(extra="ignore")

    winner: Position | None
    rationale: str = ""


def reply_model(prompt_version: str, facet: str | None = None) -> type[BaseModel]:
    return PairwiseReply


def request_schema(prompt_version: str, facet: str | None, inputs: Inputs) -> dict[str, Any]:
    """A judge with a grammar must name a winner; only a release may hold a null one."""
    return {
        "properties": {
            "winner": {"enum": ["a", "b"], "type": "string"},
            "rationale": {"type": "string"},
        },
        "required": ["winner", "rationale"],
        "type": "object",
        "additionalProperties": False,
    }


def to_label(order: str, winner: Position | None) -> Label | None:
    """The item's label of the output shown at `winner` in this order."""
    if winner is None:
        return None
    if order not in ORDERS:
        raise ValueError(f"order {order!r} is not one of {', '.join(ORDERS)}")
    first = winner == "a"
    return "1" if first == (order == "original") else "2"


def to_position(order: str, label: Label | None) -> Position | None:
    """The position on screen, in this order, of the output with the item's `label`."""
    if label is None:
        return None
    if order not in ORDERS:
        raise ValueError(f"order {order!r} is not one of {', '.join(ORDERS)}")
    return "a" if (label == "1") == (order == "original") else "b"


class PairwiseVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # The item's label ("1": output_1) each order preferred; None: that reply named none.
    winner_original: Label | None
    winner_swapped: Label | None
    # Same winner in both orders (None when either order named no winner).
    consistent: bool | None
    missing: tuple[str, ...] = ()
    status: Literal["ok", "incomplete"]
    judge_prompt_version: str
    raw: dict[str, str]


def build_verdict(
    replies: dict[str | None, tuple[BaseModel, str]], inputs: Inputs, prompt_version: str
) -> PairwiseVerdict:
    absent = [order for order in ORDERS if order not in replies]
    if absent:
        raise ValueError(f"no reply for order(s) {absent}: the judge.toml facets must be {ORDERS}")
    winners = {
        order: to_label(order, reply_as(replies, order, PairwiseReply).winner) for order in ORDERS
    }
    missing = tuple(order for order in ORDERS if winners[order] is None)
    return PairwiseVerdict(
        winner_original=winners["original"],
        winner_swapped=winners["swapped"],
        consistent=None if missing else winners["original"] == winners["swapped"],
        missing=missing,
        status="incomplete" if missing else "ok",
        judge_prompt_version=prompt_version,
        raw={order: replies[order][1] for order in ORDERS},
    )
