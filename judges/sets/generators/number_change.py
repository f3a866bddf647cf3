"""One number in the text changed to another (30 -> 60): a wrong figure, stated as sure."""

from __future__ import annotations

import random
import re

from judges.sets.generators import Generator, Options, PerturbationError, Perturbed

# A number on its own, with its decimals: not a piece of a word or identifier (A4, v2).
_NUMBER = re.compile(r"(?<![\w.])\d{1,15}(?:\.\d{1,15})?(?![\w]|\.\d)")


def _other(value: str, rng: random.Random) -> str:
    whole, _, decimals = value.partition(".")
    number = int(whole)
    choices = sorted({number * 2, number * 3, number + rng.randint(1, 9), number // 2} - {number})
    new = str(rng.choice(choices))
    return f"{new}.{decimals}" if decimals else new


def number_change(text: str, seed: int, options: Options) -> Perturbed:
    spots = list(_NUMBER.finditer(text))
    if not spots:
        raise PerturbationError("no number to change")
    rng = random.Random(seed)
    spot = rng.choice(spots)
    new = _other(spot.group(), rng)
    changed = text[: spot.start()] + new + text[spot.end() :]
    return Perturbed(changed, f"{spot.group()!r} -> {new!r}")


GENERATOR = Generator(
    "number_change", "defect", "wrong_number", "one number changed", number_change
)
