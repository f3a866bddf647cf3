"""A good judge re-recorded: simulated runs through the real verdict code path.

The judge: each judgement right with probability 0.9 (every field its item's right value),
else wrong (every scored field another value of its scale, each alike, the flag flipped),
each draw independent, as an LLM sampled at temperature > 0. An item's right values meet its
expectations; fields an item does not constrain take a value fixed per item (controls high,
as harmless answers keep their marks), so items differ as real ones do.

A pairwise judgement is two calls, one per order: each order's winner is drawn on its own
(right with probability 0.9), so a good pairwise judge names the better output in both
orders 81% of the time and is inconsistent 18% of the time, as two sampled calls are.

A recording is a main run, a retest run (of set.toml's `retest_draws` draws) and a noise
run, each where set.toml names one. The verdict
of a re-record is the report's, from the functions the report and the suite call: fitness
(`judge_fitness`), the floors `judges baseline --accept` suggests from the accepted run
(`detection_floors`, `reliability_floors`, merged as `write_baseline` merges them) and the
regression gates against the accepted run's main run (detection, control false positives,
scores, SME). Per-item expectations are left out: `judges baseline` accepts every recorded
miss per version, and they are the subject of the acceptance, not of the gates.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judges.cli.baseline import _drop_below_chance, detection_floors, merge_floors
from judges.cli.baseline import reliability_floors as suggest_reliability_floors
from judges.core.results import Expectation, JudgementRow
from judges.core.spec import PROMPTS_ROOT, load_catalog
from judges.reports.sections.fitness import fitness_reasons
from judges.sets.items import PlantedItem
from judges.sets.planted import Gates, SetConfig, load_planted_sets
from judges.sets.sme import SmeLabel, load_sme_labels
from judges.stats.estimates.floors import evaluate, not_evaluated
from judges.stats.fitness.judge import judge_fitness
from judges.stats.regression.family import version_regressions
from judges.stats.regression.stability import Draws
from judges.stats.reliability.calibration import sme_calibration, sme_dimension
from judges.stats.reliability.gates import evaluate_reliability
from judges.stats.reliability.noise import noise_floor, test_retest
from judges.verdicts.inputs import set_facts
from judges.verdicts.regressions import agreement_gate, sensitivity
from judges.verdicts.vocabulary import NOT_FIT

ROOT = Path(__file__).resolve().parents[1]
MODEL = "sim:good-judge"
GOOD = 0.9


@dataclass
class Shape:
    """A planted set and how its judge's fields are scored."""

    name: str
    planted: Any  # PlantedSet
    dimensions: tuple[str, ...]
    flag: str | None
    scales: dict[str, tuple[int, int]]  # the scored fields and their ranges
    derive: Callable[[dict[str, Any], PlantedItem], dict[str, Any]]  # derived fields
    sme_labels: list[SmeLabel] | None = None
    truth: dict[str, dict[str, Any]] = field(default_factory=dict)
    per_field: bool = False  # each field its own call, drawn on its own (pairwise orders)
    label: Callable[[int], Any] = int  # a scale's value as the verdict holds it
    retest: bool = True  # a retest run is recorded (set.toml's retest, or retest_versions)
    retest_draws: int = 1  # its draws, as set.toml gives a new version (`retest_draws`)
    reply_scales: dict[str, tuple[float, float]] = field(default_factory=dict)  # as fitness reads

    @property
    def config(self) -> SetConfig:
        return self.planted.config


def _holds(expect: list[Expectation], verdict: dict[str, Any], fields: set[str]) -> bool:
    return all(e.holds(verdict) for e in expect if e.field in fields)


def _right_values(shape: Shape, item: PlantedItem, rng: random.Random) -> dict[str, Any]:
    """Values that meet the item's expectations; unconstrained fields fixed per item."""
    sme = {label.item_id: label for label in shape.sme_labels or []}
    for _ in range(200):
        values: dict[str, Any] = {}
        for dim, (low, high) in shape.scales.items():
            options = [
                v for v in range(low, high + 1) if _holds(item.expect, {dim: shape.label(v)}, {dim})
            ]
            if not any(e.field == dim for e in item.expect):
                options = [high - 1, high] if item.control else list(range(low, high + 1))
            values[dim] = rng.choice(options)
        label = sme.get(item.id)
        if label is not None:  # the experts' scores are the right ones
            values |= {d: getattr(label, d) for d in shape.scales if hasattr(label, d)}
        verdict = shape.derive(values, item)
        if all(e.holds(verdict) for e in item.expect):
            return values
    raise AssertionError(f"no right verdict meets {item.id}'s expectations")


