"""Checks before any call: prompts' placeholders, model tables, the cassettes a replay
will read, and the accepted and recorded prompt versions (judges.sets.pin_checks); each
problem a `SpecError` or `PlantedSetError` naming its file and line."""

from __future__ import annotations

import contextlib
import shlex
from pathlib import Path

from judges.calls.backends import BackendError, ModelRef
from judges.core.spec import JudgeSpec, SpecError
from judges.pytest_plugin.session.catalogue import Catalogue
from judges.pytest_plugin.session.settings import RecordMode, Settings
from judges.sets import preflight
from judges.sets.pin_checks import changed_cassettes, edited_recorded_prompts, pins_against_gates
from judges.sets.planted import PlantedSet


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
