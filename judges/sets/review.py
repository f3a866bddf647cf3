"""Review before anything counts: each candidate accepted, rejected or edited by a person,
and only accepted ones written into the planted set.

planted_sets/<judge>/review.jsonl   one decision per line, appended as the reviewer goes;
                                    the last decision on a candidate counts

A decision names the candidate's fingerprint: a candidate made again differently (another
seed, an edited source row) is not covered by a decision on the old one, and is named as
stale. Applying is idempotent: a candidate already in items.jsonl (its provenance names
it) is not added twice, so an interrupted apply is finished by running it again.

What an accepted candidate becomes:

- a control or a defect: a planted item of its category, appended to items.jsonl with its
  provenance (generator, seed, source row, reviewer, date);
- an invariance candidate: a bias probe of its source row's planted item (probes.toml,
  the kind `format_<generator>`, with the candidate's seed), so it is gated as a flip rate
  against the judge's own noise floor, as every probe is. Its source row must be in the
  set (accept the row's control candidate too).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import tomllib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judges.core.spec import JudgeSpec
from judges.sets.candidates import Candidate
from judges.sets.folder import SetFolder
from judges.sets.items import PlantedItem, PlantedSetError, Provenance
from judges.sets.probe_kinds import invariance_probe
from judges.storage.files import atomic_write_text, json_lines
from judges.storage.toml_files import write_toml

REVIEW_FILE = "review.jsonl"


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    candidate: str
    fingerprint: str  # of the candidate as the reviewer saw it
    decision: Literal["accept", "reject", "edit"]
    reviewer: str = Field(min_length=1, max_length=80)
    date: datetime.date
    text: str | None = None  # edit: the reviewer's text of the candidate's field
    note: str = ""


def fingerprint(candidate: Candidate) -> str:
    """What a decision is about: the candidate's whole content, hashed; a second model's
    check is advice to the reviewer, not content, so a decision outlives a new check."""
    content = {k: v for k, v in candidate.dump().items() if k != "confirmed"}
    text = json.dumps(content, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def read_decisions(path: Path) -> dict[str, Decision]:
    """The last decision on each candidate (a reviewer may change their mind)."""
    decisions: dict[str, Decision] = {}
    if not path.is_file():
        return decisions
    for line, raw in json_lines(path, PlantedSetError, "; each line one decision"):
        try:
            decision = Decision.model_validate(raw)
        except ValidationError as error:
            problem = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '<line>'}: {e['msg']}"
                for e in error.errors(include_url=False)
            )
            raise PlantedSetError(f"{path}:{line}: not a review decision ({problem})") from None
        if decision.decision == "edit" and not (decision.text or "").strip():
            raise PlantedSetError(f"{path}:{line}: an edit needs the edited text ('text')")
        decisions[decision.candidate] = decision
    return decisions


def record_decisions(path: Path, new: Sequence[Decision]) -> None:
    """Append decisions, rewriting the file atomically: a reviewer who stops (or is stopped)
    keeps every decision made so far."""
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    if old and not old.endswith("\n"):
        old += "\n"
    added = "".join(json.dumps(d.model_dump(mode="json"), ensure_ascii=False) + "\n" for d in new)
    atomic_write_text(path, old + added)


def _covers(decision: Decision | None, candidate: Candidate) -> bool:
    """The decision is on the candidate as it now is, and one it can take (a seeded
    format edit is accepted or rejected, never edited: `Candidate.editable`)."""
    return (
        decision is not None
        and decision.fingerprint == fingerprint(candidate)
        and (candidate.editable or decision.decision != "edit")
    )


def pending(candidates: Sequence[Candidate], decisions: Mapping[str, Decision]) -> list[Candidate]:
    """Candidates no decision covers as they now are: the ones to ask about."""
    return [c for c in candidates if not _covers(decisions.get(c.id), c)]


# -- applying -----------------------------------------------------------------------------


@dataclass
class Applied:
    added: list[PlantedItem] = field(default_factory=list)
    # probe kind -> (item id, seed, field, stored text or None) of each new probe item
    probes: dict[str, list[tuple[str, int, str, str | None]]] = field(default_factory=dict)
    already: int = 0  # accepted candidates already in the set
    rejected: int = 0
    pending: int = 0
    stale: list[str] = field(default_factory=list)  # decided on a candidate since made again
    unknown: list[str] = field(default_factory=list)  # decisions on no current candidate


def _key(inputs: Mapping[str, Any]) -> str:
    return json.dumps(inputs, sort_keys=True, ensure_ascii=False)


def _slug(candidate: Candidate) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", f"{candidate.generator}-{candidate.source.id}".lower())
    return words.strip("-")[:40].strip("-") or "candidate"


class _Ids:
    """The set's next ids: its prefix and digits, numbered after its highest."""

    def __init__(self, items: Sequence[PlantedItem], default_prefix: str) -> None:
        parts = [item.id.split("-") for item in items]
        prefixes = Counter(prefix for prefix, _ in parts)
        self.prefix = prefixes.most_common(1)[0][0] if prefixes else default_prefix
        self.width = max((len(number) for _, number in parts), default=3)
        self.next = 1 + max(
            (int(number) for prefix, number in parts if prefix == self.prefix), default=0
        )

    def take(self, where: Path) -> str:
        if self.next >= 10**self.width:
            raise PlantedSetError(
                f"{where}: the ids {self.prefix}-... are used up to {self.next - 1}; give the "
                "new items another prefix by hand"
            )
        taken = f"{self.prefix}-{self.next:0{self.width}d}"
        self.next += 1
        return taken


