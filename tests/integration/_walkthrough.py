"""What the walkthrough's tests share: its judge model, the options of every inner run, the
`judges` command run in-process, and the keyword judge the `repository` fixture answers with
(tests/integration/conftest.py)."""

from __future__ import annotations

import contextlib
import io
import json

from judges.cli.main import main as judges_main

from ._support import Received

MODEL = "local:fake-judge"
# Plugins the inner runs do not need (pytest-benchmark would warn under the outer xdist).
INNER_OPTIONS = ["-p", "no:cacheprovider", "-p", "no:hypothesispytest"]
INNER_OPTIONS += ["-p", "no:anyio", "-p", "no:benchmark"]


def keyword_judge(received: Received) -> str:
    """A judge that reads the reply for the planted errors, but misses the shipping one."""
    prompt = received.body["messages"][-1]["content"]
    reply = prompt.split("## Support reply", 1)[1].split("## Your task", 1)[0]
    accuracy = 0 if "90 days" in reply else 3
    helpfulness = 0 if ("loyalty" in reply or "FAQ" in reply) else 3
    verdict = {"accuracy": accuracy, "helpfulness": helpfulness, "rationale": "read the reply"}
    return json.dumps(verdict)


def command(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = judges_main(argv)
    return code, out.getvalue()
