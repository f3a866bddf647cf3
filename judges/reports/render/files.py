"""Every report file of a folder, by name: the one place that knows all the renderers."""

from __future__ import annotations

import json
import math
from typing import Any

from judges.reports.model.data import (
    COMPARISON_MD,
    FAILURES_MD,
    INDEX_HTML,
    REPORT_JSON,
    REPORT_MD,
    FolderReport,
)
from judges.reports.model.summary import first_screen
from judges.reports.render.failures_md import render_failures_md
from judges.reports.render.html import render_html
from judges.reports.render.markdown import render_comparison_md, render_report_md


def _finite(value: Any) -> Any:
    """JSON has no nan or infinity: a verdict that carries one shows null instead."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def render_report_json(report: FolderReport) -> str:
    # The first screen's reasons and deciding figures, as report.md and index.html show them.
    screen = first_screen(report)
    content = _finite(
        report.as_dict()
        | {
            "verdict": screen.result(),  # the Result line
            "verdict_details": screen.details(),  # the whole verdict, when it says more
            "first_screen": screen.as_dict(),
        }
    )
    return json.dumps(content, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render_files(report: FolderReport) -> dict[str, str]:
    """Every report file of the folder but results.jsonl, by file name."""
    files = {
        REPORT_MD: render_report_md(report),
        FAILURES_MD: render_failures_md(report),
        REPORT_JSON: render_report_json(report),
        INDEX_HTML: render_html(report),
    }
    if report.previous_version is not None:
        files[COMPARISON_MD] = render_comparison_md(report)
    return files
