"""Planted-error sets: items, accepted misses and gates, loaded with errors that say where.

planted_sets/<judge>/items.jsonl        one planted item per line
planted_sets/<judge>/expectations.toml  accepted misses per judge model and prompt version
planted_sets/<judge>/gates.toml         thresholds per judge model and prompt version
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judges.core.spec import JudgeSpec, version_key
from judges.sets.enrolment import check_versions, find_run, run_versions, set_runs
from judges.sets.folder import SET_FILE, SetFolder
from judges.sets.items import PlantedItem, PlantedSetError, ReplyFixture
from judges.sets.pins import Pin, edited_pins, load_pins
from judges.sets.preflight import expectation_problem
from judges.sets.reading_list import load_reading_list, reading_list_items
from judges.sets.set_config import SetConfig
from judges.sets.tables import table_line
from judges.storage.files import json_lines

ItemT = TypeVar("ItemT", bound=PlantedItem)


class Gates(BaseModel):
    """Gates for one (judge model, prompt version): floors the team owns, and a baseline.

    The floors (`min_*`, `max_*`) are absolute limits written by hand. `baseline` names the
    prompt version whose recorded main run is the accepted baseline: the regression gates
    fail a run only when it is significantly worse than that run (one-sided at `alpha`).
    """

    # A NaN floor is never met nor failed (every comparison with it is false): refused.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    baseline: str | None = None
    alpha: float = Field(default=0.05, gt=0, lt=0.5)
    # The detection drop the regression gates must see with 80% power (0.15: 15 points); a
    # PASS whose detection gate cannot see it says so ("PASS, but blind to ...").
    min_detectable_drop: float = Field(default=0.15, gt=0, lt=1)  # WORTH_DETECTING
    min_detection: dict[str, float] = {}
    max_control_false_positive: float | None = Field(default=None, ge=0, le=1)
    max_error_rate: float | None = Field(default=None, ge=0, le=1)
    noise_floor: dict[str, float] = {}
    test_retest: dict[str, float] = {}
    panel: dict[str, float] = {}
    sme: dict[str, float] = {}
    ranking: dict[str, float] = {}  # minimum mean metric over queries, e.g. "ndcg@10"
    max_flip: dict[str, float] = {}  # bias probes: maximum biased flip rate per probe
    reading_list: dict[str, float] = {}  # minimum metric on the reading list, e.g. "map"
    # pairwise judges, per category: e.g. min_agreement (same winner in both orders)
    pairwise: dict[str, float] = {}
    # pairwise: category -> why its NOT FIT or FAIL is accepted (a strict xfail)
    pairwise_accepted: dict[str, str] = {}
    # minimum share of labels kept, e.g. "retest.level" or "noise.criterion_label.Not Relevant"
    label_stability: dict[str, float] = {}
    # Every gated ranking metric must also beat a random ranking; when the judge does not,
    # this says why the failure is accepted (an accepted failure that passes fails the run).
    ranking_known_failure: str = ""
    # The judge is NOT FIT (at chance on something the set measures) and the team knows: why.
    # The fitness test then shows as a strict xfail; a judge that becomes fit XPASSes and
    # this line must go. Never inherited: a new prompt version proves itself or is accepted.
    accept_not_fit: str = ""
    # Accepted as the baseline although significantly worse than the baseline before it:
    # why. Written by `judges baseline --accept-regression`; never inherited either.
    accept_regression: str = ""
    # Accepted as the baseline although UNDECIDED (no chance test can decide at the set's
    # size): why. Written by `judges baseline --accept-undecided`; never inherited either.
    accept_undecided: str = ""
    note: str = ""


@dataclass
class PlantedSet:
    judge: str
    path: Path
    items: list[PlantedItem]
    accepted_misses: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    gates: dict[tuple[str, str], Gates] = field(default_factory=dict)
    config: SetConfig = field(default_factory=SetConfig)
    reading_list: list[PlantedItem] = field(default_factory=list)
    # (model, version) -> the earlier version whose gates it uses, having no table of its own
    inherited_gates: dict[tuple[str, str], str] = field(default_factory=dict)
    # (model, version) -> the accepted baseline's pinned prompt files (judges.sets.pins)
    pins: dict[tuple[str, str], Pin] = field(default_factory=dict)
    versions: tuple[str, ...] = ()  # the judge's prompt versions, oldest first
    # A callable judge's reply fixtures (replies.jsonl): its code on raw replies, no model.
    reply_fixtures: list[ReplyFixture] = field(default_factory=list)
    # (model, version) -> probe -> item id -> reason: probe_expectations.toml, read with the
    # set; `sets.probes.load_probe_set` checks each entry against the probe items.
    accepted_probe_failures: dict[tuple[str, str], dict[str, dict[str, str]]] = field(
        default_factory=dict
    )

    @property
    def folder(self) -> SetFolder:
        """The set's folder: where each of its files is, read and written."""
        return SetFolder.at(self.path)

    def run_versions(self, run: str) -> tuple[str, ...]:
        """The prompt versions set.toml's run `run` covers (none if the judge lacks it)."""
        return run_versions(find_run(self, run), self.versions)

    def gates_source(self, model: str, version: str) -> str:
        """Where the gates of (model, version) come from, for messages and reports."""
        source = self.inherited_gates.get((model, version))
        where = f'{self.folder.gates_path} ["{model}"."{source or version}"]'
        if source is not None:
            where += f" (inherited: prompt {version} has no table of its own)"
        return where

    def item(self, item_id: str) -> PlantedItem:
        for item in [*self.items, *self.reading_list]:
            if item.id == item_id:
                return item
        raise KeyError(item_id)

    def main_items(self, version: str, model: str | None = None) -> tuple[PlantedItem, ...]:
        """The items set.toml asks a version's main run (of `model`) to judge: every item, or
        `[versions."<v>"] items`, narrowed by `model_items` for that model."""
        named = self.config.versions.get(version)
        if named is None:
            return tuple(self.items)
        items = tuple(self.item(i) for i in named.items) if named.items else tuple(self.items)
        wanted = named.model_items.get(model) if model is not None else None
        if wanted is None:
            return items
        return tuple(item for item in items if item.id in wanted or item.category in wanted)

    def categories(self) -> list[str]:
        return sorted({item.category for item in self.items})

    def accepted_miss(self, model: str, version: str, item_id: str) -> str | None:
        return self.accepted_misses.get((model, version), {}).get(item_id)


