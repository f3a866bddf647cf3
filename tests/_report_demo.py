"""The judge `demo` of the report tests: its rows, built by hand, and where its reports go.

`tests/conftest.py`'s `demo` fixture lays the judge and its planted set out in tmp_path.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from judges.core.results import Expectation, JudgementRow, Usage

MODEL = "local:smollm2-135m"
RAW_MISS = '{"factual_accuracy": 3, "note": "looks right to me"}'
# Detection of the eight main items per version: True = the judge met the expectation.
BEFORE = {"PE-01": True, "PE-02": False, "PE-03": False, "PE-04": False, "PE-05": True,
          "PE-06": False, "PE-07": True}  # fmt: skip
AFTER = {"PE-01": False, "PE-02": True, "PE-03": True, "PE-04": True, "PE-05": True,
         "PE-06": True, "PE-07": True}  # fmt: skip
CATEGORIES = {"PE-01": "cousin", "PE-02": "cousin", "PE-03": "cousin", "PE-04": "cousin",
              "PE-05": "fabrication", "PE-06": "fabrication", "PE-07": "control",
              "PE-08": "fabrication"}  # fmt: skip


def row(
    version: str,
    item_id: str,
    met: bool | None,
    *,
    judge: str = "demo",
    status: str = "ok",
    run: str = "main",
    repeat: int = 0,
    accuracy: int | None = None,
    raw: str | None = None,
) -> JudgementRow:
    category = CATEGORIES[item_id]
    ok = status == "ok"
    if accuracy is None:
        accuracy = 1 if met else 3
    verdict = {
        "factual_accuracy": accuracy,
        "completeness": 2,
        "causal_reasoning": 1,
        "core_total": accuracy + 3,
        "product_identity_match": True,
        "rationale": f"{item_id} judged",
        "raw": raw or json.dumps({"factual_accuracy": accuracy}),
    }
    return JudgementRow(
        judge=judge,
        prompt_version=version,
        prompt_hash=f"hash-{version}",
        model=MODEL,
        item_id=item_id,
        category=category,
        control=category == "control",
        run=run,
        repeat=repeat,
        status=status,  # type: ignore[arg-type]
        verdict=verdict if ok else None,
        error=None if ok else "connection reset",
        expect=[Expectation(field="factual_accuracy", op="<=", value=1)],
        met=met if ok else None,
        usage=Usage(calls=1, input_tokens=200, output_tokens=40, cost_usd=0.0015),
        latency_s=random.random(),
    )


def version_rows(
    version: str, detection: dict[str, bool], judge: str = "demo"
) -> list[JudgementRow]:
    rows = [
        row(version, item, met, judge=judge, raw=RAW_MISS if item == "PE-02" else None)
        for item, met in detection.items()
    ]
    rows.append(row(version, "PE-08", None, judge=judge, status="transport"))
    rows += [
        row(version, "PE-05", True, judge=judge, run="noise", repeat=r, accuracy=1 + r % 2)
        for r in range(3)
    ]
    return rows


def folder(demo: dict[str, Any], version: str) -> Path:
    return demo["reports"] / "demo" / version