def load_shape(name: str) -> Shape:
    catalog = load_catalog(PROMPTS_ROOT)
    planted = load_planted_sets(ROOT / "planted_sets", catalog)[name]
    spec = catalog[name]
    scales, derive = SCORING[name]
    labels = None
    if planted.config.sme_labels:
        labels = load_sme_labels(ROOT / "planted_sets" / "sme" / planted.config.sme_labels)
    shape = Shape(
        name, planted, tuple(spec.config.dimensions), spec.config.flag, scales, derive, labels
    )
    if name == "pairwise":
        shape.per_field, shape.label = True, str
    shape.retest = bool(planted.run_versions("retest"))  # a retest run follows the judge
    shape.retest_draws = planted.config.retest_draws
    shape.reply_scales = spec.score_scales(spec.versions[-1])
    rng = random.Random(f"truth-{name}")
    shape.truth = {item.id: _right_values(shape, item, rng) for item in planted.items}
    return shape


def scaffold_shape(root: Path) -> Shape:
    """The `judges init` scaffold's set, as init writes it (root: a scaffolded project)."""
    from judges.core.spec import load_catalog as load

    catalog = load(root / "judge_prompts")
    (name,) = catalog
    planted = load_planted_sets(root / "planted_sets", catalog)[name]
    spec = catalog[name]
    shape = Shape(
        "init scaffold", planted, tuple(spec.config.dimensions), None,
        {"accuracy": (0, 3), "helpfulness": (0, 3)}, lambda values, item: dict(values),
    )  # fmt: skip
    shape.reply_scales = spec.score_scales(spec.versions[-1])
    rng = random.Random("truth-scaffold")
    shape.truth = {item.id: _right_values(shape, item, rng) for item in planted.items}
    return shape


def _product_identity(values: dict[str, Any], item: PlantedItem) -> dict[str, Any]:
    core = values["factual_accuracy"] + values["completeness"] + values["causal_reasoning"]
    return {**values, "core_total": core, "product_identity_match": values["match"] == 1}


def _geval(values: dict[str, Any], item: PlantedItem) -> dict[str, Any]:
    facets = ("faithfulness", "coverage", "coherence", "fluency")
    return {**values, "overall": sum(values[f] for f in facets) / 4}


def _relevance(values: dict[str, Any], item: PlantedItem) -> dict[str, Any]:
    return {**values, "score": round(values["level"] / 3, 4)}


def _pairwise(values: dict[str, Any], item: PlantedItem) -> dict[str, Any]:
    original, swapped = str(values["winner_original"]), str(values["winner_swapped"])
    return {
        "winner_original": original,
        "winner_swapped": swapped,
        "consistent": original == swapped,
    }


SCORING: dict[str, tuple[dict[str, tuple[int, int]], Callable[..., dict[str, Any]]]] = {
    "product_identity": (
        {
            "factual_accuracy": (0, 3),
            "completeness": (0, 3),
            "causal_reasoning": (0, 3),
            "match": (0, 1),
        },
        _product_identity,
    ),
    "geval": ({f: (1, 5) for f in ("faithfulness", "coverage", "coherence", "fluency")}, _geval),
    "relevance": ({"level": (0, 3)}, _relevance),
    "pairwise": ({"winner_original": (1, 2), "winner_swapped": (1, 2)}, _pairwise),
}


@dataclass(frozen=True)
class Errors:
    """How often a judgement is wrong, and how: every scored field another value, or one
    facet alone (a field drawn at random) as a judge that slips on one criterion."""

    good: float = GOOD  # right with this probability (a worse judge: 0.75)
    one_facet: bool = False


def draw(
    shape: Shape, item: PlantedItem, rng: random.Random, errors: Errors = Errors()
) -> dict[str, Any]:
    """One judgement: right with probability errors.good, else every scored field
    another value (per field where each is its own call; one field for `one_facet`)."""
    values = dict(shape.truth[item.id])
    wrong = rng.random() >= errors.good
    dims = list(shape.scales)
    facet = rng.choice(dims) if errors.one_facet and dims else None
    for dim, (low, high) in shape.scales.items():
        if shape.per_field:
            wrong = rng.random() >= errors.good
        if wrong and (facet is None or dim == facet):
            values[dim] = rng.choice([v for v in range(low, high + 1) if v != values[dim]])
    return shape.derive(values, item)


