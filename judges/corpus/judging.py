"""Judge a corpus's outputs with this project's judges, through the same record/replay as
the planted sets: one cassette per (judge entry, run, system, item).

A judge entry with a `[judges.<name>.judged]` table names the judge, prompt version and
model, the verdict field that is the corpus score and the judge input a system's output
fills. Every judgement becomes a row: a score, or an explicit error (an unparseable reply,
a transport failure), never a dropped one. `cassette_path` is where it is recorded.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from judges.calls.backends import ModelRef
from judges.core.naming import NAME_LIMIT, safe_name
from judges.core.results import JudgementRow
from judges.core.runner import Call, Subject, judge
from judges.core.spec import JudgeSpec
from judges.corpus.manifest import CorpusError, Judged, Scale
from judges.corpus.rows import (
    ITEMS_FILE,
    JUDGEMENTS_FILE,
    OUTPUTS_FILE,
    Corpus,
    CorpusItem,
    Judgement,
)

CATEGORY = "corpus"  # what a corpus judgement is, where the runner asks for a category


@dataclass(frozen=True)
class Slot:
    """One judgement to make: a judge entry's run on one system's output for one item."""

    entry: str
    judged: Judged
    run: int
    system: str
    item: CorpusItem
    output: str

    @property
    def model(self) -> ModelRef:
        return ModelRef.parse(self.judged.model)

    def subject(self) -> Subject:
        # The system is part of the id: with per-item seeds, each output gets its own stream.
        inputs = {**self.item.inputs, self.judged.output: self.output}
        return Subject(f"{self.system}/{self.item.id}", CATEGORY, False, inputs)


def judged_entries(corpus: Corpus) -> dict[str, Judged]:
    return {name: e.judged for name, e in corpus.manifest.judges.items() if e.judged is not None}


def slots(corpus: Corpus, catalog: dict[str, JudgeSpec]) -> list[Slot]:
    """Every judgement the corpus asks for, entry by entry, run by run; refused with the fix
    when a judge, version or the outputs are missing."""
    entries = judged_entries(corpus)
    manifest = corpus.folder / "corpus.toml"
    if not entries:
        raise CorpusError(
            f"{manifest}: no judge entry has a [judges.<name>.judged] table; nothing to judge "
            "(an imported corpus is reported as it is: python -m judges corpus report)"
        )
    if not corpus.outputs:
        raise CorpusError(
            f"{corpus.folder / OUTPUTS_FILE}: no outputs; judging needs each system's output "
            'per item, one {"system", "item", "output"} row each'
        )
    items = {item.id: item for item in corpus.items}
    found = []
    for name, judged in entries.items():
        spec = catalog.get(judged.judge)
        if spec is None:
            raise CorpusError(
                f"{manifest}: [judges.{name}.judged] names judge {judged.judge!r}; known: "
                f"{', '.join(sorted(catalog))}"
            )
        if judged.version not in spec.prompts:
            raise CorpusError(
                f"{manifest}: [judges.{name}.judged] names {judged.judge} prompt version "
                f"{judged.version!r}; on disk: {', '.join(spec.versions)}"
            )
        if spec.team is not None and judged.model != spec.config.baseline_model:
            raise CorpusError(
                f"{manifest}: [judges.{name}.judged] names model {judged.model!r}, but "
                f"{judged.judge} is a judge callable: its code picks its model, and its "
                f"cassettes are filed under its baseline_model {spec.config.baseline_model!r}; "
                "name that model there"
            )
        for run in range(judged.runs):
            found += [
                Slot(name, judged, run, o.system, items[o.item], o.output) for o in corpus.outputs
            ]
    _refuse_shared_paths(corpus, entries)
    return found


def _refuse_shared_paths(corpus: Corpus, entries: dict[str, Judged]) -> None:
    """Two names that become one cassette path part ("gpt 4" and "gpt_4", two names alike
    in their first NAME_LIMIT characters) would share cassettes: refused before any call,
    naming both and the file to rename one in."""
    kinds = (
        ("judge entry", list(entries), f"{corpus.folder / 'corpus.toml'} [judges.<name>]"),
        ("system", [o.system for o in corpus.outputs], str(corpus.folder / OUTPUTS_FILE)),
        ("item", [item.id for item in corpus.items], str(corpus.folder / ITEMS_FILE)),
    )
    for kind, names, where in kinds:
        seen: dict[str, str] = {}
        for name in dict.fromkeys(names):
            part = safe_name(name)
            other = seen.setdefault(part, name)
            if other != name:
                raise CorpusError(
                    f"{where}: the {kind} names {other!r} and {name!r} both become the "
                    f"cassette path part {part!r} (a path part keeps A-Z, a-z, 0-9, '.', '_' "
                    f"and '-', at most {NAME_LIMIT} characters, never '.' or '..'), so their "
                    f"judgements would share cassettes; rename one of them there"
                )


def cassette_path(root: Path, corpus: str, slot: Slot) -> Path:
    """`<root>/<corpus>/<entry>/<model>/run<k>/<system>/<item>.yaml`."""
    return (
        root / safe_name(corpus) / safe_name(slot.entry) / slot.model.slug / f"run{slot.run}"
        / safe_name(slot.system) / f"{safe_name(slot.item.id)}.yaml"
    )  # fmt: skip


def judgement_of(slot: Slot, row: JudgementRow, spec: JudgeSpec, scale: Scale) -> Judgement:
    """The corpus row of one judged output: its score, or the reason it has none."""

    def of(**fields: Any) -> Judgement:
        return Judgement(
            system=slot.system, item=slot.item.id, judge=slot.entry, run=slot.run, **fields
        )

    if row.status != "ok" or row.verdict is None:
        return of(error=f"{row.status}: {row.error or 'no verdict'}")
    score = row.verdict.get(slot.judged.score)
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        return of(error=f"verdict field {slot.judged.score!r} is {score!r}, not a number")
    if not scale.contains(score):
        return of(error=f"score {score} is off the corpus scale [{scale.low:g}, {scale.high:g}]")
    flag = spec.config.flag
    if flag is not None and isinstance(row.verdict.get(flag), bool):
        # The flag says "matches the reference's product": False is what gets flagged.
        return of(score=score, flagged=not row.verdict[flag])
    return of(score=score)


def judge_slots(
    planned: list[Slot],
    catalog: dict[str, JudgeSpec],
    judge_in: Callable[[Slot, Callable[[Call], JudgementRow]], JudgementRow],
    scale: Scale,
) -> Iterator[tuple[Slot, JudgementRow, Judgement]]:
    """Judge each slot through `judge_in(slot, judge_with)`, which calls `judge_with` with the
    `Call` of the slot's cassette (recorded or replayed) and returns its row; yields as each
    lands, so a caller can report progress and keep what is done."""
    for slot in planned:
        spec = catalog[slot.judged.judge]
        row = judge_in(slot, partial(judge, spec, slot.judged.version, slot.subject()))
        yield slot, row, judgement_of(slot, row, spec, scale)


def merged(corpus: Corpus, judged: list[Judgement]) -> list[Judgement]:
    """The corpus's judgements with every judged entry's rows replaced by `judged`; the
    imported entries' rows are kept as they are, in their order."""
    entries = judged_entries(corpus)
    kept = [j for j in corpus.judgements if j.judge not in entries]
    order = {name: index for index, name in enumerate(entries)}
    return kept + sorted(judged, key=lambda j: (order[j.judge], j.run))


def judgements_text(rows: list[Judgement]) -> str:
    """JSONL as the importers write it; a row read from a file keeps the keys it had."""
    return "".join(
        json.dumps(r.model_dump(exclude_unset=True, exclude_none=True), ensure_ascii=False,
                   sort_keys=True) + "\n"
        for r in rows
    )  # fmt: skip


__all__ = [
    "JUDGEMENTS_FILE",
    "Slot",
    "cassette_path",
    "judge_slots",
    "judged_entries",
    "judgement_of",
    "judgements_text",
    "merged",
    "slots",
]
