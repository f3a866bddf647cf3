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
from typing import TYPE_CHECKING, Any

from judges.calls.backends import ModelRef, is_imported
from judges.calls.cassettes import recorded_base_url
from judges.core.checks import describe_verdict
from judges.core.results import JudgementRow
from judges.sets.folder import SET_FILE

if TYPE_CHECKING:
    from judges.pytest_plugin.session.settings import Settings


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


def now_met_message(row: JudgementRow, expectations: Path, accept: str | None = None) -> str:
    """A fixed accepted miss: what it returns now, and the fix. `accept`: the command that
    accepts the row's version again when it is a pinned (accepted) baseline, whose misses
    change only with an acceptance (which refuses cassettes that differ from their pins);
    deleting the line by hand would hide a hand-edited recording."""
    expected = " and ".join(str(e) for e in row.expect)
    head = (
        f"{XPASS} now met: {row.item_id} ({row.judge} prompt {row.prompt_version} on "
        f"{row.model}) expected {expected}; returned {describe_verdict(row)}.\n"
    )
    if accept is not None:
        return head + (
            f"Prompt {row.prompt_version} is the accepted baseline on {row.model}: its "
            f"accepted misses change only with an acceptance, never by hand. Accept it again "
            f"(`{accept}`), which rewrites {expectations} from the recorded run and refuses "
            "a recording that differs from its pins."
        )
    number = expectation_line(expectations, row.model, row.prompt_version, row.item_id)
    where = f"line {number} of {expectations}" if number else f"its line in {expectations}"
    return head + f"The accepted miss is stale: delete {where}."


def accept_command(settings: Settings, judge: str, version: str) -> str:
    """`baseline --accept` of one version, with the session's report folder where it is not
    the project's own (the planted sets are the ini's for both)."""
    command = f"python -m judges baseline {judge} --accept {version}"
    if settings.reports != (settings.rootdir / "reports").absolute():
        command += f" --reports {shlex.quote(str(settings.reports))}"
    return command


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


_RECORD_ALL = "pytest --record=all"


def with_recording_options(command: str, model: object, base_url: str | None) -> str:
    """`command` naming the judge model (and user's server) of the recording it replaces.

    Run as printed from a replay session started without `--judge-model`, it would
    otherwise record the judge's default model, or call no server at all.
    """
    if not command.startswith(_RECORD_ALL):
        return command
    words = shlex.split(command)
    extra: list[str] = []
    if "--judge-model" not in words:
        extra += ["--judge-model", str(model)]
    if base_url and "--judge-base-url" not in words:
        extra += ["--judge-base-url", base_url]
    added = "".join(f" {shlex.quote(option)}" for option in extra)
    return _RECORD_ALL + added + command.removeprefix(_RECORD_ALL)


def weak_set_lines(session: Any) -> list[str]:
    """Legal but weak planted sets of the judges this session judged, with their fixes."""
    from judges.verdicts.set_design import weak_set_lines as weaknesses

    judged = {row.judge for row in session.gathered.rows}
    sets = [
        session.catalogue.planted_sets[name]
        for name in sorted(judged & set(session.catalogue.planted_sets))
    ]
    return [line for planted in sets for line in weaknesses(planted)]


def unrecorded_lines(session: Any) -> list[str]:
    """One line per prompt version without any recording, with the command that records it."""
    lines = []
    for planted in session.catalogue.planted_sets.values():
        spec = session.catalogue.catalog[planted.judge]
        for version in spec.versions:
            for model in session.catalogue.models_for(spec, version):
                folder = session.settings.cassettes / planted.judge / version / model.slug
                if folder.is_dir() and any(folder.glob("*.yaml")):
                    continue
                toml, options = spec.root / "judge.toml", session.settings.rerecord_options
                lines.append(
                    no_recordings_line(planted.judge, version, model, folder, toml, options)
                )
    return lines


def no_recordings_line(
    judge: str,
    version: str,
    model: ModelRef,
    folder: Path,
    judge_toml: Path,
    options: tuple[str, ...],
) -> str:
    """A version of a judge with no recording in `folder`, and the command that records it
    for the model, and on the server, its other versions were recorded with."""
    others = sorted(p.name for p in folder.parent.glob("*/") if any(p.rglob("*.yaml")))
    elsewhere = (  # recorded with --judge-model, replayed without it
        f" (recorded for {', '.join(others)}: replay with --judge-model, or "
        f"set baseline_model in {judge_toml})"
        if others
        else ""
    )
    earlier = sorted(folder.parent.parent.glob(f"*/{model.slug}/**/*.yaml"))
    server = recorded_base_url(earlier[-1]) if earlier else None
    command = rerecord_command(keyword=f"{judge}-{version}-", options=options)
    return (
        f"{judge} prompt {version} on {model} has no recordings yet{elsewhere}; record it "
        f"with:  {with_recording_options(command, model, server)}"
    )


def rerecord_command(
    nodeid: str | None = None, keyword: str | None = None, options: tuple[str, ...] = ()
) -> str:
    """The command that re-records one test (`--record` takes an optional mode: name it).

    `options` are the session's own judge options (model, server, cassette folder): without
    them the command would record the default model into the default folder.
    """
    target = shlex.quote(nodeid) if nodeid else f"-k {shlex.quote(keyword or '')}"
    extra = "".join(f" {shlex.quote(option)}" for option in options)
    return f"{_RECORD_ALL}{extra} {target}"


def record_missing_command(options: tuple[str, ...], keyword: str | None = None) -> str:
    """`pytest --record=missing` with the session's judge options (model, server, cassette
    folder): what records whatever a run left unrecorded, on the same judge."""
    extra = "".join(f" {shlex.quote(option)}" for option in options)
    target = f" -k {shlex.quote(keyword)}" if keyword else ""
    return f"pytest --record=missing{extra}{target}"


def missing_fix(model: ModelRef, rerecord: str) -> str:
    """How to supply a missing judgement: record it, or, for an imported model (which is
    never called), import it or ask set.toml for only the items it has outputs for."""
    if is_imported(model):
        return (
            f"{model} is imported, never recorded: import its outputs (python -m judges import "
            "llmbar SRC --strategy S --prompt-version V), or list only the sets it has outputs "
            f'for in {SET_FILE}: [versions."V"] model_items = {{ "{model}" = ["<set>"] }}'
        )
    return f"Re-record it with:  {rerecord}"