# The fix for the item fields people get wrong first, named in the load error.
_FIELD_HINTS = {
    "expect": 'every item, control or defect, needs "expect": [{"field": F, "op": OP, '
    '"value": V}] (a control expects the good verdict, e.g. {"field": "accuracy", "op": '
    '">=", "value": 2})',
    "provenance": '"provenance" is an object, e.g. {"source": "hand", "note": "why"}',
    "id": '"id" is 2-4 capital letters, a hyphen and 2-3 digits, e.g. "SR-01"',
    "slug": '"slug" is lower-case words joined by hyphens, at most 40 characters',
}


def _field_error(path: Path, line: int, error: ValidationError) -> PlantedSetError:
    problems = []
    for e in error.errors(include_url=False):
        where = ".".join(str(p) for p in e["loc"]) or "<item>"
        problem = f"field {where!r}: {e['msg']} (got {str(e.get('input'))[:60]!r})"
        hint = _FIELD_HINTS.get(str(e["loc"][0])) if e["loc"] else None
        problems.append(f"{problem}; {hint}" if hint else problem)
    return PlantedSetError(f"{path}:{line}: " + "; ".join(problems))


def load_items(path: Path, spec: JudgeSpec) -> list[PlantedItem]:
    """Every item of one JSONL file, validated, including the judge's own inputs model."""
    return _read_items(path, spec, PlantedItem)