def apply_decisions(
    folder: Path,
    spec: JudgeSpec,
    existing: Sequence[PlantedItem],
    candidates: Sequence[Candidate],
    decisions: Mapping[str, Decision],
    default_prefix: str,
) -> Applied:
    """The planted items and probes the accepted candidates become (nothing written)."""
    done = Applied()
    by_id = {c.id: c for c in candidates}
    done.unknown = sorted(set(decisions) - set(by_id))
    in_set = {item.provenance.candidate for item in existing if item.provenance.candidate}
    ids = _Ids(existing, default_prefix)
    items_path = SetFolder.at(folder).items_path
    # Controls first: a defect names its row's control as its clean item, a probe needs it.
    order = {"control": 0, "defect": 1, "invariance": 2}
    # source row id -> the planted item holding the row as it is (its inputs, unchanged)
    holding: dict[str, str] = {}
    for item in existing:
        holding.setdefault(_key(item.inputs), item.id)
    clean_of = {
        c.source.id: holding[_key(c.source.inputs)]
        for c in candidates
        if _key(c.source.inputs) in holding
    }
    probes_on_file = _probe_items(SetFolder.at(folder).probes_path)
    for candidate in sorted(candidates, key=lambda c: order[c.kind]):
        decision = decisions.get(candidate.id)
        if decision is None:
            done.pending += 1
            continue
        if decision.fingerprint != fingerprint(candidate):
            done.stale.append(candidate.id)
            continue
        if decision.decision == "reject":
            done.rejected += 1
            continue
        if candidate.kind == "invariance":
            _probe(candidate, decision, clean_of, probes_on_file, done, items_path)
            continue
        if candidate.id in in_set:
            done.already += 1
            continue
        item = _item(candidate, decision, ids.take(items_path), clean_of, items_path, spec)
        if candidate.kind == "control":
            clean_of.setdefault(candidate.source.id, item.id)
        done.added.append(item)
    return done


def _item(
    candidate: Candidate,
    decision: Decision,
    new_id: str,
    clean_of: Mapping[str, str],
    where: Path,
    spec: JudgeSpec,
) -> PlantedItem:
    inputs = dict(candidate.inputs)
    change = candidate.change
    if decision.decision == "edit":
        inputs[candidate.field] = decision.text
        change += f"; edited by {decision.reviewer}"
    try:
        spec.parse_inputs(inputs)
    except (ValidationError, ValueError) as error:
        first = str(error).splitlines()[:3]
        raise PlantedSetError(
            f"{where}: candidate {candidate.id!r} as reviewed is refused by the judge's "
            f"inputs: {' '.join(first)}; edit it again or reject it"
        ) from None
    control = candidate.kind == "control"
    source = candidate.source
    written = candidate.written
    return PlantedItem(
        id=new_id,
        slug=_slug(candidate),
        judge=spec.name,
        category=candidate.category,
        control=control,
        inputs=inputs,
        expect=candidate.expect,
        provenance=Provenance(
            source="generated",
            clean_item=None if control else clean_of.get(candidate.source.id),
            perturbation=f"{candidate.generator} on {candidate.field}: {change}",
            seed=candidate.seed,
            candidate=candidate.id,
            generator=candidate.generator,
            source_row=f"{source.file}:{source.line} (id {source.id})",
            reviewer=decision.reviewer,
            reviewed=decision.date.isoformat(),
            model=written.model if written else None,
            prompt_version=written.prompt_version if written else None,
            prompt_hash=written.prompt_hash if written else None,
            note=decision.note,
        ),
    )


