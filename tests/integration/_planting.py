"""What the planting walkthroughs share: docs/planting.md's blocks, and the real rows
its commands plant from."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "planting.md"
ITEMS = ("jacket", "lamp", "kettle", "backpack", "chair", "scarf")


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def printed() -> list[list[str]]:
    """The page's untagged blocks, in order: what the commands print."""
    blocks, current, language = [], [], None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            if language is None:
                language = line[3:]
                current = []
            else:
                if language == "":
                    blocks.append(current)
                language = None
        elif language is not None:
            current.append(line)
    return blocks


def commands() -> list[list[str]]:
    return [[line for line in block.splitlines() if line.strip()] for block in blocks("bash")]


def real_rows() -> list[dict[str, str]]:
    """14 rows a support team's system answered: 12 good ones, two the team labelled bad."""
    rows = []
    for i in range(14):
        item, days, price = ITEMS[i % len(ITEMS)], (14, 30, 60)[i % 3], 40 + 20 * i
        rows.append({
            "id": f"{item}-{i}",
            "policy": f"Refunds: an unused {item} can be returned within {days} days of "
            "delivery for a refund to the original payment method. Shipping costs are not "
            "refunded.",
            "question": f"I bought a {item} for {price} EUR. Can I send it back?",
            "answer": f"Yes: you can return the {item} within {days} days of delivery. The "
            f"refund of {price} EUR goes to your original payment method. Shipping costs "
            "are not refunded.",
            "label": "good" if i < 12 else "bad",
        })  # fmt: skip
    return rows
