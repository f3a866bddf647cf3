"""Bias probes: seeded, deterministic edits that should NOT change a judge's verdict.

A perturbation (`perturb.py`) plants a defect the judge must catch; a probe adds nothing
a fair judge should reward: padding, a dummy answer, a note to the grader, an authority
claim, another order of the criteria or of a text's facts (its sentences). Each probe item
is judged and set against the verdict on its unperturbed item (the main run), and against
a second, independent draw of that item (the run `probe-noise`), which is the noise floor
the probe must rise above. The kinds themselves, and their edits, are the registry
`probe_kinds.py`; this module reads the recipe and writes and checks the items.

planted_sets/<judge>/probes.toml    the recipe: which probe, which items, which field, seed
planted_sets/<judge>/probes.jsonl   the probe items it generates (`python -m judges derive`)
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from judges.core.results import Expectation
from judges.core.runner import Subject
from judges.sets.enrolment import Run, check_versions
from judges.sets.folder import PROBES_FILE
from judges.sets.items import PlantedItem, PlantedSetError
from judges.sets.planted import PlantedSet
from judges.sets.probe_kinds import PROBE_KINDS, PROBES, taking
from judges.storage.files import atomic_write_text, json_lines

NOISE_RUN = "probe-noise"
# The noise draw is the first independent draw after the main run's (draw 0).
NOISE_DRAW = 1


def run_name(probe: str) -> str:
    return f"probe-{probe}"


def probe_of_run(run: str) -> str | None:
    """The probe whose items a run judged (`probe-padding` -> padding); None for the
    noise draw and for every other run."""
    probe = run.removeprefix("probe-")
    return None if run == NOISE_RUN or probe == run else probe


# -- the recipe and the items -------------------------------------------------------------


class ProbeRecipe(BaseModel):
    """One `[<probe>]` table of probes.toml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    items: tuple[str, ...] = Field(min_length=1)
    field: str
    seed: int = 0
    # One seed per item, in the order of `items` (a reviewed candidate keeps the seed it was
    # made with); without it, item k uses `seed + k`.
    seeds: tuple[int, ...] = ()
    echo: str | None = None  # an input field the restating padding / echo dummy reuse
    expect: tuple[Expectation, ...] = ()  # dummy: the lowest verdict
    kind: str | None = None  # a variant of the probe, for the kinds that have them
    texts: tuple[str, ...] = ()  # the set's own notes or claims, for the kinds that take them
    # A model-written probe's texts, one per item in the order of `items` (written_* kinds).
    written: tuple[str, ...] = ()

    def options(self) -> dict[str, Any]:
        return {"kind": self.kind, "texts": self.texts}

    def options_of(self, k: int) -> dict[str, Any]:
        """The options of item k: the table's, and its stored text when it has one."""
        return self.options() | ({"written": self.written[k]} if self.written else {})

    @model_validator(mode="after")
    def _a_seed_per_item(self) -> ProbeRecipe:
        if self.seeds and len(self.seeds) != len(self.items):
            raise ValueError(
                f"seeds lists {len(self.seeds)} seeds for {len(self.items)} items: one each"
            )
        if self.written and len(self.written) != len(self.items):
            raise ValueError(
                f"written lists {len(self.written)} texts for {len(self.items)} items: one each"
            )
        return self

    def seed_of(self, k: int) -> int:
        return self.seeds[k] if self.seeds else self.seed + k


class ProbeFile(BaseModel):
    """probes.toml: the verdict field whose rise is "judge-pleasing", the versions probed,
    and one `[<probe>]` table per probe kind (judges.sets.probe_kinds)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    score: str
    versions: tuple[str, ...] | None = None  # prompt versions probed; default: every one
    tables: dict[str, ProbeRecipe] = {}  # by probe kind, in registry order

    @model_validator(mode="before")
    @classmethod
    def _tables_by_kind(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        if "tables" in data:
            raise ValueError(f"no key 'tables': a probe is a [<probe>] table, one of {PROBES}")
        tables = {probe: data[probe] for probe in PROBES if probe in data}
        return {k: v for k, v in data.items() if k not in PROBE_KINDS} | {"tables": tables}

    @model_validator(mode="after")
    def _options_where_they_mean_something(self) -> ProbeFile:
        for probe, recipe in self.tables.items():
            kind = PROBE_KINDS[probe]
            if recipe.kind is not None and "kind" not in kind.options:
                owners = " and ".join(f"[{p}]" for p in taking("kind"))
                kinds = tuple(k for p in taking("kind") for k in PROBE_KINDS[p].kinds)
                raise ValueError(f"[{probe}] kind: only {owners} has kinds ({kinds})")
            if recipe.kind is not None and recipe.kind not in kind.kinds:
                raise ValueError(f"[{probe}] kind = {recipe.kind!r}: its kinds are {kind.kinds}")
            if recipe.texts and "texts" not in kind.options:
                owners = " and ".join(f"[{p}]" for p in taking("texts"))
                raise ValueError(f"[{probe}] texts: only {owners} take texts")
            if ("written" in kind.options) != bool(recipe.written):
                owners = ", ".join(f"[{p}]" for p in taking("written"))
                raise ValueError(
                    f"[{probe}] written: the model-written kinds ({owners}) store one text per "
                    "item in `written`, and only they"
                )
        return self

    def recipes(self) -> dict[str, ProbeRecipe]:
        return dict(self.tables)


class ProbeItem(BaseModel):
    """One probe of one planted item: the perturbed inputs and where they came from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    probe: str  # a probe kind (judges.sets.probe_kinds)
    id: str  # the planted item it was made from
    slug: str
    seed: int
    change: str
    inputs: dict[str, Any]
    expect: tuple[Expectation, ...]

    @field_validator("probe")
    @classmethod
    def _a_probe_kind(cls, probe: str) -> str:
        if probe not in PROBE_KINDS:
            raise ValueError(f"{probe!r} is not a probe kind ({', '.join(PROBES)})")
        return probe

    @property
    def run(self) -> str:
        return run_name(self.probe)

    @property
    def case_slug(self) -> str:
        return f"{self.probe}-{self.slug}"

    def subject(self, clean: PlantedItem) -> Subject:
        return Subject(self.id, clean.category, clean.control, self.inputs, self.expect)


