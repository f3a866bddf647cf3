"""One statement negated: "not" added after a verb that takes it, or a negation removed."""

from __future__ import annotations

import random
import re

from judges.sets.generators import Generator, Options, PerturbationError, Perturbed

_AUXILIARY = r"is|are|was|were|can|will|does|do|did|should|must|has|have|had|could|would|may"
_NEGATED = re.compile(rf"\b({_AUXILIARY}) not\b", re.IGNORECASE)
_CONTRACTED = {
    "isn't": "is", "aren't": "are", "wasn't": "was", "weren't": "were", "can't": "can",
    "won't": "will", "doesn't": "does", "don't": "do", "didn't": "did", "shouldn't": "should",
    "hasn't": "has", "haven't": "have", "couldn't": "could", "wouldn't": "would",
}  # fmt: skip
_CONTRACTION = re.compile(r"\b(" + "|".join(re.escape(w) for w in _CONTRACTED) + r")\b", re.I)
_PLAIN = re.compile(rf"\b({_AUXILIARY})\b(?! not\b)", re.IGNORECASE)


def negation(text: str, seed: int, options: Options) -> Perturbed:
    spots: list[tuple[int, int, str]] = []
    for m in _NEGATED.finditer(text):
        spots.append((m.start(), m.end(), m.group(1)))
    for m in _CONTRACTION.finditer(text):
        word = _CONTRACTED[m.group().lower()]
        spots.append((m.start(), m.end(), word.capitalize() if m.group()[0].isupper() else word))
    for m in _PLAIN.finditer(text):
        spots.append((m.start(), m.end(), f"{m.group()} not"))
    if not spots:
        raise PerturbationError("no verb to negate (is, can, will, does, ...) and no negation")
    start, end, new = random.Random(seed).choice(sorted(spots))
    negated = text[:start] + new + text[end:]
    return Perturbed(negated, f"{text[start:end]!r} -> {new!r}")


GENERATOR = Generator("negation", "defect", "negated", "one statement negated", negation)
