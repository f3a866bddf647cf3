"""Candidate generators: the registry `python -m judges plant` draws on, one module each.

A generator turns one real row's judged text into a candidate planted item: a defect the
judge must mark down (a truncation, a number changed), or an invariance item whose verdict
must equal the row's own (blank lines, Markdown). Each module of this package defines
`GENERATOR`; a team adds its own the same way in a module of its project and names it with
`--generator-module pkg.module` (docs/planting.md). Every generator is deterministic given
its seed; one that finds nothing to change raises `PerturbationError`, and `plant` counts
and names the rows it skipped.

A model-written generator (paraphrase, longer, shorter, label_flip) has no function: its
text comes from a model asked with its versioned prompt (judges/sets/writers/<name>/),
recorded and replayed from cassettes (judges.cli.plant_writer), so it is deterministic
given the cassettes.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from judges.sets.perturb import PerturbationError, Perturbed

__all__ = [
    "Generator",
    "GeneratorError",
    "Options",
    "PerturbationError",
    "Perturbed",
    "load_generators",
]

Kind = Literal["defect", "invariance"]


class GeneratorError(ValueError):
    """A generator module cannot be used; the message names the module and the fix."""


@dataclass(frozen=True)
class Options:
    """What a team gives the generators beyond the text: entity pairs (`--entities`)."""

    entities: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Generator:
    """One way of making a candidate from a real row's judged text."""

    name: str  # lower-case words joined by "_": the candidate's generator and id part
    kind: Kind  # defect: the judge must mark it down; invariance: the verdict must not move
    category: str  # the planted category its accepted candidates join (a defect's)
    summary: str  # one line for `plant --list` and the docs
    # (judged text, seed, options); None: model-written, its prompt under judges/sets/writers/
    make: Callable[[str, int, Options], Perturbed] | None

    @property
    def written(self) -> bool:
        """Model-written: its text comes from a recorded model call, not from a function."""
        return self.make is None


def _check(generator: object, where: str) -> Generator:
    if not isinstance(generator, Generator):
        raise GeneratorError(
            f"{where} defines no GENERATOR = judges.sets.generators.Generator(...) "
            f"(found {type(generator).__name__})"
        )
    return generator


def builtin_generators() -> dict[str, Generator]:
    """Every module of this package, by generator name, in module-name order."""
    found = {}
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module.name.startswith("_"):
            continue
        loaded = importlib.import_module(f"{__name__}.{module.name}")
        generator = _check(getattr(loaded, "GENERATOR", None), f"{__name__}.{module.name}")
        found[generator.name] = generator
    return found


def load_generators(extra_modules: Sequence[str] = ()) -> dict[str, Generator]:
    """The built-in generators and a team's own (`pkg.module` each defining GENERATOR);
    a team's generator may not reuse a built-in name, so a candidate's generator is one."""
    registry = builtin_generators()
    for name in extra_modules:
        try:
            module = importlib.import_module(name)
        except Exception as error:  # any import-time failure of the team's module
            raise GeneratorError(
                f"--generator-module {name}: cannot be imported ({type(error).__name__}: "
                f"{error}); is its folder on the ini's `pythonpath`?"
            ) from None
        generator = _check(getattr(module, "GENERATOR", None), f"--generator-module {name}")
        if generator.name in registry:
            raise GeneratorError(
                f"--generator-module {name}: the generator name {generator.name!r} is taken "
                "by another generator; give yours a name of its own"
            )
        registry[generator.name] = generator
    return registry
