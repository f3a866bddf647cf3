"""Blank lines between the lines (or sentences) of the text: only the layout changes."""

from __future__ import annotations

import random

from judges.sets.generators import Generator, Options, PerturbationError, Perturbed
from judges.sets.generators._text import lines_or_sentences


def blank_lines(text: str, seed: int, options: Options) -> Perturbed:
    parts = lines_or_sentences(text)
    if len(parts) < 2:
        raise PerturbationError("one line of one sentence: no place for a blank line")
    rng = random.Random(seed)
    gaps = sorted(rng.sample(range(1, len(parts)), k=rng.randint(1, len(parts) - 1)))
    out = [parts[0]]
    for index in range(1, len(parts)):
        out.append("\n\n\n" if index in gaps else "\n")
        out.append(parts[index])
    return Perturbed("".join(out), f"blank lines before parts {gaps} of {len(parts)}")


GENERATOR = Generator(
    "blank_lines", "invariance", "format", "blank lines between lines or sentences", blank_lines
)
