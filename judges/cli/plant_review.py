"""`python -m judges plant JUDGE --review` and `--apply`: a person decides, then the set grows.

The terminal flow shows each pending candidate beside its source row (a diff of the edited
input, white space made visible) and asks accept, reject, edit, skip or quit; each answer
is written to review.jsonl at once. `--apply` turns the accepted candidates into planted
items (and invariance probes) and says how large each category now is, and whether that
is large enough to decide.
"""

from __future__ import annotations

import datetime
import difflib
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from judges.core.spec import JudgeSpec
from judges.sets.candidates import CANDIDATES_FILE, Candidate, read_candidates
from judges.sets.folder import SetFolder
from judges.sets.items import PlantedItem
from judges.sets.review import (
    REVIEW_FILE,
    Decision,
    apply_decisions,
    fingerprint,
    pending,
    read_decisions,
    record_decisions,
    write_applied,
)

DIFF_LINES = 40  # lines of a diff shown before "... N more"
LINE_CHARACTERS = (
    2000  # characters of one diff line shown: a 1 MB answer on one line stays readable
)
_RUN = re.compile(r" {2,}|\t|\s+$")


def visible(line: str) -> str:
    """White space a format edit changes, made visible: runs of spaces as "·", a tab as
    "→", trailing spaces as "·"."""
    return _RUN.sub(lambda m: m.group().replace(" ", "·").replace("\t", "→"), line)


def shown(path: Path) -> Path:
    """A path as the user would type it: relative to the current folder when under it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return path


def diff_lines(before: str, after: str, label: str) -> list[str]:
    lines = list(
        difflib.unified_diff(
            [visible(x) for x in before.split("\n")],
            [visible(x) for x in after.split("\n")],
            fromfile=label,
            tofile="candidate",
            lineterm="",
            n=1,
        )
    )
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"... {len(lines) - DIFF_LINES} more diff lines"]
    lines = [
        f"{line[:LINE_CHARACTERS]}... ({len(line) - LINE_CHARACTERS:,} more characters)"
        if len(line) > LINE_CHARACTERS
        else line
        for line in lines
    ]
    return lines or ["(no difference)"]


def checked_words(candidate: Candidate) -> str | None:
    """The second model's check in words (`plant --confirm-model`); None: not checked."""
    checked = candidate.confirmed
    if checked is None:
        return None
    found = "differs in a way that matters" if checked.differs else "says the same"
    verdict = "agrees" if checked.agrees else "DISAGREES"
    return f"second model {checked.model} {verdict}: it {found} ({checked.reason})"


def candidate_lines(candidate: Candidate, index: int, total: int) -> list[str]:
    source = candidate.source
    label = f"source row {source.file}:{source.line} (id {source.id}), {candidate.field}"
    checked = checked_words(candidate)
    return [
        f"[{index}/{total}] {candidate.id}: {candidate.kind}, category {candidate.category}",
        f"  expectation: {candidate.expectation}",
        f"  change: {candidate.change}",
        *([f"  {checked}"] if checked else []),
        *diff_lines(source.inputs[candidate.field], candidate.inputs[candidate.field], label),
    ]


PROMPT = "accept [a], reject [r], edit [e], skip [s], quit [q]? "


def review_in_terminal(
    folder: Path,
    reviewer: str,
    ask: Callable[[str], str] = input,
    say: Callable[[str], None] = print,
    today: datetime.date | None = None,
) -> Counter[str]:
    """Ask about every pending candidate; each decision is written before the next question."""
    candidates = read_candidates(folder / CANDIDATES_FILE)
    path = folder / REVIEW_FILE
    todo = pending(candidates, read_decisions(path))
    made: Counter[str] = Counter()
    for index, candidate in enumerate(todo, start=1):
        for line in candidate_lines(candidate, index, len(todo)):
            say(line)
        answer = _answer(ask)
        if answer == "q":
            break
        if answer == "s":
            made["skipped"] += 1
            continue
        text = None
        if answer == "e":
            if not candidate.editable:
                say("  a format edit is accepted or rejected, not edited (made from its seed)")
                made["skipped"] += 1
                continue
            text = _edited(ask, say)
            if text is None:
                made["skipped"] += 1
                continue
        decision = Decision(
            candidate=candidate.id,
            fingerprint=fingerprint(candidate),
            decision={"a": "accept", "r": "reject", "e": "edit"}[answer],  # type: ignore[arg-type]
            reviewer=reviewer,
            date=today or datetime.date.today(),
            text=text,
        )
        record_decisions(path, [decision])
        made[decision.decision] += 1
    return made


