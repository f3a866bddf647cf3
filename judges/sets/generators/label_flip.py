"""A good answer made wrong in one way that matters, written by a model: a defect the judge
must mark down. Its text is stored in the candidate and, accepted, in the planted item."""

from judges.sets.generators import Generator

GENERATOR = Generator(
    "label_flip", "defect", "label_flip", "a good answer made wrong in one way (model)", None
)
