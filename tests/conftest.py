"""Fixtures that several test modules share; helpers that are not fixtures live in private
`tests/_*.py` modules, and no test module imports another."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judges.core.spec import load_judge
from tests._report_demo import CATEGORIES, MODEL


@pytest.fixture
def demo(tmp_path: Path) -> dict[str, Any]:
    """A judge `demo` with versions 1.0 and 1.1, its planted set, gates and accepted misses."""
    prompts = tmp_path / "prompts" / "demo"
    prompts.mkdir(parents=True)
    (prompts / "judge.toml").write_text(
        'name = "demo"\nmodule = "judges.builtin.product_identity"\n'
        f'baseline_model = "{MODEL}"\n'
        'dimensions = ["factual_accuracy", "completeness", "causal_reasoning", "core_total"]\n'
        'flag = "product_identity_match"\n'
    )
    for version in ("1.0", "1.1"):
        (prompts / f"{version}.md").write_text("Judge {{answer}} against {{reference}}.\n")
    planted = tmp_path / "planted_sets" / "demo"
    planted.mkdir(parents=True)
    items = [
        {
            "id": item,
            "slug": f"item-{item[-1]}",
            "judge": "demo",
            "category": category,
            "control": category == "control",
            "inputs": {"question": "q?", "reference": "r.", "answer": "a."},
            "expect": [{"field": "factual_accuracy", "op": "<=", "value": 1}],
            "provenance": {"source": "hand"},
        }
        for item, category in CATEGORIES.items()
    ]
    (planted / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    (planted / "gates.toml").write_text(
        f'["{MODEL}"."1.1"]\nmin_detection = {{ cousin = 0.5, fabrication = 0.9 }}\n'
        "max_control_false_positive = 0.2\nmax_error_rate = 0.5\n"
    )
    (planted / "expectations.toml").write_text(
        f'["{MODEL}"."1.1"]\nPE-01 = "loses the cousin case to the longer preamble"\n'
    )
    spec = load_judge(prompts)
    return {
        "root": tmp_path,
        "reports": tmp_path / "reports",
        "planted": tmp_path / "planted_sets",
        "catalog": {"demo": spec},
    }
