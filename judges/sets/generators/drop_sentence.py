"""One sentence removed; the others keep their order and wording (judges.sets.perturb)."""

from __future__ import annotations

from judges.sets.generators import Generator, Options, Perturbed
from judges.sets.perturb import drop_sentence as _drop


def drop_sentence(text: str, seed: int, options: Options) -> Perturbed:
    return _drop(text, seed)


GENERATOR = Generator(
    "drop_sentence", "defect", "dropped_sentence", "one sentence removed", drop_sentence
)
