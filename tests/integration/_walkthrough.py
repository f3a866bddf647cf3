"""What the walkthrough's tests share: its judge model, the options of every inner run, the
`judges` command run in-process, the scaffold's answer key, and the judge the `repository`
fixture answers with (tests/integration/conftest.py)."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

from judges.cli.init import SKELETON
from judges.cli.main import main as judges_main

from ._support import Received

MODEL = "local:fake-judge"
# Plugins the inner runs do not need (pytest-benchmark would warn under the outer xdist).
INNER_OPTIONS = ["-p", "no:cacheprovider", "-p", "no:hypothesispytest"]
INNER_OPTIONS += ["-p", "no:anyio", "-p", "no:benchmark"]


# The one planted defect the walkthrough's judge misses (SR-003: a shipping refund promised).
MISSED_SLUG = "refunds-shipping"


def right_verdict(item: dict[str, Any]) -> dict[str, int]:
    """The verdict that meets an item's expectations: a bounded field at its far end, an
    unbounded one at 3 (the reply does nothing wrong there)."""
    values = {}
    for field in ("accuracy", "helpfulness"):
        bounds = [e for e in item["expect"] if e["field"] == field]
        values[field] = 0 if any(e["op"] == "<=" for e in bounds) else 3
    return values


def scaffold_items() -> list[dict[str, Any]]:
    """The planted items `judges init` writes (their replies are no template)."""
    text = (SKELETON / "items.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def judged_reply(received: Received) -> str:
    """The support reply a request asks the judge to grade."""
    prompt = received.body["messages"][-1]["content"]
    return prompt.split("## Support reply", 1)[1].split("## Your task", 1)[0].strip()


def _walkthrough_key() -> dict[str, dict[str, int]]:
    key = {item["inputs"]["reply"]: right_verdict(item) for item in scaffold_items()}
    (missed,) = [i["inputs"]["reply"] for i in scaffold_items() if i["slug"] == MISSED_SLUG]
    key[missed] = {"accuracy": 3, "helpfulness": 3}
    return key


WALKTHROUGH_KEY = _walkthrough_key()


def walkthrough_judge(received: Received) -> str:
    """A judge right on every scaffold item but one: it misses the shipping refund (SR-003)."""
    verdict = {**WALKTHROUGH_KEY[judged_reply(received)], "rationale": "read the reply"}
    return json.dumps(verdict)


def command(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = judges_main(argv)
    return code, out.getvalue()
