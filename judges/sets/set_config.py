"""`set.toml`: which items, prompt versions and models a judge's runs use.

Its own module so that the runs' enrolment (`enrolment.py`) reads the configuration
without importing the planted-set loader that checks it with enrolment.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from judges.calls.backends import ModelRef

MAX_RETEST_DRAWS = 5  # each is a whole run of the set: more would be a typo, not a plan


class PanelConfig(BaseModel):
    """The cross-check judge of a panel, labelled for what it honestly is."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    versions: tuple[str, ...] | None = None  # default: every prompt version
    items: tuple[str, ...] = ()  # default: every item of the set
    model: str | None = None  # default: the primary judge model
    temperature: float | None = Field(default=None, ge=0, le=2)
    label: str

    @field_validator("model")
    @classmethod
    def _a_model(cls, model: str | None) -> str | None:
        if model is not None:
            ModelRef.parse(model)  # BackendError is a ValueError: pydantic names the field
        return model


class VersionRun(BaseModel):
    """`[versions."<v>"]` in set.toml: who judges a prompt version's main run, and on what."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    models: tuple[str, ...] = ()  # default: the judge's baseline model
    items: tuple[str, ...] = ()  # default: every item of the set
    # model -> the items it judges, by id or by set (category), within `items`: a model
    # with outputs for some sets only (a partial release) judges those, and is complete.
    model_items: dict[str, tuple[str, ...]] = {}
    # The retest draws this version was recorded with, where not the set's `retest_draws`:
    # an accepted version keeps what its pinned cassettes hold.
    retest_draws: int | None = Field(default=None, ge=1, le=MAX_RETEST_DRAWS)

    @field_validator("models")
    @classmethod
    def _models(cls, models: tuple[str, ...]) -> tuple[str, ...]:
        for model in models:
            ModelRef.parse(model)  # a model names a cassette folder: bounded there
        return models


class SetConfig(BaseModel):
    """`set.toml`: which items and prompt versions the reliability runs use."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # "planted": every item is a test (a miss fails unless accepted). "benchmark": a labelled
    # benchmark's released judgements (planted_sets/<judge>/benchmarks/<name>/), where a
    # wrong item is a statistic (agreement, its interval, its chance test), never a failed
    # test; its published figures are what the suite checks (docs/pairwise-benchmarks.md).
    kind: Literal["planted", "benchmark"] = "planted"
    # Each run covers every prompt version unless its `*_versions` list restricts it; a
    # version left out lacks the run and reads INCOMPLETE (judges.sets.enrolment).
    noise_items: tuple[str, ...] = ()
    noise_repeats: int = Field(default=5, ge=2)
    noise_versions: tuple[str, ...] | None = None
    retest: bool = False  # a second, independent draw of the whole set (run `retest`)
    retest_versions: tuple[str, ...] | None = None  # given: retest on, for these versions
    # Independent draws of the set in run `retest` (its repeats, one cassette per item): with
    # two or more, the retest-agreement gate compares versions over every pair of draws, not
    # one (judges.stats.regression.stability). A version may keep another count.
    retest_draws: int = Field(default=1, ge=1, le=MAX_RETEST_DRAWS)
    sme_labels: str | None = None  # a JSONL file under planted_sets/sme/
    sme_versions: tuple[str, ...] | None = None
    panel: PanelConfig | None = None
    # An expert's graded reading list (judges/sets/reading_list.py), judged as run
    # `reading_list` under these prompt versions and scored as a ranking.
    reading_list: str | None = None  # a JSON file beside items.jsonl
    reading_list_versions: tuple[str, ...] | None = None
    versions: dict[str, VersionRun] = {}
    # The judge's verdicts on unlabelled outputs, per prompt version: a JSONL beside
    # items.jsonl. The report shows their pass rate corrected for the judge's TPR and TNR on
    # this set; `pass_if` says what passes (default: what every control expects).
    outputs: dict[str, str] = {}
    pass_if: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _draws_need_a_retest(self) -> SetConfig:
        named = any(run.retest_draws is not None for run in self.versions.values())
        if (self.retest_draws != 1 or named) and not (self.retest or self.retest_versions):
            raise ValueError(
                "retest_draws counts the draws of run `retest`, which this set does not have: "
                "add `retest = true`, or remove retest_draws"
            )
        return self

    def retest_draws_for(self, version: str) -> int:
        """The retest draws of a prompt version: its own `[versions."<v>"]` count, else the
        set's."""
        named = self.versions.get(version)
        own = named.retest_draws if named is not None else None
        return self.retest_draws if own is None else own
