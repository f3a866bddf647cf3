"""Bias probes: the generators, the probe files, the statistics (against scipy) and gates
that fail on adversarial judges."""

from __future__ import annotations

import itertools
import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st

from judges.core.results import Expectation, JudgementRow
from judges.core.spec import load_catalog
from judges.sets import probe_kinds, probes
from judges.sets.items import PlantedSetError
from judges.sets.perturb import sentences
from judges.sets.planted import load_planted_set
from judges.stats.estimates.floors import RateCeiling
from judges.stats.estimates.intervals import wilson
from judges.stats.reliability import probes as probe_stats
from judges.verdicts import probe_messages

ROOT = Path(__file__).resolve().parents[1]
JUDGES = ["product_identity", "geval", "relevance"]

words = st.sampled_from(["the", "coupon", "is", "paid", "barrier", "note", "rises", "a"])
sentence = st.lists(words, min_size=3, max_size=8).map(lambda w: " ".join(w).capitalize() + ".")
texts = st.lists(sentence, min_size=1, max_size=5).map(" ".join)
seeds = st.integers(0, 10_000)


# -- the transformations --------------------------------------------------------------


@given(texts, seeds)
def test_padding_keeps_the_text_and_only_adds(text, seed):
    inputs = {"answer": text, "question": "What does she get?"}
    out = probe_kinds.padding(inputs, "answer", seed, "question")
    assert out.inputs["answer"].startswith(text + "\n\n")
    assert len(out.inputs["answer"]) > len(text)
    assert out.inputs["question"] == inputs["question"]
    assert probe_kinds.padding(inputs, "answer", seed, "question") == out  # deterministic


@given(texts, seeds)
def test_injection_keeps_every_sentence_in_order_and_adds_one_note(text, seed):
    out = probe_kinds.injection({"summary": text}, "summary", seed, None).inputs["summary"]
    notes = [n for n in probe_kinds.INJECTIONS if n in out]
    assert len(notes) == 1
    assert out.replace(notes[0], "").split() == text.split()


@given(texts, seeds)
def test_authority_appends_one_claim(text, seed):
    out = probe_kinds.authority({"answer": text}, "answer", seed, None).inputs["answer"]
    assert any(out == f"{text} {claim}" for claim in probe_kinds.AUTHORITIES)


@pytest.mark.parametrize("seed", range(8))
def test_dummy_replaces_the_text_by_each_variant_in_turn(seed):
    inputs = {"answer": "A long true answer.", "question": "What does she get? Say it."}
    out = probe_kinds.dummy(inputs, "answer", seed, "question").inputs["answer"]
    expected = ["Yes.", "Sure, I can help with that.", "What does she get?", "N/A"][seed % 4]
    assert out == expected


@given(st.lists(st.integers(), min_size=2, max_size=6, unique=True), seeds)
def test_order_is_a_permutation_and_never_the_same_order(values, seed):
    out = probe_kinds.order({"criteria": values}, "criteria", seed, None).inputs["criteria"]
    assert sorted(out) == sorted(values) and out != values


def test_a_probe_on_a_missing_or_short_field_says_which():
    with pytest.raises(PlantedSetError, match="'answer'"):
        probe_kinds.padding({"answer": ""}, "answer", 1, None)
    with pytest.raises(PlantedSetError, match="two or more"):
        probe_kinds.order({"criteria": [1]}, "criteria", 1, None)


def test_sentences_helper_is_the_perturbation_one():
    assert sentences("One. Two.") == ["One.", "Two."]


# -- the probe files ----------------------------------------------------------------------


@pytest.mark.parametrize("judge", JUDGES)
def test_probe_items_match_their_recipe(judge):
    planted = load_planted_set(ROOT / "planted_sets", load_catalog()[judge])
    probe_set = probes.load_probe_set(planted)
    assert probe_set is not None
    recipe = probes.load_recipe(planted.path / "probes.toml")
    assert recipe is not None
    assert list(probe_set.items) == probes.generate(planted, recipe, planted.path)
    for probe in probe_set.probes():
        assert sum(i.probe == probe for i in probe_set.items) >= 8, probe