def _read_items(path: Path, spec: JudgeSpec, kind: type[ItemT]) -> list[ItemT]:
    """Planted items, or reply fixtures (`replies.jsonl`): the same checks for both."""
    items: list[ItemT] = []
    seen: dict[str, int] = {}
    hint = "; each line must be one JSON object"
    for number, raw in json_lines(path, PlantedSetError, hint):
        try:
            item = kind.model_validate(raw)
        except ValidationError as error:
            raise _field_error(path, number, error) from None
        if item.judge != spec.name:
            raise PlantedSetError(
                f"{path}:{number}: field 'judge' is {item.judge!r} but this set belongs to "
                f"{spec.name!r}"
            )
        try:
            spec.parse_inputs(item.inputs)
        except ValidationError as error:
            wrapped = _field_error(path, number, error)
            raise PlantedSetError(str(wrapped).replace("field '", "field 'inputs.")) from None
        except ValueError as error:
            raise PlantedSetError(f"{path}:{number}: field 'inputs': {error}") from None
        if item.id in seen:
            raise PlantedSetError(
                f"{path}:{number}: field 'id': {item.id} already used on line {seen[item.id]}"
            )
        verdict_model = spec.verdict_model  # None: a callable judge that names no model
        for index, expectation in enumerate(item.expect):
            problem = verdict_model and expectation_problem(expectation, verdict_model)
            if problem:
                raise PlantedSetError(f"{path}:{number}: field 'expect.{index}': {problem}")
        seen[item.id] = number
        items.append(item)
    if not items:
        raise PlantedSetError(
            f"{path}:1: the planted set has no items, so every gate would pass on nothing; "
            "add one JSON object per line, or remove the file"
        )
    _check_categories(path, items, seen)
    for item in items:
        clean = item.provenance.clean_item
        if clean is not None and clean not in seen:
            raise PlantedSetError(
                f"{path}:{seen[item.id]}: field 'provenance.clean_item': {clean} is not an "
                f"item of this set (item {item.id})"
            )
    return items


def _check_categories(path: Path, items: Sequence[PlantedItem], lines: dict[str, int]) -> None:
    """A category is all controls or all defects, and one named for controls holds controls.

    A control without `"control": true` would count as a defect the judge "detected" when it
    rightly left it alone, and a control category mixing in defects hides both figures.
    """
    for category in sorted({item.category for item in items}):
        members = [item for item in items if item.category == category]
        controls = [item for item in members if item.control]
        defects = [item for item in members if not item.control]
        if controls and defects:
            control, defect = controls[0], defects[0]
            raise PlantedSetError(
                f"{path}:{lines[defect.id]}: category {category!r} holds controls (e.g. "
                f"{control.id}, line {lines[control.id]}) and defects (e.g. {defect.id}): a "
                'category is all controls or all defects; set "control": true on every '
                "control, or move the defects to a category of their own"
            )
        if defects and "control" in category.lower():
            raise PlantedSetError(
                f"{path}:{lines[defects[0].id]}: item {defects[0].id} is in category "
                f'{category!r} but lacks "control": true, so it would count as a defect; add '
                '"control": true (a control is a harmless answer the judge must leave '
                "alone), or name the category for the defect it plants"
            )


def load_reply_fixtures(root: Path, spec: JudgeSpec) -> list[ReplyFixture]:
    """A callable judge's reply fixtures (`replies.jsonl` beside its planted items), or
    none; a judge with prompt files has none (its replies are parsed by the harness)."""
    path = SetFolder(root, spec.name).replies_path
    if not path.is_file():
        return []
    if spec.team is None:
        raise PlantedSetError(
            f"{path}: reply fixtures run a judge callable's own code; {spec.name} has a verdict "
            "module and prompt files (its replies are parsed by the harness): remove the file"
        )
    return _read_items(path, spec, ReplyFixture)