@dataclass(frozen=True)
class ProbeSet:
    judge: str
    path: Path
    score: str
    items: tuple[ProbeItem, ...]
    versions: tuple[str, ...] | None = None  # None: every prompt version of the judge
    # (model, version) -> {"<probe>": {item id: reason}}: accepted failures, strict xfails
    accepted: dict[tuple[str, str], dict[str, dict[str, str]]] = field(default_factory=dict)

    def accepted_failure(self, model: str, version: str, probe: str, item_id: str) -> str | None:
        return self.accepted.get((model, version), {}).get(probe, {}).get(item_id)

    def item(self, probe: str, item_id: str) -> ProbeItem:
        for item in self.items:
            if item.probe == probe and item.id == item_id:
                return item
        raise KeyError((probe, item_id))

    def probes(self) -> list[str]:
        return [p for p in PROBES if any(i.probe == p for i in self.items)]

    def clean_ids(self) -> list[str]:
        """The planted items some probe starts from, each once, in set order."""
        return list(dict.fromkeys(i.id for i in self.items))


def load_recipe(path: Path) -> ProbeFile | None:
    if not path.is_file():
        return None
    try:
        return ProbeFile.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except tomllib.TOMLDecodeError as error:
        raise PlantedSetError(f"{path}: not valid TOML: {error}") from None
    except ValidationError as error:
        raise PlantedSetError(f"{path}: {error}") from None


def generate(planted: PlantedSet, recipe: ProbeFile, where: Path) -> list[ProbeItem]:
    """The probe items a recipe describes; item k of a probe uses seed `seed + k`, or the
    k-th of `seeds`."""
    out = []
    for probe, entry in recipe.recipes().items():
        for k, item_id in enumerate(entry.items):
            try:
                clean = planted.item(item_id)
            except KeyError:
                raise PlantedSetError(
                    f"{where}: [{probe}] lists {item_id}, which is not an item of the set"
                ) from None
            seed = entry.seed_of(k)
            probed = PROBE_KINDS[probe].transform(
                dict(clean.inputs), entry.field, seed, entry.echo, **entry.options_of(k)
            )
            expect = entry.expect or clean.expect
            out.append(
                ProbeItem(
                    probe=probe,
                    id=clean.id,
                    slug=clean.slug,
                    seed=seed,
                    change=probed.change,
                    inputs=probed.inputs,
                    expect=tuple(expect),
                )
            )
    return out


def load_probe_set(planted: PlantedSet) -> ProbeSet | None:
    """The probe items on file, checked against the recipe (a drift is a usage error)."""
    recipe_path = planted.folder.probes_path
    recipe = load_recipe(recipe_path)
    if recipe is None:
        return None
    probes_run = Run("probes", f"{PROBES_FILE} versions", recipe.versions)
    check_versions(recipe_path, [probes_run], planted.versions)
    items_path = planted.folder.probe_items_path
    fix = f"run python -m judges derive {planted.judge}"
    if not items_path.is_file():
        raise PlantedSetError(f"{items_path} is missing: {fix}")
    on_file = []
    for number, raw in json_lines(items_path, PlantedSetError, "; each line one JSON object"):
        try:
            on_file.append(ProbeItem.model_validate(raw))
        except ValidationError as error:
            raise PlantedSetError(f"{items_path}:{number}: {error}") from None
    if on_file != generate(planted, recipe, recipe_path):
        raise PlantedSetError(f"{items_path} does not match {recipe_path}: {fix}")
    accepted = checked_accepted(planted, on_file)
    return ProbeSet(
        planted.judge, planted.path, recipe.score, tuple(on_file), recipe.versions, accepted
    )


def checked_accepted(
    planted: PlantedSet, items: list[ProbeItem]
) -> dict[tuple[str, str], dict[str, dict[str, str]]]:
    """The set's `["model"."version".<probe>]` tables of item id = reason, each naming
    probe items of this set; unknown entries are errors."""
    known = {(item.probe, item.id) for item in items}
    path, accepted = planted.folder.probe_expectations_path, planted.accepted_probe_failures
    for (model, version), probes in accepted.items():
        for probe, table in probes.items():
            unknown = sorted(i for i in table if (probe, i) not in known)
            if probe not in PROBES or not isinstance(table, dict) or unknown:
                raise PlantedSetError(
                    f'{path}: ["{model}"."{version}".{probe}] names no probe items of this set '
                    f"({unknown or probe}); probes are {list(PROBES)} with items from {PROBES_FILE}"
                )
    return accepted


def write_probes(planted: PlantedSet) -> list[ProbeItem]:
    """Regenerate probes.jsonl from probes.toml; returns the items written."""
    recipe_path = planted.folder.probes_path
    recipe = load_recipe(recipe_path)
    if recipe is None:
        return []
    items = generate(planted, recipe, recipe_path)
    text = "".join(
        json.dumps(item.model_dump(mode="json"), ensure_ascii=False) + "\n" for item in items
    )
    atomic_write_text(planted.folder.probe_items_path, text)
    return items
