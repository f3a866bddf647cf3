"""How the run was started and how it ends, in plain functions (no pytest import).

Which judge options a re-record command repeats, whether the user narrowed the selection on
purpose, termination signals that end the run as Ctrl-C does, and the message of a strict
XPASS of an accepted miss.
"""

from __future__ import annotations

import re
import shlex
import signal
import threading
from pathlib import Path
from typing import Any

from judges.calls.backends import ModelRef
from judges.core.checks import describe_verdict
from judges.core.results import JudgementRow


def partial_selection(config: Any) -> str | None:
    """How the user narrowed the run on purpose (-k, -m, node ids, --lf), or None."""
    how = []
    if config.getoption("keyword", None):
        how.append(f"-k {config.getoption('keyword')!r}")
    if config.getoption("markexpr", None):
        how.append(f"-m {config.getoption('markexpr')!r}")
    if config.getoption("lf", None):
        how.append("--lf")
    if config.getoption("deselect", None):
        how.append("--deselect")
    node_ids = [arg for arg in config.args if "::" in arg]
    if node_ids:
        more = f" and {len(node_ids) - 1} more" if len(node_ids) > 1 else ""
        how.append(f"node id {node_ids[0]}{more}")
    return ", ".join(how) or None


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"stopped by {signal.Signals(signum).name}")


def interrupt_on_termination() -> dict[int, Any]:
    """SIGTERM and SIGHUP end the run as Ctrl-C does: rows and reports of what finished are
    written, and the embedded server is stopped. Returns the handlers to restore."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous = {}
    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None and signal.getsignal(signum) in (signal.SIG_DFL, None):
            previous[signum] = signal.signal(signum, _raise_interrupt)
    return previous


def gates_skipped_lines(reasons: list[str]) -> list[str]:
    """One line per distinct reason the set-level gates were skipped, with how many tests."""
    counts: dict[str, int] = {}
    for reason in reasons:
        counts[reason] = counts.get(reason, 0) + 1
    return [f"{n} set-level test(s) skipped their gates: {why}" for why, n in counts.items()]


XPASS = "[XPASS(strict)]"


def now_met_message(row: JudgementRow, expectations: Path) -> str:
    """A fixed accepted miss: what it returns now, and the expectations.toml line to delete."""
    expected = " and ".join(str(e) for e in row.expect)
    number = expectation_line(expectations, row.model, row.prompt_version, row.item_id)
    where = f"line {number} of {expectations}" if number else f"its line in {expectations}"
    return (
        f"{XPASS} now met: {row.item_id} ({row.judge} prompt {row.prompt_version} on "
        f"{row.model}) expected {expected}; returned {describe_verdict(row)}.\n"
        f"The accepted miss is stale: delete {where}, or run `python -m judges baseline "
        f"{row.judge}` to rewrite expectations.toml from the recorded run."
    )


def expectation_line(path: Path, model: str, version: str, item_id: str) -> int | None:
    """The 1-based line of `item_id` in the `["model"."version"]` table, if it is there."""
    header = re.compile(r'^\[\s*"?([^"\]]+)"?\s*\.\s*"?([^"\]]+)"?\s*\]')
    key = re.compile(rf'^\s*"?{re.escape(item_id)}"?\s*=')
    table: tuple[str, str] | None = None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for number, line in enumerate(lines, start=1):
        found = header.match(line)
        if found:
            table = (found.group(1), found.group(2))
        elif table == (model, version) and key.match(line):
            return number
    return None


def partially_selected(collected: list[str], selected: set[str]) -> list[str]:
    """Modules of which some of the collected tests are selected, but not all."""
    modules: dict[str, list[bool]] = {}
    for nodeid in collected:
        modules.setdefault(nodeid.split("::")[0], []).append(nodeid in selected)
    return sorted(m for m, chosen in modules.items() if any(chosen) and not all(chosen))


def rerecord_command(
    nodeid: str | None = None, keyword: str | None = None, options: tuple[str, ...] = ()
) -> str:
    """The command that re-records one test (`--record` takes an optional mode: name it).

    `options` are the session's own judge options (model, server, cassette folder): without
    them the command would record the default model into the default folder.
    """
    target = shlex.quote(nodeid) if nodeid else f"-k {shlex.quote(keyword or '')}"
    extra = "".join(f" {shlex.quote(option)}" for option in options)
    return f"pytest --record=all{extra} {target}"


def missing_fix(model: ModelRef, rerecord: str) -> str:
    """How to supply a missing judgement: record it, or, for an imported model (which is
    never called), import it or ask set.toml for only the items it has outputs for."""
    if model.backend == "imported":
        return (
            f"{model} is imported, never recorded: import its outputs (python -m judges import "
            "llmbar SRC --strategy S --prompt-version V), or list only the sets it has outputs "
            f'for in set.toml: [versions."V"] model_items = {{ "{model}" = ["<set>"] }}'
        )
    return f"Re-record it with:  {rerecord}"
