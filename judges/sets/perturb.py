"""Perturbation generators: deterministic, seeded edits that plant one known defect.

Each generator takes a clean text and a seed and returns the perturbed text with a short
description of what changed. `derive_item` wraps one into a planted item whose provenance
names the clean item, the generator and the seed, so generated and hand-written items
share one format. The property tests check that each changes what it claims and nothing
else.
"""

from __future__ import annotations

import json
import random
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judges.core.results import Expectation
from judges.sets.items import PlantedItem, Provenance
from judges.storage.files import atomic_write_text, jsonl_lines


class PerturbationError(ValueError):
    """The clean text offers nothing this perturbation can change."""


@dataclass(frozen=True)
class Perturbed:
    text: str
    change: str


# Opposite pairs; each word maps to its opposite (both directions).
DIRECTION_PAIRS = (
    ("above", "below"),
    ("rises", "falls"),
    ("higher", "lower"),
    ("increase", "decrease"),
    ("gain", "loss"),
    ("before", "after"),
    ("never", "always"),
)
_OPPOSITE = {a: b for a, b in DIRECTION_PAIRS} | {b: a for a, b in DIRECTION_PAIRS}
_WORD = re.compile(r"[A-Za-z]+")

# Cousin products: one defining feature apart. Longest names first, so a name that
# contains another ("barrier reverse convertible" contains "reverse convertible") wins.
COUSINS = {
    "barrier reverse convertible": "reverse convertible",
    "reverse convertible": "barrier reverse convertible",
    "autocallable": "barrier reverse convertible",
    "worst-of": "single-underlying",
    "single-underlying": "worst-of",
    "capital-protected note": "bonus certificate",
    "bonus certificate": "capital-protected note",
    "discount certificate": "reverse convertible",
}

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_ARTICLES = {"a", "an", "the"}


def _match_case(template: str, word: str) -> str:
    return word.capitalize() if template[:1].isupper() else word


def flip_direction(text: str, seed: int) -> Perturbed:
    """Swap one direction word for its opposite (`above` -> `below`)."""
    spots = [m for m in _WORD.finditer(text) if m.group().lower() in _OPPOSITE]
    if not spots:
        raise PerturbationError("no direction word to flip (above/below, rises/falls, ...)")
    spot = random.Random(seed).choice(spots)
    old = spot.group()
    new = _match_case(old, _OPPOSITE[old.lower()])
    return Perturbed(text[: spot.start()] + new + text[spot.end() :], f"{old!r} -> {new!r}")


def swap_product(text: str, seed: int, cousins: dict[str, str] | None = None) -> Perturbed:
    """Rename the product to its cousin everywhere; the mechanics stay word for word."""
    cousins = COUSINS if cousins is None else cousins
    names = sorted(cousins, key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(n) for n in names), re.IGNORECASE)
    found = sorted({m.group().lower() for m in pattern.finditer(text)})
    if not found:
        raise PerturbationError(f"no product name to swap; known names: {names}")
    target = random.Random(seed).choice(found)
    swapped = pattern.sub(
        lambda m: (
            _match_case(m.group(), cousins[target]) if m.group().lower() == target else m.group()
        ),
        text,
    )
    return Perturbed(swapped, f"{target!r} -> {cousins[target]!r}")


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text.strip()) if s]


def drop_sentence(text: str, seed: int) -> Perturbed:
    """Remove one sentence; the others keep their order and wording."""
    parts = sentences(text)
    if len(parts) < 2:
        raise PerturbationError("a text of one sentence has nothing to drop")
    index = random.Random(seed).randrange(len(parts))
    kept = parts[:index] + parts[index + 1 :]
    return Perturbed(" ".join(kept), f"dropped sentence {index + 1}: {parts[index]!r}")


def shuffle_sentences(text: str, seed: int) -> Perturbed:
    """Reorder the sentences (never the identity order); each sentence is unchanged."""
    parts = sentences(text)
    if len(set(parts)) < 2:
        raise PerturbationError("need two distinct sentences to shuffle")
    rng = random.Random(seed)
    order = list(range(len(parts)))
    # Compare sentences, not positions: swapping two identical sentences changes nothing.
    while [parts[i] for i in order] == parts:
        rng.shuffle(order)
    return Perturbed(" ".join(parts[i] for i in order), f"sentence order {[i + 1 for i in order]}")


