"""A small benchmark in the neutral format, written in tmp_path, whose every figure is
computed by hand in `HAND` (tests/test_benchmark_rules.py and test_benchmark_board.py).

Five pairs in two subsets (math: gold A, B and tie; code: gold A and B), three judges:

    item  gold  llm-x (orders 1, 2)  llm-y (orders 1, 2)  rm-z scores A / B (one order)
    m1    A     A, A                 B, B                 2.0 / 1.0   -> A
    m2    B     B, tie               none, none           0.5 / 0.5   -> tie (equal scores)
    m3    tie   tie, A               tie, tie             1.0 / 1.0   -> tie
    c1    A     A, B                 tie, A               0.1 / 0.9   -> B
    c2    B     none, B              A, B                 -1  / 3     -> B

`[scoring]`: a tie earns credit 1/2 (per-judgement, single-order) and votes 0; an unparsed
reply earns 0 and votes 0. The responses' lengths rise with rm-z's scores (-1 -> 1
character, 0.1 -> 2, 0.5 -> 3, 0.9 -> 4, 1.0 -> 5, 2.0 -> 6, 3 -> 7), so the score's rank
correlation with length is exactly 1.
"""

from __future__ import annotations

import json
from fractions import Fraction as F
from pathlib import Path
from typing import Any

LENGTH = {-1: 1, 0.1: 2, 0.5: 3, 0.9: 4, 1.0: 5, 2.0: 6, 3: 7}
ITEMS: list[tuple[str, str, str, tuple[float, float]]] = [
    ("m1", "math", "A", (2.0, 1.0)),
    ("m2", "math", "B", (0.5, 0.5)),
    ("m3", "math", "tie", (1.0, 1.0)),
    ("c1", "code", "A", (0.1, 0.9)),
    ("c2", "code", "B", (-1, 3)),
]
VERDICTS = {
    "llm-x": {"m1": "AA", "m2": ("B", "tie"), "m3": ("tie", "A"), "c1": "AB", "c2": ("none", "B")},
    "llm-y": {"m1": "BB", "m2": ("none", "none"), "m3": ("tie", "tie"), "c1": ("tie", "A"),
              "c2": "AB"},
}  # fmt: skip

MANIFEST = """\
name = "toybench"
description = "Five pairs, two subsets, every figure computed by hand"
source = "written by hand in tests/_toy_benchmark.py"
licence = "unknown"
orders = 2
rule = "vote"

[scoring]
tie_credit = 0.5
none_credit = 0
tie_vote = 0
none_vote = 0

[overall]
weighting = "items"

[judges."rm-z"]
orders = 1
rule = "single-order"
description = "a reward model: one score per response"
"""

# judge -> rule -> (math, code, overall weighted by items), each computed by hand.
HAND: dict[str, dict[str, tuple[F, F, F]]] = {
    "llm-x": {
        # m1 (1+1)/2, m2 (1+1/2)/2, m3 (1+0)/2 | c1 (1+0)/2, c2 (0+1)/2
        "per-judgement": (F(9, 4) / 3, F(1, 2), F(13, 4) / 5),
        # votes m1 +2, m2 +1, m3 0 | c1 0, c2 +1
        "vote": (F(2, 3), F(1, 2), F(3, 5)),
        # order 1: A right, B right, tie on a tie right | A right, none 0
        "single-order": (F(1), F(1, 2), F(4, 5)),
        "both-orders": (F(1, 3), F(0), F(1, 5)),
        # agreeing orders keep their verdict, else a tie: m1 A 1, m2 tie 1/2, m3 tie on a
        # tie 1 | c1 tie 1/2, c2 (none, B) tie 1/2
        "consistent-or-tie": (F(5, 6), F(1, 2), F(7, 10)),
    },
    "llm-y": {
        # m1 0, m2 0, m3 1 | c1 (1/2+1)/2, c2 (0+1)/2
        "per-judgement": (F(1, 3), F(5, 8), F(9, 4) / 5),
        # votes m1 -2, m2 0, m3 +2 | c1 +1, c2 0
        "vote": (F(1, 3), F(1, 2), F(2, 5)),
        "single-order": (F(1, 3), F(1, 4), F(3, 10)),
        "both-orders": (F(1, 3), F(0), F(1, 5)),
        # m1 B wrong 0, m2 none 0, m3 tie on a tie 1 | c1 tie 1/2, c2 tie 1/2
        "consistent-or-tie": (F(1, 3), F(1, 2), F(2, 5)),
    },
    "rm-z": {
        # m1 right 1, m2 tie 1/2, m3 tie on a tie 1 | c1 wrong 0, c2 right 1
        "per-judgement": (F(5, 6), F(1, 2), F(7, 10)),
        "single-order": (F(5, 6), F(1, 2), F(7, 10)),
    },
}


def text(length: int) -> str:
    return "x" * length


def item_rows() -> list[dict[str, Any]]:
    return [
        {"id": item, "subset": subset, "gold": gold,
         "inputs": {"prompt": f"question {item}", "A": text(LENGTH[a]), "B": text(LENGTH[b])}}
        for item, subset, gold, (a, b) in ITEMS
    ]  # fmt: skip


def judgement_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for judge, verdicts in VERDICTS.items():
        for item, pair in verdicts.items():
            for order, verdict in enumerate(pair, start=1):
                rows.append({"judge": judge, "item": item, "order": order, "verdict": verdict,
                             "reply": f"[[{verdict}]]"})  # fmt: skip
    for item, _, _, (a, b) in ITEMS:
        rows.append({"judge": "rm-z", "item": item, "order": 1, "scores": {"A": a, "B": b}})
    return rows


def published_rows() -> list[dict[str, Any]]:
    """Every hand-computed figure, as a benchmark would publish it: percent, 2 decimals."""
    rows = []
    for judge, rules in HAND.items():
        for rule, values in rules.items():
            for subset, value in zip(("math", "code", None), values, strict=True):
                shown = round(float(value * 100), 2)  # none of these is a rounding tie
                rows.append({"judge": judge, "subset": subset, "rule": rule, "value": shown,
                             "decimals": 2})  # fmt: skip
    return rows


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def write_toy(folder: Path, manifest: str = MANIFEST, published: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "benchmark.toml").write_text(manifest, encoding="utf-8")
    write_jsonl(folder / "items.jsonl", item_rows())
    write_jsonl(folder / "judgements.jsonl", judgement_rows())
    if published:
        write_jsonl(folder / "published.jsonl", published_rows())
    return folder
