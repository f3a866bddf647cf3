"""What there is to judge, and the checks before any call on it.

The judges' catalogue, their planted sets and bias probes, the models each version is judged
on, and how each kind of run over a set judges (`RunPlan`); then the preflight: prompts'
placeholders, model tables, the cassettes a replay will read, and the accepted and recorded
prompt versions (judges.sets.pin_checks), each problem a `SpecError` or `PlantedSetError`
naming its file and line.
"""

from __future__ import annotations

import contextlib
import shlex
from functools import cached_property
from pathlib import Path

from judges.calls.backends import BackendError, ModelRef, is_imported
from judges.core.naming import Case
from judges.core.runner import Subject
from judges.core.spec import PROMPTS_ROOT, JudgeSpec, SpecError, load_catalog
from judges.pytest_plugin.session.settings import RecordMode, RunPlan, Settings
from judges.sets import preflight
from judges.sets.enrolment import Run, run_versions
from judges.sets.items import PlantedItem
from judges.sets.pin_checks import changed_cassettes, edited_recorded_prompts, pins_against_gates
from judges.sets.pins import Pin
from judges.sets.planted import PlantedSet, load_planted_sets
from judges.sets.probes import ProbeSet, load_probe_set

# The retest run's seeds sit far from the noise floor's repeats: independent draws.
RETEST_DRAW = 100

# The runs that redraw what a version's main run judged, and the set-level cases that read
# the main run; a released model (`imported:`) has only these, as it is never called.
MAIN_RUN_ITEMS = ("main", "retest")
READS_MAIN = ("main", "sme", "ranking", "pairwise", "fitness")


class Catalogue:
    """The run's judges, planted sets and probes, loaded once, and the plans over them."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @property
    def catalog(self) -> dict[str, JudgeSpec]:
        return load_catalog(self.settings.prompts or PROMPTS_ROOT)

    @cached_property
    def planted_sets(self) -> dict[str, PlantedSet]:
        return load_planted_sets(self.settings.planted_sets, self.catalog)

    @cached_property
    def probe_sets(self) -> dict[str, ProbeSet]:
        """The bias probes of every planted set that has a probes.toml."""
        loaded = {name: load_probe_set(planted) for name, planted in self.planted_sets.items()}
        return {name: probes for name, probes in loaded.items() if probes is not None}

    def probe_versions(self, probes: ProbeSet) -> tuple[str, ...]:
        """Every prompt version of the judge, unless probes.toml's `versions` restricts."""
        versions = tuple(self.catalog[probes.judge].versions)
        return run_versions(Run("probes", "", probes.versions), versions)

    def models_for(self, spec: JudgeSpec, version: str | None = None) -> list[ModelRef]:
        """The selected models; else those set.toml names for the version; else the baseline.
        A callable judge's is always its baseline: its code calls its own model, so
        `--judge-model` would file its replies under another model's name."""
        if spec.team is not None:
            return [ModelRef.parse(spec.config.baseline_model)]
        if self.settings.models:
            return list(self.settings.models)
        planted = self.planted_sets.get(spec.name)
        named = planted.config.versions.get(version) if planted and version else None
        if named is not None and named.models:
            return [ModelRef.parse(model) for model in named.models]
        return [ModelRef.parse(spec.config.baseline_model)]

    def main_items(
        self, planted: PlantedSet, version: str, model: str | None = None
    ) -> tuple[PlantedItem, ...]:
        """The items a version's main run (of `model`) judges: all, or what set.toml names."""
        return planted.main_items(version, model)

    @staticmethod
    def has_run(model: ModelRef | str, run: str) -> bool:
        """Whether `model` has this run: a released model's judgements are its main run
        alone (it is never called, so it has no retest, noise or panel run)."""
        return run in READS_MAIN or not is_imported(model)

    def run_models(self, spec: JudgeSpec, version: str, run: str) -> list[ModelRef]:
        """The models a run of a version judges on (`has_run`)."""
        return [model for model in self.models_for(spec, version) if self.has_run(model, run)]

    def run_items(
        self, planted: PlantedSet, run: str, version: str, model: str
    ) -> tuple[PlantedItem, ...]:
        """The items one run of a version judges on `model`. A retest redraws the items the
        main run judged (all, or set.toml's list for the version); the other runs have their
        own (the noise items, the panel's, the reading list)."""
        if run in MAIN_RUN_ITEMS:
            return planted.main_items(version, model)
        return self.run_plan(planted, run).items

    def run_plan(self, planted: PlantedSet, run: str) -> RunPlan:
        """How a run of a planted set judges: repeats, seeds, sampling, versions, items."""
        spec = self.catalog[planted.judge]
        config = planted.config
        versions = planted.run_versions(run)  # every version, unless set.toml restricts
        if run == "main":
            return RunPlan(run, tuple(spec.versions), tuple(planted.items))
        if run == "noise":
            repeats = self.settings.noise_repeats or config.noise_repeats
            items = tuple(planted.item(i) for i in config.noise_items)
            return RunPlan(run, versions, items, repeats=repeats)
        if run == "retest":
            draws = {version: config.retest_draws_for(version) for version in versions}
            return RunPlan(
                run, versions, tuple(planted.items), draw_offset=RETEST_DRAW, version_repeats=draws
            )
        if run == "reading_list":
            return RunPlan(run, versions, tuple(planted.reading_list))
        if run == "panel" and config.panel is not None:
            sampling = spec.config.sampling.model_copy(
                update={"temperature": config.panel.temperature}
            )
            model = ModelRef.parse(config.panel.model) if config.panel.model else None
            items = tuple(planted.item(i) for i in config.panel.items) or tuple(planted.items)
            return RunPlan(
                run, versions, items, sampling=sampling, model=model, label=config.panel.label
            )
        return RunPlan(run, (), ())

    def subject(self, case: Case) -> Subject:
        return self.planted_sets[case.judge].item(case.item_id).subject()

    def pins(self, case: Case) -> dict[tuple[str, str], Pin]:
        """The accepted baselines' pinned prompt files of the case's judge."""
        planted = self.planted_sets.get(case.judge)
        return planted.pins if planted is not None else {}