def load_planted_set(root: Path, spec: JudgeSpec) -> PlantedSet:
    files = SetFolder(root, spec.name)
    folder = files.path
    items = load_items(files.items_path, spec)
    ids = {item.id for item in items}
    misses_path, misses = files.expectations_path, files.read_expectations()
    for (model, version), table in misses.items():
        unknown = sorted(set(table) - ids)
        if unknown:
            raise PlantedSetError(
                f'{misses_path}: ["{model}"."{version}"] lists {unknown}, which are not '
                "items of the set; remove them"
            )
    gates_path = files.gates_path
    gates: dict[tuple[str, str], Gates] = {}
    for key, table in files.read_gates().items():
        try:
            gates[key] = Gates.model_validate(table)
        except ValidationError as error:
            raise PlantedSetError(f'{gates_path}: ["{key[0]}"."{key[1]}"]: {error}') from None
        below_chance(gates_path, key, gates[key])
        baseline = gates[key].baseline
        if baseline is not None and baseline not in spec.versions and not spec.retired(baseline):
            raise PlantedSetError(
                f'{gates_path}: ["{key[0]}"."{key[1]}"]: baseline = {baseline!r} is not a '
                f"prompt version of {spec.name} ({', '.join(spec.versions)}); name one of them"
            )
    config_path = files.config_path
    try:
        config = SetConfig.model_validate(files.read_config())
    except ValidationError as error:
        raise PlantedSetError(f"{config_path}: {error}") from None
    if config.kind != "planted":
        raise PlantedSetError(
            f'{config_path}: kind = "{config.kind}" is for a benchmark folder '
            f"(planted_sets/{spec.name}/benchmarks/<name>/, written by python -m judges import "
            'benchmark); a judge\'s own planted set is kind = "planted"'
        )
    if spec.team is not None and config.panel is not None:
        raise PlantedSetError(
            f"{config_path}: [panel] judges the set with another model, but {spec.name} is a "
            "judge function that calls its own model: remove [panel] (or give the panel's "
            "model a judge of its own)"
        )
    panel_items = config.panel.items if config.panel else ()
    strange = sorted(set(config.versions) - set(spec.versions))
    if strange:
        raise PlantedSetError(
            f"{config_path}: [versions] names {strange}, which are not prompt versions of "
            f"{spec.name} ({', '.join(spec.versions)})"
        )
    check_versions(config_path, set_runs(config), tuple(spec.versions))
    version_items = {i for run in config.versions.values() for i in run.items}
    unknown = sorted((set(config.noise_items) | set(panel_items) | version_items) - ids)
    if unknown:
        raise PlantedSetError(f"{config_path}: items {unknown} are not items of the set")
    _check_model_items(config_path, config, ids, {item.category for item in items})
    reading = _reading_list_items(folder, config, spec) if config.reading_list else []
    clash = sorted(ids & {item.id for item in reading})
    if clash:
        raise PlantedSetError(f"{files.items_path}: ids {clash} are reading-list ids")
    # A callable judge's retired versions keep their tables: the current one inherits them.
    retired = {version for _, version in gates if spec.retired(version)}
    inherited = _inherit_gates(gates, sorted({*retired, *spec.versions}, key=version_key))
    pins = load_pins(folder)
    edited_pins(spec, pins, folder)
    return PlantedSet(
        spec.name, folder, items, misses, gates, config, reading, inherited, pins,
        tuple(spec.versions), load_reply_fixtures(root, spec),
        files.read_probe_expectations(),
    )  # fmt: skip


def _check_model_items(path: Path, config: SetConfig, ids: set[str], sets: set[str]) -> None:
    """Each `model_items` entry names a listed model and items or sets of the set."""
    for version, run in config.versions.items():
        for model, wanted in run.model_items.items():
            where = f'{path}: [versions."{version}".model_items] "{model}"'
            if run.models and model not in run.models:
                raise PlantedSetError(f"{where} is not one of the version's models {run.models}")
            strange = sorted(set(wanted) - ids - sets)
            if strange:
                raise PlantedSetError(
                    f"{where} names {strange}, neither item ids nor sets "
                    f"({', '.join(sorted(sets))})"
                )