def test_probes_cover_every_judge_as_the_issue_asks():
    covered = {}
    for judge in JUDGES:
        planted = load_planted_set(ROOT / "planted_sets", load_catalog()[judge])
        covered[judge] = set(probes.load_probe_set(planted).probes())  # type: ignore[union-attr]
    assert covered["relevance"] >= {"order", "fact_order", "padding", "injection", "authority"}
    for judge in ("product_identity", "geval"):
        assert covered[judge] >= {"padding", "dummy", "injection", "authority"}


@pytest.fixture
def set_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "product_identity"
    shutil.copytree(ROOT / "planted_sets" / "product_identity", folder)
    return folder


def _load(folder: Path):
    return probes.load_probe_set(load_planted_set(folder.parent, load_catalog()[folder.name]))


def test_a_drifted_probe_file_is_an_error_naming_both_files_and_the_fix(set_copy):
    path = set_copy / "probes.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["inputs"]["answer"] += " Edited by hand."
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(PlantedSetError, match=r"does not match .*probes\.toml.*judges derive"):
        _load(set_copy)


def test_a_recipe_naming_an_unknown_item_says_so(set_copy):
    recipe = set_copy / "probes.toml"
    recipe.write_text(recipe.read_text().replace('"PE-42"]', '"PE-99"]', 1))
    with pytest.raises(PlantedSetError, match="PE-99, which is not an item"):
        _load(set_copy)


def test_accepted_failures_must_name_probe_items(set_copy):
    accepted = set_copy / "probe_expectations.toml"
    accepted.write_text('["local:smollm2-135m"."0.3.1".padding]\nPE-02 = "not probed"\n')
    with pytest.raises(PlantedSetError, match=r"probe_expectations.toml.*PE-02"):
        _load(set_copy)
    accepted.write_text('["local:smollm2-135m"."0.3.1".padding]\nPE-01 = "length wins"\n')
    loaded = _load(set_copy)
    assert loaded.accepted_failure("local:smollm2-135m", "0.3.1", "padding", "PE-01")


# -- statistics, against scipy ---------------------------------------------------------------