def record(
    shape: Shape, version: str, rng: random.Random, errors: Errors = Errors()
) -> list[JudgementRow]:
    """One recording: main, retest and noise runs of every item they name."""
    by_id = {item.id: item for item in shape.planted.items}
    runs: list[tuple[str, PlantedItem, int]] = [("main", item, 0) for item in shape.planted.items]
    if shape.retest:
        runs += [
            ("retest", item, r) for r in range(shape.retest_draws) for item in shape.planted.items
        ]
    runs += [
        ("noise", by_id[i], r)
        for i in shape.config.noise_items
        for r in range(shape.config.noise_repeats)
    ]
    rows = []
    for run, item, repeat in runs:
        verdict = draw(shape, item, rng, errors)
        rows.append(
            JudgementRow(
                judge=shape.planted.judge, prompt_version=version, prompt_hash="h", model=MODEL,
                item_id=item.id, category=item.category, control=item.control, run=run,
                repeat=repeat, status="ok", verdict=verdict, expect=list(item.expect),
                met=all(e.holds(verdict) for e in item.expect),
            )
        )  # fmt: skip
    return rows


def _runs(rows: list[JudgementRow], run: str) -> list[JudgementRow]:
    return [row for row in rows if row.run == run]


def _sme_due(shape: Shape) -> bool:
    return bool(shape.sme_labels)


def reliability(shape: Shape, rows: list[JudgementRow]) -> dict[str, Any]:
    """The report's reliability sections of one recording."""
    main = _runs(rows, "main")
    n_items = len(shape.planted.items)
    found: dict[str, Any] = {}
    if shape.config.noise_items:
        found["noise_floor"] = noise_floor(rows, shape.dimensions, flag=shape.flag, n_items=n_items)
    if shape.retest:
        found["test_retest"] = test_retest(main, rows, shape.dimensions, flag=shape.flag)
    if _sme_due(shape):
        dimension = sme_dimension(shape.dimensions)
        found["sme"] = sme_calibration(main, shape.sme_labels, dimension, flag=shape.flag)
    return found


def accept(shape: Shape, rows: list[JudgementRow]) -> Gates:
    """The table `judges baseline --accept` writes for this recording (no earlier floors)."""
    suggested = detection_floors(rows) | suggest_reliability_floors(reliability(shape, rows))
    table, _ = merge_floors({}, suggested, reset=False)
    _drop_below_chance(table)
    return Gates.model_validate({**table, "baseline": "base"})


@dataclass(frozen=True)
class Verdict:
    word: str  # PASS, FAIL or NOT FIT
    why: tuple[str, ...]
    # The detection gate cannot see gates.toml's min_detectable_drop: the first screen and
    # a PASS say so (judges.verdicts.regressions.sensitivity).
    blind: bool = False
    # The smallest drop each paired gate sees with 80% power, as the first screen states it
    # ("detection", "control_false_positive"; nan: none up to the whole rate).
    sees: dict[str, float] = field(default_factory=dict)


def verdict(
    shape: Shape, baseline: list[JudgementRow], rows: list[JudgementRow], gates: Gates
) -> Verdict:
    """The report's verdict of a re-record against the accepted baseline and its table."""
    facts = set_facts(shape.planted, "rerecord", shape.sme_labels)
    fitness = judge_fitness(
        rows, facts, dimensions=shape.dimensions, flag=shape.flag, scales=shape.reply_scales
    )
    if not fitness.fit:
        return Verdict(NOT_FIT, tuple(fitness_reasons(fitness)))
    main, base_main = _runs(rows, "main"), _runs(baseline, "main")
    found = reliability(shape, rows)
    results: list[Any] = list(evaluate(main, gates))
    for section in ("noise_floor", "test_retest", "sme"):
        if section in found and getattr(gates, section):
            results += evaluate_reliability(section, found[section], getattr(gates, section))
    label = "prompt base main run"
    base_noise = noise_floor(baseline, shape.dimensions, n_items=len(shape.planted.items))
    noise_sd = {
        d: n.pooled_sd for d, n in base_noise.dimensions.items() if not math.isnan(n.pooled_sd)
    }
    sme = (shape.sme_labels, sme_dimension(shape.dimensions)) if _sme_due(shape) else None
    retest = _runs(baseline, "retest")
    agreement = agreement_gate(
        Draws(base_main, retest), Draws(main, _runs(rows, "retest")), label,
        (shape.dimensions, shape.flag), gates.alpha,
    )  # fmt: skip
    family = version_regressions(
        base_main, main, label, shape.dimensions, noise_sd, gates.alpha, sme, retest=retest,
        also=() if agreement is None else (agreement,),
    )  # fmt: skip
    results += family
    powers = sensitivity(base_main, retest, main, family, gates)
    blind = any(gate.blind for gate in powers)
    sees = {gate.gate: gate.drop for gate in powers if not gate.nothing_to_drop}
    failed = [r for r in results if r.passed is False or not_evaluated(r)]
    if failed:
        return Verdict("FAIL", tuple(r.describe() for r in failed), blind, sees)
    return Verdict("PASS", (), blind, sees)


def dumps(verdicts: list[Verdict]) -> str:
    return json.dumps([v.word for v in verdicts])
