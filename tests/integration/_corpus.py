"""A tiny corpus judged through the fake judge: its files and the judge's replies; the
`corpus` fixture (in conftest.py) lays it out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ._support import Received, product_identity_verdict

QUESTION = "What does a barrier reverse convertible pay at maturity?"
REFERENCE = "Nominal in cash unless the barrier was touched and the final fixing is below strike."
ANSWERS = {
    "good": "Cash at nominal unless the barrier was touched and it closes below the strike.",
    "mixup": "MIXUP: a capital-protected note always repays the nominal.",
    "broken": "BROKEN: the judge cannot read this one.",
}


def manifest() -> str:
    return """name = "tiny"
source = "written for this test"
licence = "unknown"

[scale]
low = 0
high = 9
step = 1

[judges.new]
description = "product_identity 0.3 on the fake judge"

[judges.new.judged]
judge = "product_identity"
version = "0.3"
model = "local:fake-judge"
score = "core_total"
output = "answer"
runs = 2
"""


def write_corpus(folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / "corpus.toml").write_text(manifest())
    items = [{"id": f"Q{i}", "inputs": {"question": QUESTION, "reference": REFERENCE}}
             for i in (1, 2, 3)]  # fmt: skip
    outputs = [{"system": system, "item": f"Q{i}", "output": answer}
               for system, answer in ANSWERS.items() for i in (1, 2, 3)]  # fmt: skip
    (folder / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    (folder / "outputs.jsonl").write_text("".join(json.dumps(o) + "\n" for o in outputs))


def reply(received: Received) -> str:
    prompt = received.body["messages"][-1]["content"]
    if "BROKEN" in prompt:
        return "no JSON here at all"
    verdict: dict[str, Any] = product_identity_verdict(1 if "MIXUP" in prompt else 3, "fake")
    return json.dumps(verdict)
