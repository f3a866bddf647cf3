"""Every line (or sentence, for a text on one line) indented: only the layout changes."""

from __future__ import annotations

import random

from judges.sets.generators import Generator, Options, Perturbed
from judges.sets.generators._text import lines_or_sentences

INDENTS = ("  ", "    ", "\t")


def indentation(text: str, seed: int, options: Options) -> Perturbed:
    indent = random.Random(seed).choice(INDENTS)
    parts = lines_or_sentences(text) or [text]
    indented = "\n".join(indent + part.strip() for part in parts)
    return Perturbed(indented, f"{len(parts)} lines indented by {indent!r}")


GENERATOR = Generator(
    "indentation", "invariance", "format", "each line or sentence indented", indentation
)
