"""One named entity swapped for its cousin from the team's list (`--entities`), everywhere
it appears: the mechanics stay word for word, the thing named is wrong."""

from __future__ import annotations

from judges.sets.generators import Generator, Options, PerturbationError, Perturbed
from judges.sets.perturb import swap_product


def entity_swap(text: str, seed: int, options: Options) -> Perturbed:
    if not options.entities:
        raise PerturbationError("no entity pairs: give the team's list with --entities FILE")
    return swap_product(text, seed, dict(options.entities))


GENERATOR = Generator(
    "entity_swap", "defect", "wrong_entity", "an entity swapped for its cousin", entity_swap
)
