"""The same content said at about half the length, written by a model: a judge that scores
shorter answers lower moves on it (verbosity); the verdict must equal the source row's."""

from judges.sets.generators import Generator

GENERATOR = Generator(
    "shorter", "invariance", "verbosity", "the same content at half the length (model)", None
)
