"""Candidate planted items made from real rows: what `python -m judges plant` writes.

planted_sets/<judge>/candidates.jsonl   one candidate per line, each with its source row,
                                        its generator, its seed and what it should meet

A candidate is not a planted item yet: nothing counts until a reviewer accepts it
(judges.sets.review). Three kinds:

- defect: the row's judged text with one generated error; the judge must mark it down
  (`expect`, the set's defect expectation);
- invariance: the same content in another format; the verdict must equal the row's own;
- control: a row the team labelled good, as it is (`--control-label`); the judge must
  leave it alone (`expect`, the set's control expectation).

Given the same rows, generators and seed, the file is the same byte for byte: each
candidate's seed is derived from the run's seed, the row's id and the generator's name.
A model-written candidate (paraphrase, longer, shorter, label_flip) also records its model,
prompt version and hash and its cassette (`written`); replayed from the cassettes, it is
the same byte for byte too.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from judges.core.results import Expectation
from judges.sets.generators import Generator, Options, PerturbationError, Perturbed
from judges.sets.items import PlantedSetError
from judges.sets.source_rows import SourceRow
from judges.storage.files import atomic_write_text, json_lines

CANDIDATES_FILE = "candidates.jsonl"
CONTROL_GENERATOR = "source"  # a control candidate: the labelled row as it is
CONTROL_CATEGORY = "control"


class Source(BaseModel):
    """The real row a candidate was made from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    line: int
    id: str
    label: Any = None
    inputs: dict[str, Any]


class WrittenBy(BaseModel):
    """Where a model-written candidate's text came from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    prompt_version: str
    prompt_hash: str
    cassette: str  # under cassettes/planting/


class Confirmation(BaseModel):
    """A second model's check: does the candidate differ from its row in a way that
    matters? It `agrees` when a defect does and an invariance candidate does not."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    prompt_version: str
    differs: bool
    agrees: bool
    reason: str


