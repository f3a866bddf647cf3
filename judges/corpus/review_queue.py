"""The next human labelling round: every judgement whose verdict changed between the two
judges (or two runs), the largest score change first. All of them, never a sample: a queue
that drops rows silently is a queue no one can trust."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from judges.corpus.change import verdicts
from judges.corpus.manifest import Scale
from judges.storage.files import atomic_write_text

QUEUE_FILE = "review_queue.jsonl"


def changed_verdicts(
    systems: tuple[str, ...],
    items: tuple[str, ...],
    before: np.ndarray,
    after: np.ndarray,
    scale: Scale,
    names: tuple[str, str],
) -> list[dict[str, Any]]:
    vb, va = verdicts(before, scale), verdicts(after, scale)
    changed = ~np.isnan(vb) & ~np.isnan(va) & (vb != va)
    rows = []
    for s, i in zip(*np.nonzero(changed), strict=True):
        rows.append({
            "system": systems[s], "item": items[i],
            names[0]: float(before[s, i]), names[1]: float(after[s, i]),
            "change": float(after[s, i] - before[s, i]),
            "reason": f"verdict changed from {names[0]} to {names[1]}",
        })  # fmt: skip
    rows.sort(key=lambda row: (-abs(row["change"]), row["system"], row["item"]))
    return rows


def queue_text(rows: list[dict[str, Any]]) -> str:
    # One encoder for every row: json.dumps with options builds a new one per call, a
    # measurable cost at the hundreds of thousands of rows a large log's queue holds.
    encode = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode
    return "".join(encode(row) + "\n" for row in rows)


def write_queue(folder: Path, rows: list[dict[str, Any]]) -> Path:
    path = folder / QUEUE_FILE
    atomic_write_text(path, queue_text(rows))
    return path