@given(st.floats(0.0, 0.49), st.integers(0, 40))
def test_majority_stability_matches_scipy_binomial_tail(q, half):
    n = 2 * half + 1
    expected = scipy.stats.binom.sf(n // 2, n, 1 - q)
    assert probe_stats.majority_stability(q, n) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("q", [0.0, 0.05, 0.136, 0.2, 0.3, 0.4, 0.45])
def test_majority_repeats_is_the_smallest_stable_odd_number(q):
    n = probe_stats.majority_repeats(q)
    assert n is not None and n % 2 == 1
    assert scipy.stats.binom.sf(n // 2, n, 1 - q) >= 0.95
    if n > 1:
        assert scipy.stats.binom.sf((n - 2) // 2, n - 2, 1 - q) < 0.95


def test_majority_repeats_is_none_for_a_coin_flip_judge():
    assert probe_stats.majority_repeats(0.5) is None
    assert probe_stats.majority_repeats(0.7) is None


@given(st.lists(st.sampled_from("abc"), min_size=2, max_size=9))
def test_flip_probability_is_the_share_of_differing_ordered_pairs(draws):
    pairs = list(itertools.permutations(range(len(draws)), 2))
    expected = sum(draws[i] != draws[j] for i, j in pairs) / len(pairs)
    assert probe_stats.flip_probability(draws) == pytest.approx(expected)


def test_off_mode_is_the_share_outside_the_most_common_verdict():
    assert probe_stats.off_mode(["a", "a", "b", "a", "c"]) == pytest.approx(0.4)


# -- rows of fake judges ------------------------------------------------------------------

FIELDS = ["factual_accuracy", "completeness", "causal_reasoning", "core_total"]
LOWEST = [Expectation(field=f, op="==", value=0) for f in FIELDS[:3]]


def row(item: str, run: str, scores: tuple[int, int, int], *, control: bool = True,
        expect: list[Expectation] | None = None) -> JudgementRow:  # fmt: skip
    verdict: dict[str, Any] = dict(zip(FIELDS[:3], scores, strict=True))
    verdict["core_total"] = sum(scores)
    expect = expect or [Expectation(field="factual_accuracy", op=">=", value=2)]
    return JudgementRow(
        judge="product_identity", prompt_version="9.9", prompt_hash="x",
        model="local:fake", item_id=item, category="control", control=control, run=run,
        status="ok", verdict=verdict, expect=expect,
        met=all(e.holds(verdict) for e in expect),
    )  # fmt: skip


def effect_of(probe: str, judge, n: int = 8, seed: int = 0) -> probe_stats.ProbeEffect:
    """A fake judge over n items: `judge(kind, i, rng)` gives its three scores."""
    rng = random.Random(seed)
    outcomes = []
    for i in range(n):
        item = f"PE-{i + 1:02d}"
        clean = row(item, "main", judge("clean", i, rng))
        noise = row(item, "probe-noise", judge("clean", i, rng))
        expect = LOWEST if probe == "dummy" else None
        probed = row(item, f"probe-{probe}", judge(probe, i, rng), expect=expect)
        outcomes.append(probe_stats.outcome(probe, probed, clean, FIELDS, "core_total", noise))
    return probe_stats.probe_effect(probe, outcomes)


def length_rewarding(kind: str, i: int, rng: random.Random) -> tuple[int, int, int]:
    return (3, 3, 3) if kind == "padding" else (2, 2, 1)


def fair(kind: str, i: int, rng: random.Random) -> tuple[int, int, int]:
    return (0, 0, 0) if kind == "dummy" else (2, 2, 1)


def agrees_with_everything(kind: str, i: int, rng: random.Random) -> tuple[int, int, int]:
    return (3, 3, 3)


def random_judge(kind: str, i: int, rng: random.Random) -> tuple[int, int, int]:
    return (rng.randint(0, 3), rng.randint(0, 3), rng.randint(0, 3))


def test_a_length_rewarding_judge_fails_its_padding_gate_naming_probe_rate_interval_gate():
    effect = effect_of("padding", length_rewarding)
    (gate,) = probe_messages.flip_gates([effect], {"padding": 0.10})
    assert gate.passed is False
    text = gate.describe()
    low, high = scipy.stats.binomtest(8, 8).proportion_ci(method="wilson")
    assert "max_flip.padding" in text and "judge-pleasing flip rate" in text
    assert f"[{low:.2f}, {high:.2f}] n=8" in text and "gate <= 0.10" in text
    assert "bias beyond noise" in text and effect.beyond_noise is True
    assert effect.test is not None
    assert effect.test.p_value == pytest.approx(scipy.stats.binomtest(8, 8, 0.5).pvalue)


def test_a_fair_judge_passes_every_gate_with_no_effect_beyond_noise():
    effects = [effect_of(p, fair) for p in ("padding", "injection", "authority", "dummy")]
    gates = probe_messages.flip_gates(effects, dict.fromkeys(probe_kinds.PROBES[:4], 0.0))
    assert all(g.passed for g in gates)
    assert all(e.beyond_noise in (False, None) for e in effects)


def test_a_judge_that_agrees_with_everything_fails_the_dummy_gate():
    effect = effect_of("dummy", agrees_with_everything)
    (gate,) = probe_messages.flip_gates([effect], {"dummy": 0.25})
    assert gate.passed is False and effect.biased.successes == 8
    assert "non-answers not scored lowest" in gate.describe()


def test_a_random_judge_fails_order_and_its_flips_are_no_more_than_its_noise():
    effect = effect_of("order", random_judge, n=40, seed=3)
    (gate,) = probe_messages.flip_gates([effect], {"order": 0.10})
    assert gate.passed is False
    # A random judge flips as often under the probe as on a redraw: noise, not bias.
    assert effect.beyond_noise is False and effect.noise is not None
    assert effect.noise.rate > 0.8


def test_rates_carry_scipy_wilson_intervals():
    effect = effect_of("padding", random_judge, n=30, seed=7)
    for rate in (effect.flips, effect.pleasing, effect.biased, effect.noise):
        assert rate is not None
        low, high = scipy.stats.binomtest(rate.successes, rate.n).proportion_ci(method="wilson")
        assert (rate.low, rate.high) == pytest.approx((low, high), abs=1e-9)


def test_an_error_row_counts_as_biased_and_is_not_dropped():
    clean = row("PE-01", "main", (2, 2, 1))
    broken = clean.model_copy(update={"run": "probe-padding", "status": "unparseable",
                                      "verdict": None, "error": "no JSON"})  # fmt: skip
    result = probe_stats.outcome("padding", broken, clean, FIELDS, "core_total")
    assert result.biased and result.error and "unparseable" in result.error


def test_a_gate_for_a_probe_without_items_is_not_a_pass():
    (gate,) = probe_messages.flip_gates([], {"order": 0.1})
    assert gate.passed is None


def test_a_defect_no_longer_caught_is_judge_pleasing_even_at_the_same_score():
    expect = [Expectation(field="factual_accuracy", op="<=", value=1)]
    clean = row("PE-16", "main", (1, 2, 2), control=False, expect=expect)
    probed = row("PE-16", "probe-authority", (2, 1, 2), control=False, expect=expect)
    result = probe_stats.outcome("authority", probed, clean, FIELDS, "core_total")
    assert result.pleasing and result.biased and result.flipped


# -- from result rows: effects, the noise floor's repeats, the baseline -------------------


def version_rows(judge, probe: str = "padding", n: int = 8) -> list[JudgementRow]:
    rng = random.Random(1)
    rows = []
    for i in range(n):
        item = f"PE-{i + 1:02d}"
        rows.append(row(item, "main", judge("clean", i, rng)))
        rows.append(row(item, "probe-noise", judge("clean", i, rng)))
        rows.append(row(item, f"probe-{probe}", judge(probe, i, rng)))
    return rows


def test_effects_from_rows_pair_each_probe_with_its_main_and_redraw_rows():
    rows = version_rows(length_rewarding)
    (effect,) = probe_stats.effects_from_rows(rows, FIELDS, "core_total")
    assert effect.probe == "padding" and effect.biased.successes == effect.biased.n == 8
    assert effect.noise is not None and effect.noise.successes == 0


def test_baseline_accepts_the_biased_items_and_sets_no_ceiling_that_cannot_fail():
    from judges.cli.baseline import probe_baseline

    rows = version_rows(length_rewarding)
    rows = [r for r in rows if r.item_id != "PE-08" or r.run != "probe-padding"]
    rows.append(row("PE-08", "probe-padding", (2, 2, 1)))  # this one resisted
    gates, accepted = probe_baseline(rows, FIELDS, "core_total")
    # 7/8 biased: the upper Wilson bound (0.98) rounds up to 1.0, a ceiling that never fails.
    assert scipy.stats.binomtest(7, 8).proportion_ci(method="wilson").high > 0.95
    assert gates == {}
    assert sorted(accepted["padding"]) == [f"PE-0{i}" for i in range(1, 8)]
    assert "core_total=5" in accepted["padding"]["PE-01"]
    assert "core_total=9" in accepted["padding"]["PE-01"]


def test_noise_repeats_from_the_noise_run():
    rows = []
    for item, scores in {"PE-01": [1, 1, 1, 2, 1], "PE-02": [3, 3, 3, 3, 3]}.items():
        for k, s in enumerate(scores):
            r = row(item, "noise", (s, 1, 1))
            rows.append(r.model_copy(update={"repeat": k}))
    result = probe_stats.noise_repeats(rows, FIELDS)
    assert result is not None
    assert result.per_item == {"PE-01": pytest.approx(0.4), "PE-02": 0.0}
    assert result.off_mode == pytest.approx(0.1)
    assert result.repeats == probe_stats.majority_repeats(0.1) == 3
    assert result.worst_repeats == probe_stats.majority_repeats(0.2) == 7
    assert probe_stats.noise_repeats([], FIELDS) is None


def test_a_dummy_scored_above_the_worst_control_is_judge_pleasing():
    rows = [row("PE-01", "main", (2, 2, 1)), row("PE-02", "main", (1, 1, 1))]  # floor 3
    rows.append(row("PE-01", "probe-dummy", (1, 1, 2), expect=LOWEST))  # 4 > 3
    rows.append(row("PE-02", "probe-dummy", (1, 1, 1), expect=LOWEST))  # 3, not above
    assert probe_stats.control_floor(rows, "core_total") == 3
    found = probe_stats.outcomes_from_rows(rows, FIELDS, "core_total")["dummy"]
    assert [(o.item_id, o.pleasing, o.biased) for o in found] == [
        ("PE-01", True, True),
        ("PE-02", False, True),
    ]


def test_a_probe_row_without_its_main_row_is_counted_not_dropped():
    rows = [row("PE-05", "probe-padding", (2, 2, 1))]
    (found,) = probe_stats.outcomes_from_rows(rows, FIELDS, "core_total")["padding"]
    assert found.biased and found.error == "no main-run row"


# -- the report section -----------------------------------------------------------------------


def test_the_report_section_shows_each_probe_against_its_noise_floor_and_gate():
    from judges.reports.sections.probes import probes_html, probes_markdown, probes_svg
    from judges.sets.planted import Gates
    from judges.verdicts.probes import probe_report

    rows = version_rows(length_rewarding)
    for k, s in enumerate([1, 1, 2, 1, 1]):
        rows.append(row("PE-01", "noise", (s, 1, 1)).model_copy(update={"repeat": k}))
    report = probe_report(rows, FIELDS, "core_total", Gates(max_flip={"padding": 0.1}))
    assert report is not None
    md = "\n".join(probes_markdown(report))
    assert "| padding | 8 |" in md and "8/8 = 1.00 [0.68, 1.00]" in md
    assert "bias beyond noise" in md and "<= 0.10 FAIL" in md
    assert "majority vote needs 7 repeats" in md  # off the mode 1 in 5
    svg = probes_svg(report)
    assert svg.count('class="noise-band"') == 1 and "gate: at most 0.10" in svg
    html = probes_html(report)
    assert "<h3>Bias probes</h3>" in html
    assert html.count("<th>") == html.split("</tr>")[1].count("<td")  # one cell per column
    data = report.as_dict()
    assert data["probes"][0]["biased"]["successes"] == 8
    assert data["gates"][0]["passed"] is False
    assert data["noise_floor_repeats"]["majority_repeats_95"] == 7
    assert probe_report([r for r in rows if r.run == "main"], FIELDS, "core_total", None) is None


def test_the_version_comparison_pairs_each_probe_per_item():
    from judges.reports.sections.probes import changes_markdown
    from judges.verdicts.probes import compare_probes, probe_report

    before = version_rows(length_rewarding)  # 8/8 biased
    after = version_rows(fair)  # 0/8
    (change,) = compare_probes(before, after, FIELDS, "core_total")
    assert (change.before.successes, change.after.successes) == (8, 0)
    assert (change.test.b, change.test.c) == (8, 0)
    assert change.test.p_value == pytest.approx(scipy.stats.binomtest(8, 8, 0.5).pvalue)
    report = probe_report(after, FIELDS, "core_total", None, ("0.9", before))
    assert report is not None and report.previous == "0.9"
    assert "| padding | 8/8 = 1.00 [0.68, 1.00] | 0/8 = 0.00 [0.00, 0.32] | 8 | 0 |" in "\n".join(
        changes_markdown(report)
    )


def test_flips_are_set_against_the_redraws_flips_with_scipy_exact_p():
    rng = random.Random(11)
    outcomes = [
        probe_stats.Outcome(
            "padding", f"PE-{i:02d}", rng.random() < 0.7, False, False, rng.random() < 0.3, False
        )
        for i in range(30)
    ]
    effect = probe_stats.probe_effect("padding", outcomes)
    b = sum(o.flipped and not o.noise_flipped for o in outcomes)
    c = sum(o.noise_flipped and not o.flipped for o in outcomes)
    assert effect.flip_test is not None and (effect.flip_test.b, effect.flip_test.c) == (b, c)
    assert effect.flip_test.p_value == pytest.approx(scipy.stats.binomtest(b, b + c, 0.5).pvalue)
    assert effect.noise_flips is not None
    assert effect.noise_flips.successes == sum(bool(o.noise_flipped) for o in outcomes)


def test_a_judge_that_follows_the_seed_not_the_text_is_below_noise():
    rows = []
    for i in range(8):  # main and probe share the seed; the redraw does not
        item = f"PE-{i + 1:02d}"
        rows += [row(item, "main", (2, 2, 1)), row(item, "probe-padding", (2, 2, 1))]
        rows.append(row(item, "probe-noise", (3, 3, 3)))
    (effect,) = probe_stats.effects_from_rows(rows, FIELDS, "core_total")
    assert effect.beyond_noise is False and probe_messages.against_noise(effect).startswith(
        "below noise"
    )
    assert effect.test is not None and (effect.test.b, effect.test.c) == (0, 8)


def test_a_ceiling_fails_only_when_the_rate_is_above_it_beyond_chance():
    """On 8 items, 3 biased over a 0.35 ceiling is a good judge's noise (p = 0.57); an
    injection-obeying judge's 3 of 3, or 8 of 8, is above it beyond chance."""
    ceiling = 0.35
    for k, n, passes in ((3, 8, True), (4, 8, True), (6, 8, False), (3, 3, False), (8, 8, False)):
        gate = RateCeiling("max_flip.injection", wilson(k, n), ceiling, at_least=False)
        p = scipy.stats.binomtest(k, n, ceiling, alternative="greater").pvalue
        assert gate.p_value == pytest.approx(p)
        assert gate.passed is passes, (k, n, p)
    assert RateCeiling("x", wilson(0, 0), ceiling, at_least=False).passed is None
    assert RateCeiling("x", wilson(3, 8), None, at_least=False).passed is None


@pytest.mark.parametrize("n", [3, 8, 20, 40])
@pytest.mark.parametrize("ceiling", [0.1, 0.35, 0.5])
def test_a_judge_biased_at_the_ceiling_fails_it_at_most_alpha_of_the_time(n, ceiling):
    # Exact over every count a judge whose true rate is the ceiling can draw: the size of
    # the test, not a simulation of it.
    fails = [
        k for k in range(n + 1)
        if RateCeiling("x", wilson(k, n), ceiling, at_least=False).passed is False
    ]  # fmt: skip
    size = sum(scipy.stats.binom.pmf(k, n, ceiling) for k in fails)
    assert size <= 0.05


def test_flip_gates_name_their_test_against_the_ceiling():
    effect = effect_of("padding", length_rewarding)
    (gate,) = probe_messages.flip_gates([effect], {"padding": 0.35})
    assert isinstance(gate, RateCeiling) and gate.passed is False
    assert "above the ceiling beyond chance (one-sided binomial p = " in gate.describe()
    (fair_gate,) = probe_messages.flip_gates([effect_of("padding", fair)], {"padding": 0.35})
    assert fair_gate.passed is True and "not above the ceiling" in fair_gate.describe()