class Candidate(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str  # "<generator>:<row id>"
    judge: str
    kind: Literal["defect", "invariance", "control"]
    generator: str
    seed: int
    field: str  # the input the generator edited
    category: str
    change: str
    inputs: dict[str, Any]
    expect: tuple[Expectation, ...] = ()  # none for invariance: the verdict must not move
    expectation: str  # what it should meet, in words, for the reviewer
    source: Source
    written: WrittenBy | None = None  # a model-written candidate's model and prompt
    confirmed: Confirmation | None = None  # a second model's check (--confirm-model)

    @property
    def editable(self) -> bool:
        """A reviewer may edit it: a defect or a control, or a model-written invariance
        candidate (its text is stored); a seeded format edit is remade from its seed."""
        return self.kind != "invariance" or self.written is not None

    def dump(self) -> dict[str, Any]:
        """As written to candidates.jsonl (and fingerprinted): `written` and `confirmed`
        only when there are, so a candidate's line without them is what it always was."""
        unset = {name for name in ("written", "confirmed") if getattr(self, name) is None}
        return self.model_dump(mode="json", exclude=unset)


class Writer(Protocol):
    """Writes a model-written candidate's text (judges.cli.plant_writer)."""

    def write(self, generator: Generator, row: SourceRow, text_field: str, seed: int) -> Any: ...


def candidate_seed(seed: int, row_id: str, generator: str) -> int:
    """A seed of its own per (run seed, row, generator): adding a row or a generator leaves
    every other candidate as it was."""
    digest = hashlib.sha256(f"{seed}\0{row_id}\0{generator}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def _words(expect: Sequence[Expectation]) -> str:
    return " and ".join(f"{e.field} {e.op} {json.dumps(e.value)}" for e in expect)


@dataclass
class Planting:
    """What one `plant` run made, and every row each generator could not use, by reason."""

    candidates: list[Candidate] = field(default_factory=list)
    skipped: dict[str, Counter[str]] = field(default_factory=dict)  # generator -> reason -> n
    skipped_lines: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    unlabelled: list[int] = field(default_factory=list)  # rows not labelled as controls

    def skip(self, generator: str, reason: str, line: int) -> None:
        self.skipped.setdefault(generator, Counter())[reason] += 1
        self.skipped_lines.setdefault((generator, reason), []).append(line)

    def made(self) -> Counter[str]:
        return Counter(candidate.generator for candidate in self.candidates)


def plant(
    judge: str,
    rows: Sequence[SourceRow],
    generators: Mapping[str, Generator],
    *,
    field: str,
    seed: int,
    defect_expect: Sequence[Expectation],
    control_expect: Sequence[Expectation] = (),
    control_label: str | None = None,
    options: Options | None = None,
    writer: Writer | None = None,
) -> Planting:
    """Every candidate the generators make from the rows, in row then generator order.

    With `control_label`, only rows with that label are planted from (a defect added to an
    answer already wrong tests nothing new) and each also becomes a control candidate;
    the other rows are counted in `unlabelled`. Without it, every row is used.
    """
    options = options or Options()
    done = Planting()
    for row in rows:
        if control_label is not None and str(row.label) != control_label:
            done.unlabelled.append(row.line)
            continue
        text = row.inputs.get(field)
        if not isinstance(text, str):
            raise PlantedSetError(
                f"{row.file}:{row.line}: the input {field!r} is not a text; the generators "
                "edit a text input (--field)"
            )
        source = Source(file=row.file, line=row.line, id=row.id, label=row.label, inputs=row.inputs)
        if control_label is not None:
            done.candidates.append(Candidate(
                id=f"{CONTROL_GENERATOR}:{row.id}", judge=judge, kind="control",
                generator=CONTROL_GENERATOR, seed=0, field=field, category=CONTROL_CATEGORY,
                change=f"the row as it is (labelled {control_label!r})", inputs=row.inputs,
                expect=tuple(control_expect),
                expectation=f"a control: the judge leaves it alone ({_words(control_expect)})",
                source=source,
            ))  # fmt: skip
        for name, generator in generators.items():
            own_seed = candidate_seed(seed, row.id, name)
            written = None
            try:
                if generator.make is not None:
                    made = generator.make(text, own_seed, options)
                elif writer is None:
                    raise ValueError(f"{name} is model-written: plant it with a writer")
                else:
                    written = writer.write(generator, row, field, own_seed)
                    made = Perturbed(written.text, f"model-written: {written.change}")
            except PerturbationError as nothing:
                done.skip(name, str(nothing), row.line)
                continue
            if made.text == text:
                done.skip(name, "the edit left the text as it was", row.line)
                continue
            defect = generator.kind == "defect"
            expect = tuple(getattr(written, "expect", ()) or defect_expect) if defect else ()
            aimed = bool(getattr(written, "expect", ()))
            done.candidates.append(Candidate(
                id=f"{name}:{row.id}", judge=judge, kind=generator.kind, generator=name,
                seed=own_seed, field=field,
                category=getattr(written, "category", None) or generator.category,
                change=made.change, inputs=row.inputs | {field: made.text}, expect=expect,
                expectation=(
                    f"aimed at a level: the judge scores it so ({_words(expect)})" if aimed
                    else f"a defect: the judge marks it down ({_words(expect)})" if defect
                    else "invariance: the verdict equals the source row's"
                ),
                source=source,
                written=None if written is None else WrittenBy(
                    model=written.model, prompt_version=written.prompt_version,
                    prompt_hash=written.prompt_hash, cassette=written.cassette,
                ),
            ))  # fmt: skip
    return done


def write_candidates(path: Path, candidates: Sequence[Candidate]) -> None:
    """The candidates file, written whole and atomically (an interrupted run leaves the
    previous file)."""
    text = "".join(json.dumps(c.dump(), ensure_ascii=False) + "\n" for c in candidates)
    atomic_write_text(path, text)


def read_candidates(path: Path) -> list[Candidate]:
    if not path.is_file():
        raise PlantedSetError(f"{path}: no candidates yet; make them with `python -m judges plant`")
    found: list[Candidate] = []
    seen: dict[str, int] = {}
    for line, raw in json_lines(path, PlantedSetError, "; each line one candidate"):
        try:
            candidate = Candidate.model_validate(raw)
        except ValidationError as error:
            raise PlantedSetError(f"{path}:{line}: not a candidate: {error}") from None
        if candidate.id in seen:
            raise PlantedSetError(
                f"{path}:{line}: candidate {candidate.id!r} is already on line "
                f"{seen[candidate.id]}; make the file again with `python -m judges plant`"
            )
        seen[candidate.id] = line
        found.append(candidate)
    return found
