"""Spaces doubled or tripled between some words, and trailing spaces: the words are the same."""

from __future__ import annotations

import random
import re

from judges.sets.generators import Generator, Options, PerturbationError, Perturbed

_GAP = re.compile(r"(?<=\S) (?=\S)")


def scattered_spaces(text: str, seed: int, options: Options) -> Perturbed:
    gaps = [m.start() for m in _GAP.finditer(text)]
    if not gaps:
        raise PerturbationError("no space between two words to widen")
    rng = random.Random(seed)
    chosen = set(rng.sample(gaps, k=max(1, len(gaps) // 4)))
    out = []
    last = 0
    for at in sorted(chosen):
        out.append(text[last:at])
        out.append(" " * rng.randint(2, 4))
        last = at + 1
    out.append(text[last:])
    widened = "".join(out) + " " * rng.randint(1, 3)
    return Perturbed(widened, f"{len(chosen)} of {len(gaps)} spaces widened, trailing spaces")


GENERATOR = Generator(
    "scattered_spaces", "invariance", "format", "spaces widened between words", scattered_spaces
)
