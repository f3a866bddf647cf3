"""judges.stats.judge_fitness on the committed sets, and floors below chance refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from judges.core.results import JudgementRow
from judges.core.spec import PROMPTS_ROOT, load_catalog
from judges.sets.planted import PlantedSetError, load_planted_sets
from judges.stats.judge_fitness import judge_fitness

ROOT = Path(__file__).resolve().parents[1]
MODEL = "local:smollm2-135m"


def _planted():
    return load_planted_sets(ROOT / "planted_sets", load_catalog(PROMPTS_ROOT))["product_identity"]


def _rows(policy: str, *, run: str = "main") -> list[JudgementRow]:
    """One row per planted item of product_identity, scored by a policy."""
    rows = []
    for i, item in enumerate(_planted().items):
        good = 3 if item.control else 0
        score = {"good": good, "constant": 3, "reversed": 3 - good, "noisy": (i * 7) % 4}[policy]
        # A good judge also marks down the other dimension a defect targets (completeness).
        targeted = policy == "good" and any(e.field == "completeness" for e in item.expect)
        completeness = 0 if targeted and not item.control else 2
        rows.append(
            JudgementRow(
                judge="product_identity",
                prompt_version="9.9",
                prompt_hash="h",
                model=MODEL,
                item_id=item.id,
                category=item.category,
                control=item.control,
                run=run,
                status="ok",
                verdict={
                    "factual_accuracy": score,
                    "completeness": completeness,
                    "causal_reasoning": 2,
                    "core_total": score + 4,
                    "product_identity_match": score >= 2,
                },
                expect=list(item.expect),
                met=(score >= 2) == item.control,
            )
        )
    return rows


def _fitness(rows: list[JudgementRow]):
    spec = load_catalog(PROMPTS_ROOT)["product_identity"]
    return judge_fitness(
        rows, _planted(), "9.9", dimensions=spec.config.dimensions, flag=spec.config.flag
    )


def test_a_good_judge_is_fit_on_every_deciding_test() -> None:
    fitness = _fitness(_rows("good"))
    assert fitness.fit, fitness.reasons()
    names = {t.name for t in fitness.tests}
    assert "planted detection" in names and "planted detection: cousin" in names
    assert "scores: factual_accuracy lower on defects" in names
    assert "scores: causal_reasoning lower on defects" not in names  # no defect targets it


@pytest.mark.parametrize("policy", ["constant", "reversed", "noisy"])
def test_constant_reversed_and_noisy_judges_are_not_fit(policy: str) -> None:
    fitness = _fitness(_rows(policy))
    assert fitness.verdict == "NOT FIT"
    assert any(t.name == "planted detection" for t in fitness.failing)


def test_retest_at_random_is_not_fit_and_a_constant_field_decides_nothing() -> None:
    main = _rows("good")
    retest = [r.model_copy(update={"run": "retest"}) for r in _rows("noisy")]
    fitness = _fitness(main + retest)
    failing = {t.name for t in fitness.failing}
    assert "test-retest: factual_accuracy" in failing
    # causal_reasoning is 2 everywhere in both runs: stable, but it says nothing.
    causal = next(t for t in fitness.tests if t.name == "test-retest: causal_reasoning")
    assert not causal.testable and "says nothing" in causal.detail
    # completeness varies in the main run and is constant in the retest: not repeatable.
    assert "test-retest: completeness" in failing


def _gates_file(tmp_path: Path, table: str) -> Path:
    planted = tmp_path / "planted_sets"
    shutil.copytree(ROOT / "planted_sets", planted)
    gates = planted / "product_identity" / "gates.toml"
    gates.write_text(f'# a comment\n\n["{MODEL}"."0.3.1"]\nmax_error_rate = 0.0\n{table}\n')
    return planted


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ("sme = { min_kappa = -0.45 }", "sme.min_kappa = -0.45 is below chance"),
        ('test_retest = { "min_kappa.core_total" = -0.1 }', "min_kappa.core_total = -0.1"),
        (
            "max_control_false_positive = 0.6\nmin_detection = { cousin = 0.25 }",
            "min_detection.cousin = 0.25 is at or below max_control_false_positive = 0.6",
        ),
    ],
)
def test_a_floor_below_chance_is_a_usage_error_naming_file_and_line(
    tmp_path: Path, table: str, says: str
) -> None:
    planted = _gates_file(tmp_path, table)
    with pytest.raises(PlantedSetError) as error:
        load_planted_sets(planted, load_catalog(PROMPTS_ROOT))
    where = f"{planted / 'product_identity' / 'gates.toml'}:"
    assert str(error.value).startswith(where) and says in str(error.value)
    line = int(str(error.value)[len(where) :].split(":")[0])
    assert line >= 4  # the floor's own line, not the file's top


def test_accept_not_fit_is_never_inherited(tmp_path: Path) -> None:
    planted = tmp_path / "planted_sets"
    shutil.copytree(ROOT / "planted_sets", planted)
    gates = planted / "product_identity" / "gates.toml"
    text = gates.read_text()
    gates.write_text(text[: text.index(f'["{MODEL}"."0.3.1"]')])  # 0.3.1 loses its table
    loaded = load_planted_sets(planted, load_catalog(PROMPTS_ROOT))["product_identity"]
    assert loaded.inherited_gates[(MODEL, "0.3.1")] == "0.3"
    assert loaded.gates[(MODEL, "0.3")].accept_not_fit  # the source accepts its own NOT FIT
    assert loaded.gates[(MODEL, "0.3.1")].accept_not_fit == ""  # the new version does not
    assert (
        loaded.gates[(MODEL, "0.3.1")].min_detection == loaded.gates[(MODEL, "0.3")].min_detection
    )
