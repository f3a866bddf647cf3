"""How the finale writes numbers and JSON, shared by the promotion, the report and markdown."""

from __future__ import annotations

import json
import math
from typing import Any


def num(value: float | None, places: int = 4) -> str:
    return "-" if value is None else f"{value:.{places}f}"


def round4(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), 4)


def usd(value: float | None) -> str:
    if value is None:
        return "none"
    return f"${value:.4f}" if 0 < value < 0.01 else f"${value:.2f}"


def dump_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