def run_preflight(catalogue: Catalogue, settings: Settings) -> None:
    """Check prompts, model tables and cassettes; raise SpecError naming file and line."""
    for planted in catalogue.planted_sets.values():
        spec = catalogue.catalog[planted.judge]
        if spec.team is None:  # a callable judge has no prompt file to fill
            fields = spec.parse_inputs(planted.items[0].inputs).prompt_fields()
            preflight.check_prompt_placeholders(spec, fields)
        known = _known_models(spec, planted, settings)
        for path, tables in (
            (planted.folder.expectations_path, planted.accepted_misses),
            (planted.folder.gates_path, planted.gates),
        ):
            preflight.check_table_keys(path, tables, spec, known)
        pins_against_gates(planted)
        # The pins describe the project's own cassettes/ (accepted-cassettes.sha256 is
        # relative to it): a recording into another --cassette-dir replaces nothing accepted.
        own = settings.cassettes == (settings.rootdir / "cassettes").absolute()
        if own and not (settings.rerecord_baseline and settings.live):  # replaced on purpose
            reports = settings.reports
            default = reports == (settings.rootdir / "reports").absolute()
            options = "" if default else f" --reports {shlex.quote(str(reports))}"
            changed_cassettes(planted, settings.cassettes, options)
        edited_recorded_prompts(spec, settings.cassettes)
        if settings.record is not RecordMode.ALL:
            for path, model in _cassettes_of(spec, planted, catalogue, settings):
                problem = preflight.cassette_problem(path, model)
                if problem:
                    raise SpecError(problem)


def _known_models(spec: JudgeSpec, planted: PlantedSet, settings: Settings) -> set[str]:
    """Baseline, selected and panel models, and every model with recordings of this judge."""
    known = {spec.config.baseline_model, *(str(m) for m in settings.models)}
    known |= {m for named in planted.config.versions.values() for m in named.models}
    if planted.config.panel is not None and planted.config.panel.model:
        known.add(planted.config.panel.model)
    recorded = {p.name for p in (settings.cassettes / spec.name).glob("*/*")}
    for model, _ in [*planted.accepted_misses, *planted.gates]:
        with contextlib.suppress(BackendError):
            if ModelRef.parse(model).slug in recorded:
                known.add(model)
    return known


def _cassettes_of(
    spec: JudgeSpec, planted: PlantedSet, catalogue: Catalogue, settings: Settings
) -> list[tuple[Path, str]]:
    """The cassettes this run may replay (the selected models' and the panel model's),
    each with the model name its requests must carry."""
    root = settings.cassettes / spec.name
    models = {m.slug: m.model for v in spec.versions for m in catalogue.models_for(spec, v)}
    if planted.config.panel is not None and planted.config.panel.model:
        panel = ModelRef.parse(planted.config.panel.model)
        models[panel.slug] = panel.model
    return [
        (p, models[p.relative_to(root).parts[1]])
        for p in sorted(root.glob("*/*/**/*.yaml"))
        if p.relative_to(root).parts[1] in models
    ]