def _probe(
    candidate: Candidate,
    decision: Decision,
    clean_of: Mapping[str, str],
    on_file: set[tuple[str, str]],
    done: Applied,
    where: Path,
) -> None:
    probe = invariance_probe(candidate.generator)
    if probe is None:
        raise PlantedSetError(
            f"{where}: candidate {candidate.id!r} comes from {candidate.generator!r}, which is "
            "not a probe kind (only the built-in invariance generators are): reject it"
        )
    if decision.decision == "edit" and not candidate.editable:
        raise PlantedSetError(
            f"{where}: candidate {candidate.id!r} is a format edit made again from its seed "
            "at every run: accept or reject it (it is asked again by --review and "
            "--review-page); an edited format is a planted item written by hand"
        )
    clean = clean_of.get(candidate.source.id)
    if clean is None:
        raise PlantedSetError(
            f"{where}: candidate {candidate.id!r} is accepted, but its source row "
            f"{candidate.source.id!r} is not in the set, so there is no verdict to compare "
            f"with: accept its control candidate (source:{candidate.source.id}) too, or "
            "reject it"
        )
    if (probe, clean) in on_file or any(e[0] == clean for e in done.probes.get(probe, [])):
        done.already += 1
        return
    # A model-written text cannot be made again from its seed: the probe stores it, as the
    # reviewer accepted or edited it.
    text = None
    if candidate.written is not None:
        text = decision.text if decision.decision == "edit" else candidate.inputs[candidate.field]
    done.probes.setdefault(probe, []).append((clean, candidate.seed, candidate.field, text))


def _probe_items(path: Path) -> set[tuple[str, str]]:
    """(probe kind, item id) pairs probes.toml already lists."""
    table = _read_toml(path)
    return {
        (probe, item)
        for probe, entry in table.items()
        if isinstance(entry, dict)
        for item in entry.get("items", ())
    }


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise PlantedSetError(f"{path}: not valid TOML: {error}") from None


def write_applied(folder: Path, spec: JudgeSpec, applied: Applied) -> list[Path]:
    """Append the new items to items.jsonl and the new probes to probes.toml, each file
    written whole and atomically; returns the files written."""
    written = []
    if applied.added:
        path = SetFolder.at(folder).items_path
        old = path.read_text(encoding="utf-8") if path.is_file() else ""
        if old and not old.endswith("\n"):
            old += "\n"
        new = "".join(
            json.dumps(item.model_dump(mode="json", exclude_none=True), ensure_ascii=False) + "\n"
            for item in applied.added
        )
        atomic_write_text(path, old + new)
        written.append(path)
    if applied.probes:
        path = SetFolder.at(folder).probes_path
        table = _read_toml(path)
        if "score" not in table:
            scored = [*spec.config.dimensions, *([spec.config.flag] if spec.config.flag else [])]
            if not scored:
                raise PlantedSetError(
                    f"{path}: probes need the verdict field they compare (`score`); the judge "
                    'names no dimensions: write `score = "<field>"` in it'
                )
            table["score"] = scored[0]
        for probe, entries in applied.probes.items():
            fields = {entry[2] for entry in entries}
            entry = table.setdefault(probe, {"field": entries[0][2], "items": []})
            if fields != {entry["field"]}:
                raise PlantedSetError(
                    f"{path}: [{probe}] probes the input {entry['field']!r}, but accepted "
                    f"candidates edit {sorted(fields)}: one input per probe kind; reject them "
                    "or plant them with the same --field"
                )
            items = list(entry.get("items", []))
            seed = entry.pop("seed", 0)
            seeds = list(entry.get("seeds") or [seed + k for k in range(len(items))])
            entry["items"] = items + [e[0] for e in entries]
            entry["seeds"] = seeds + [e[1] for e in entries]
            texts = [e[3] for e in entries if e[3] is not None]
            if texts:
                entry["written"] = list(entry.get("written", [])) + texts
        write_toml(path, table, error=PlantedSetError)
        written.append(path)
    return written