def below_chance(path: Path, key: tuple[str, str], gates: Gates) -> None:
    """Refuse a floor below chance: it would pass a judge that is no better than a coin.

    A kappa, alpha or Spearman floor at or below 0, and a detection floor at or below the
    control false-positive ceiling (a judge that flags everything at that rate would pass
    both).
    """
    problems: list[tuple[str, str]] = []
    for section in ("sme", "test_retest", "panel", "noise_floor"):
        for name, value in getattr(gates, section).items():
            agreement = name.split(".")[0] in ("min_kappa", "min_spearman", "min_alpha")
            if agreement and value <= 0:
                problems.append((name, f"{section}.{name} = {value} is at or below chance (0)"))
    ceiling = gates.max_control_false_positive
    for category, floor in gates.min_detection.items():
        if ceiling is not None and floor <= ceiling:
            problems.append((category, (
                f"min_detection.{category} = {floor} is at or below "
                f"max_control_false_positive = {ceiling}: a judge flagging everything at "
                "random passes both"
            )))  # fmt: skip
    if problems:
        name, what = problems[0]
        raise PlantedSetError(
            f'{path}:{table_line(path, key, name)}: ["{key[0]}"."{key[1]}"] {what}; a floor '
            "must sit above chance (the fitness test already requires better than chance): "
            "raise it or delete it"
            + (f" (and {len(problems) - 1} more like it)" if len(problems) > 1 else "")
        )


# Floors on how steady a judge is. A version accepted NOT FIT hands none of them on: a judge
# that gives one score to nearly everything is as steady as a judge can be, so its floors
# bound only a constant judge, and every better judge after it would fail them.
STABILITY_FLOORS = ("noise_floor", "test_retest", "label_stability", "panel")


def _inherit_gates(
    gates: dict[tuple[str, str], Gates], versions: Sequence[str]
) -> dict[tuple[str, str], str]:
    """Give a prompt version without a table of its own the table of the newest earlier version.

    A new prompt version is then gated at once: by the team's floors and by the regression
    gates against the accepted baseline, instead of passing ungated until a table is written.
    From a table accepted NOT FIT, its STABILITY_FLOORS are not inherited.
    Fills `gates` in place; returns what was inherited from where.
    """
    inherited: dict[tuple[str, str], str] = {}
    for model in sorted({model for model, _ in gates}):
        source: str | None = None
        for version in versions:
            if (model, version) in gates:
                source = version
            elif source is not None:
                table = gates[(model, source)]
                unsteady: dict[str, Any] = (
                    {key: {} for key in STABILITY_FLOORS} if table.accept_not_fit else {}
                )
                gates[(model, version)] = table.model_copy(
                    update={
                        "accept_not_fit": "",
                        "accept_regression": "",
                        "accept_undecided": "",
                        "pairwise_accepted": {},
                        **unsteady,
                    }
                )
                inherited[(model, version)] = source
    return inherited


def _reading_list_items(folder: Path, config: SetConfig, spec: JudgeSpec) -> list[PlantedItem]:
    """The reading list's candidates as items, each checked against the judge's inputs."""
    path = folder / str(config.reading_list)
    if not path.is_file():
        raise PlantedSetError(
            f"{folder / SET_FILE}: reading_list names {path.name}, which does not exist"
        )
    items = reading_list_items(load_reading_list(path), spec.name)
    for item in items:
        try:
            spec.parse_inputs(item.inputs)
        except (ValidationError, ValueError) as error:
            raise PlantedSetError(
                f"{path}: candidate {item.slug} ({item.id}) does not fit the inputs of "
                f"{spec.name}: {error}"
            ) from None
    return items


def load_planted_sets(root: Path, catalog: dict[str, JudgeSpec]) -> dict[str, PlantedSet]:
    """The planted set of every judge that has one."""
    return {
        name: load_planted_set(root, spec)
        for name, spec in catalog.items()
        if SetFolder(root, name).items_path.is_file()
    }


def category_counts(items: list[PlantedItem]) -> Counter[str]:
    return Counter(item.category for item in items)
