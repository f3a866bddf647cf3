"""judges.stats.fitness.judge on the committed sets, and floors below chance refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from judges.core.results import JudgementRow
from judges.core.spec import PROMPTS_ROOT, load_catalog
from judges.reports.sections.fitness import cannot_show, fitness_reasons, weak_spots
from judges.sets.planted import Gates, PlantedSet, PlantedSetError, load_planted_sets
from judges.stats.fitness.chance import Fitness
from judges.stats.fitness.judge import judge_fitness
from judges.verdicts.fitness import accepted_not_fit
from judges.verdicts.inputs import set_facts
from tests._pairwise_rows import pairwise_row

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
        rows, set_facts(_planted(), "9.9"), dimensions=spec.config.dimensions, flag=spec.config.flag
    )


def test_a_good_judge_is_fit_on_every_deciding_test() -> None:
    fitness = _fitness(_rows("good"))
    assert fitness.fit, fitness_reasons(fitness)
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
    # completeness varies in the main run (7 of 61 items) and is constant in the retest: at
    # chance, but a judge right 90% of the time passes that test only 88% of the time on
    # these items, so it is a diagnostic (shown as weak), not a deciding test.
    completeness = next(t for t in fitness.tests if t.name == "test-retest: completeness")
    assert completeness.diagnostic and completeness.power is not None
    assert completeness.power < 0.95 and completeness.verdict == "diagnostic: weak"
    weak = weak_spots(fitness)
    assert any(line.startswith("weak on test-retest: completeness") for line in weak)


def _gates_file(tmp_path: Path, table: str) -> Path:
    planted = tmp_path / "planted_sets"
    shutil.copytree(ROOT / "planted_sets", planted)
    gates = planted / "product_identity" / "gates.toml"
    gates.write_text(f'# a comment\n\n["{MODEL}"."0.3.1"]\nmax_error_rate = 0.0\n{table}\n')
    return planted


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ("sme = { min_kappa = -0.45 }", "sme.min_kappa = -0.45 is at or below chance"),
        ('noise_floor = { "min_alpha.core_total" = 0.0 }', "min_alpha.core_total = 0.0 is at"),
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


# -- pairwise judges: one chance test per set -------------------------------------------------


def _pairwise_rows(policy_by_set: dict[str, str], n: int = 12) -> list[JudgementRow]:
    """n items per set, the better output alternating between output_1 and output_2;
    `policy`: "good" (the better one in both orders), "first" (the output shown first),
    "reversed" (the worse one in both orders)."""
    rows = []
    for category, policy in policy_by_set.items():
        for i in range(n):
            gold, other = ("1", "2") if i % 2 else ("2", "1")
            winners = {
                "good": (gold, gold),
                "first": ("1", "2"),  # "a" in both orders: output_1, then output_2
                "reversed": (other, other),
            }[policy]
            rows.append(pairwise_row("9.9", f"{category}-{i:02d}", category, gold, winners))
    return rows


def _pairwise_fitness(rows: list[JudgementRow]) -> Fitness:
    planted = PlantedSet("pairwise", Path("planted_sets/pairwise"), [])
    return judge_fitness(rows, set_facts(planted, "9.9"), dimensions=())


def test_a_pairwise_judge_has_one_chance_test_per_set() -> None:
    good = _pairwise_fitness(_pairwise_rows({"natural": "good", "adversarial": "good"}))
    assert good.fit
    names = [t.name for t in good.tests]
    assert names == ["pairwise chance: adversarial", "pairwise chance: natural"]
    reversed_ = _pairwise_fitness(_pairwise_rows({"natural": "reversed", "adversarial": "good"}))
    assert [t.name for t in reversed_.failing] == ["pairwise chance: natural"]
    assert reversed_.failing[0].worse_than_chance


def test_a_judge_naming_one_position_is_not_fit_even_beside_a_fit_set() -> None:
    # It decides no item alike in both orders: the judge at chance, not a set too small to
    # test, so it decides, and the judge is NOT FIT though its other set is fit.
    fitness = _pairwise_fitness(_pairwise_rows({"natural": "good", "adversarial": "first"}))
    first = next(t for t in fitness.tests if t.name == "pairwise chance: adversarial")
    assert first.testable and not first.fit and first.n == 0
    assert "12 of 12 items not decided alike in both orders" in first.detail
    assert not fitness.fit and fitness.failing == [first]
    # A set too small for even a perfect judge (0.5 ** 4 > 0.05) decides nothing.
    small = _pairwise_fitness(_pairwise_rows({"tiny": "good"}, n=4))
    assert not small.tests[0].testable and small.undecided and cannot_show(small)


def test_pairwise_accepted_keeps_a_judge_only_when_it_names_every_set_at_chance() -> None:
    fitness = _pairwise_fitness(_pairwise_rows({"natural": "first", "adversarial": "reversed"}))
    one = Gates(pairwise_accepted={"natural": "position"})
    both = Gates(pairwise_accepted={"natural": "position", "adversarial": "reversed"})
    assert accepted_not_fit(fitness, one) == ""
    assert accepted_not_fit(fitness, both) == (
        "pairwise chance: adversarial: reversed; pairwise chance: natural: position"
    )
    assert accepted_not_fit(fitness, Gates(accept_not_fit="kept")) == "kept"
    assert accepted_not_fit(fitness, None) == ""
    fit = _pairwise_fitness(_pairwise_rows({"natural": "good"}))
    assert accepted_not_fit(fit, Gates(pairwise_accepted={"natural": "stale"})) == ""
