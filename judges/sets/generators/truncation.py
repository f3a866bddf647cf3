"""The text cut off between 40% and 70% of its words, mid-thought: an incomplete answer."""

from __future__ import annotations

import math
import random
import re

from judges.sets.generators import Generator, Options, PerturbationError, Perturbed

_WORD = re.compile(r"\S+")
MIN_WORDS = 6


def truncation(text: str, seed: int, options: Options) -> Perturbed:
    words = list(_WORD.finditer(text))
    if len(words) < MIN_WORDS:
        raise PerturbationError(f"fewer than {MIN_WORDS} words: too short to cut")
    low, high = math.ceil(0.4 * len(words)), math.floor(0.7 * len(words))
    kept = random.Random(seed).randint(low, max(low, high))
    cut = text[: words[kept - 1].end()]
    return Perturbed(cut, f"cut after word {kept} of {len(words)}")


GENERATOR = Generator(
    "truncation", "defect", "truncated", "cut off between 40% and 70% of its words", truncation
)
