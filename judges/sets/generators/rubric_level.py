"""An answer written by a model for one level of a rubric dimension (`--rubric-level
accuracy=1`): the judge must score it at that level (`accuracy == 1`), not the set's
defect expectation. Runs only when the level is given."""

from judges.sets.generators import Generator

GENERATOR = Generator(
    "rubric_level", "defect", "rubric_level", "an answer aimed at one rubric level (model)", None
)
