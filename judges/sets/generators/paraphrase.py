"""The same content in other words, written by a model (judges/sets/writers/paraphrase/):
the verdict must equal the source row's. Its text is stored in the probe, never redrawn."""

from judges.sets.generators import Generator

GENERATOR = Generator(
    "paraphrase", "invariance", "paraphrase", "the same content in other words (model)", None
)
