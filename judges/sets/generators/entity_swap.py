"""One named entity swapped for its cousin from the team's list (`--entities`), everywhere
it appears: the mechanics stay word for word, the thing named is wrong (the seed's cousin
products). The cousin is written as the team spelled it."""

from __future__ import annotations

import random
import re

from judges.sets.generators import Generator, Options, PerturbationError, Perturbed


def entity_swap(text: str, seed: int, options: Options) -> Perturbed:
    if not options.entities:
        raise PerturbationError("no entity pairs: give the team's list with --entities FILE")
    # Longest names first, so a name containing another ("Acme Pro Max", "Acme Pro") wins.
    names = sorted(options.entities, key=len, reverse=True)
    pattern = re.compile("|".join(rf"\b{re.escape(n)}\b" for n in names), re.IGNORECASE)
    canonical = {name.lower(): name for name in names}
    found = sorted({canonical[m.group().lower()] for m in pattern.finditer(text)})
    if not found:
        raise PerturbationError("no entity of the team's list in the text")
    target = random.Random(seed).choice(found)
    cousin = options.entities[target]
    swapped = pattern.sub(
        lambda m: cousin if m.group().lower() == target.lower() else m.group(), text
    )
    return Perturbed(swapped, f"{target!r} -> {cousin!r}")


GENERATOR = Generator(
    "entity_swap", "defect", "wrong_entity", "an entity swapped for its cousin", entity_swap
)
