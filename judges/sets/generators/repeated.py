"""The main points said again at the end: a longer answer with nothing new in it. A judge
that scores longer answers higher moves on it; the verdict must equal the source row's."""

from __future__ import annotations

import random

from judges.sets.generators import Generator, Options, PerturbationError, Perturbed
from judges.sets.perturb import sentences

LEADS = ("To repeat the main points:", "In short:", "To sum up:")


def repeated(text: str, seed: int, options: Options) -> Perturbed:
    parts = sentences(text)
    if not parts:
        raise PerturbationError("no sentence to repeat")
    lead = random.Random(seed).choice(LEADS)
    longer = f"{text.rstrip()}\n\n{lead} {' '.join(parts)}"
    return Perturbed(
        longer, f"{lead!r} and the text again: {len(longer) - len(text)} characters more"
    )


GENERATOR = Generator(
    "repeated", "invariance", "format", "the main points said again: longer, nothing new", repeated
)