def _answer(ask: Callable[[str], str]) -> str:
    while True:
        try:
            answer = ask(PROMPT).strip().lower()[:1]
        except EOFError:
            return "q"
        if answer in ("a", "r", "e", "s", "q"):
            return answer


def _edited(ask: Callable[[str], str], say: Callable[[str], None]) -> str | None:
    say("  the new text, then a line holding only '.' (an empty text skips):")
    lines = []
    while True:
        try:
            line = ask("")
        except EOFError:
            break
        if line == ".":
            break
        lines.append(line)
    text = "\n".join(lines)
    return text if text.strip() else None


def merge_decisions(folder: Path, source: Path) -> int:
    """Decisions downloaded from the review page, added to review.jsonl; returns how many
    differ from what it already holds."""
    mine = read_decisions(folder / REVIEW_FILE)
    theirs = read_decisions(source)
    new = [d for cid, d in theirs.items() if mine.get(cid) != d]
    if new:
        record_decisions(folder / REVIEW_FILE, new)
    return len(new)


def apply_lines(
    planted_sets: Path, spec: JudgeSpec, default_prefix: str
) -> tuple[list[str], list[str]]:
    """Apply the accepted candidates; the lines to print, and the set's warnings."""
    from judges.sets.planted import load_items, load_planted_set
    from judges.sets.probes import write_probes
    from judges.verdicts.set_design import weak_set_lines

    folder = planted_sets / spec.name
    candidates = read_candidates(folder / CANDIDATES_FILE)
    decisions = read_decisions(folder / REVIEW_FILE)
    items_path = SetFolder.at(folder).items_path
    existing = load_items(items_path, spec) if items_path.is_file() else []
    applied = apply_decisions(folder, spec, existing, candidates, decisions, default_prefix)
    written = write_applied(folder, spec, applied)
    planted = load_planted_set(planted_sets, spec)  # the grown set, checked as any run does
    # Always, not only when probes were added: an apply stopped between probes.toml and
    # probes.jsonl is finished by running it again.
    probes_path = SetFolder.at(folder).probe_items_path
    before = probes_path.read_bytes() if probes_path.is_file() else None
    if write_probes(planted) and probes_path.read_bytes() != before:
        written.append(probes_path)
    probes = sum(len(v) for v in applied.probes.values())
    lines = [f"wrote {shown(path)}" for path in written]
    lines.append(
        f"added {len(applied.added)} planted items and {probes} invariance probes; "
        f"{applied.already} accepted before, {applied.rejected} rejected, {applied.pending} "
        "not reviewed yet"
    )
    if applied.stale:
        lines.append(
            f"{len(applied.stale)} decisions are on candidates made again since "
            f"({', '.join(applied.stale[:5])}): review them again (--review)"
        )
    if applied.unknown:
        lines.append(
            f"{len(applied.unknown)} decisions name no current candidate "
            f"({', '.join(applied.unknown[:5])}): left as they are"
        )
    lines += category_lines(planted.items)
    return lines, weak_set_lines(planted)


def category_lines(items: Sequence[PlantedItem]) -> list[str]:
    """Each category's size, and for defects whether it is large enough to decide."""
    from judges.stats.fitness.power import GOOD, MIN_POWER, detection_power

    controls = sum(item.control for item in items)
    defects = Counter(item.category for item in items if not item.control)
    lines = [f"category sizes: {controls} controls"]
    for category, n in sorted(defects.items()):
        power = detection_power(n, controls)
        decides = "decides" if power >= MIN_POWER else "too small to decide"
        lines.append(
            f"  {category}: {n} defects; a judge right {GOOD:.0%} of the time beats chance "
            f"with probability {power:.3f} ({decides}: {MIN_POWER} needed)"
        )
    return lines
