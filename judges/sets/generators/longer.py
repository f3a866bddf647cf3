"""The same content said at about twice the length, written by a model: a judge that scores
longer answers higher moves on it (verbosity); the verdict must equal the source row's."""

from judges.sets.generators import Generator

GENERATOR = Generator(
    "longer", "invariance", "verbosity", "the same content at twice the length (model)", None
)