def corrupt_grammar(text: str, seed: int) -> Perturbed:
    """Drop the articles and swap one pair of neighbouring words per sentence.

    Content words survive, so the facts are the same; only the grammar breaks.
    """
    rng = random.Random(seed)
    out = []
    for sentence in sentences(text):
        words = [w for w in sentence.split() if w.lower() not in _ARTICLES]
        if len(words) >= 4:
            i = rng.randrange(1, len(words) - 2)
            words[i], words[i + 1] = words[i + 1], words[i]
        out.append(" ".join(words))
    corrupted = " ".join(out)
    if corrupted == text:
        raise PerturbationError("nothing to corrupt: no articles and sentences too short")
    return Perturbed(corrupted, "articles dropped, one neighbouring word pair swapped per sentence")


GENERATORS: dict[str, Callable[[str, int], Perturbed]] = {
    "flip_direction": flip_direction,
    "swap_product": swap_product,
    "drop_sentence": drop_sentence,
    "shuffle_sentences": shuffle_sentences,
    "corrupt_grammar": corrupt_grammar,
}


def derive_item(
    clean: PlantedItem,
    *,
    generator: str,
    field: str,
    seed: int,
    new_id: str,
    slug: str,
    category: str,
    expect: list[dict[str, Any]],
) -> PlantedItem:
    """A planted item made from `clean` by one generator applied to one input field."""
    perturbed = GENERATORS[generator](clean.inputs[field], seed)
    inputs = dict(clean.inputs) | {field: perturbed.text}
    return PlantedItem(
        id=new_id,
        slug=slug,
        judge=clean.judge,
        category=category,
        control=False,
        inputs=inputs,
        expect=tuple(Expectation.model_validate(e) for e in expect),
        provenance=Provenance(
            source="generated",
            clean_item=clean.id,
            perturbation=f"{generator} on {field}: {perturbed.change}",
            seed=seed,
        ),
    )


class Derivation(BaseModel):
    """One `[[derive]]` entry of a set's `derived.toml`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    slug: str
    source: str = Field(alias="from")
    generator: str
    field: str
    seed: int
    category: str
    expect: list[dict[str, Any]]


def load_derivations(path: Path) -> list[Derivation]:
    if not path.is_file():
        return []
    table = tomllib.loads(path.read_text(encoding="utf-8"))
    try:
        return [Derivation.model_validate(entry) for entry in table.get("derive", [])]
    except ValidationError as error:
        raise PerturbationError(f"{path}: {error}") from None


def derive_all(items: list[PlantedItem], derivations: list[Derivation]) -> list[PlantedItem]:
    """The generated items a recipe file describes, from the set's clean items."""
    by_id = {item.id: item for item in items}
    derived = []
    for d in derivations:
        if d.source not in by_id:
            raise PerturbationError(f"derivation {d.id}: clean item {d.source} is not in the set")
        derived.append(
            derive_item(
                by_id[d.source],
                generator=d.generator,
                field=d.field,
                seed=d.seed,
                new_id=d.id,
                slug=d.slug,
                category=d.category,
                expect=d.expect,
            )
        )
    return derived


def write_derived(items_path: Path, derived: list[PlantedItem]) -> None:
    """Replace the generated items in place in a set's JSONL and append the new ones,
    keeping every other line where it is: deriving again rewrites no line it need not."""
    new = {
        item.id: json.dumps(item.model_dump(mode="json", exclude_none=True), ensure_ascii=False)
        for item in derived
    }
    lines, placed = [], set()
    for line in jsonl_lines(items_path.read_text(encoding="utf-8")):
        item_id = json.loads(line).get("id") if line.strip() else None
        if item_id in new:
            if item_id not in placed:  # a second copy of a generated item goes
                lines.append(new[item_id])
                placed.add(item_id)
            continue
        lines.append(line)
    lines += [text for item_id, text in new.items() if item_id not in placed]
    atomic_write_text(items_path, "\n".join(lines) + "\n")
