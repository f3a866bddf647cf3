"""The Result line: a verdict and the reason that decides it, in one screen line."""

from __future__ import annotations

from judges.verdicts.deciding import Cause, Reason
from judges.verdicts.vocabulary import NOT_FIT, WORDS

__all__ = ["LINE_LIMIT", "RESULT_LIMIT", "one_line"]

LINE_LIMIT = 160  # one screen line: the Result line, a terminal verdict line
RESULT_LIMIT = LINE_LIMIT - len("**Result: **")  # report.md's line, bold marks and all


def one_line(word: str, label: str, reason: Reason | None, limit: int) -> str:
    """The verdict and the reason that decides it, in at most `limit` characters: the
    figure's parts go first when room runs out, from the last ("value n=20; 3 of 3 deciding
    tests fail"), and the reason's name is cut (" ...") only when it alone is too long."""
    lead = label if label == f"{NOT_FIT} (accepted)" else word
    if reason is None:
        return _cut(lead, limit)
    # A reason that qualifies a passing word (a blind gate's) is a caveat: "PASS, but ...".
    caveat = WORDS[word].passing and reason.cause != Cause.PASSED
    head = f"{lead}, but {reason.name}" if caveat else f"{lead}: {reason.name}"
    parts = reason.figure.split("; ") if reason.figure else []
    # A blind gate's figure reads on ("...: 48 planted defects would see 15 points (it has 32)").
    opens, closes = (": ", "") if reason.cause == Cause.BLIND else (" (", ")")
    lines = [f"{head}{opens}{'; '.join(parts[:k])}{closes}" for k in range(len(parts), 0, -1)]
    lines.append(head)
    fitting = [line for line in lines if len(line) <= limit]
    return fitting[0] if fitting else _cut(head, limit)


def _cut(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, ending " ..." where cut: at a space in the
    second half of the room, else inside a word (a long model name is still named).
    textwrap.shorten would drop a word longer than the room whole."""
    if len(text) <= limit:
        return text
    room = limit - len(" ...")
    space = text.rfind(" ", 0, room + 1)
    return text[: space if space > room // 2 else room].rstrip() + " ..."
