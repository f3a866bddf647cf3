"""`python -m judges baseline`: the accepted baseline, team floors kept, suggestions from bounds."""

from __future__ import annotations

import json
import math
import re
import shutil
import tomllib
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from judges.cli.baseline import (
    _below_chance,
    _bound,
    ceil_step,
    detection_floors,
    floor_step,
    merge_floors,
    probe_baseline,
)
from judges.cli.main import main
from judges.core.results import JudgementRow, write_jsonl
from judges.core.spec import load_catalog
from judges.reports.model.folders import Results, build_folder
from judges.stats.estimates.floors import shared_prior
from judges.stats.estimates.intervals import Estimate, wilson
from judges.verdicts.inputs import load_sources
from tests._pairwise_rows import pairwise_row

ROOT = Path(__file__).resolve().parents[1]
MODEL = "local:smollm2-135m"


def _copy_sets(tmp_path: Path) -> Path:
    target = tmp_path / "planted_sets"
    shutil.copytree(ROOT / "planted_sets", target)
    return target


def _gates(planted: Path) -> dict:
    return tomllib.loads((planted / "product_identity" / "gates.toml").read_text())[MODEL]


def _run(planted: Path, *extra: str) -> int:
    argv = ["baseline", "product_identity", "--reports", str(ROOT / "reports")]
    return main([*argv, "--planted-sets", str(planted), *extra])


def test_baseline_names_the_accepted_version_and_keeps_the_teams_floors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    planted = _copy_sets(tmp_path)
    gates = planted / "product_identity" / "gates.toml"
    # The team raises 0.3.1's cousin floor above its control false-positive ceiling (0.8).
    gates.write_text(gates.read_text().replace("cousin = 0.25", "cousin = 0.85", 1))

    assert _run(planted, "--accept", "0.3") == 0

    tables = _gates(planted)
    assert "baseline" not in tables["0.2"]  # older versions keep floors only
    assert tables["0.3"]["baseline"] == "0.3" and tables["0.3.1"]["baseline"] == "0.3"
    out = capsys.readouterr().out
    assert "accepted baseline: prompt 0.3" in out
    assert "has no retest run" not in out  # 0.3 has its retest
    # What the new baseline's detection gate will see, against gates.toml's declared drop.
    blind = re.search(
        rf"warning: product_identity 0.3 on {MODEL}: its regression gates are blind to "
        r"detection drops under (\d+) points \(gates.toml min_detectable_drop 15 points\): "
        r"(\d+) planted defects would see 15 points \(it has (\d+)\)",
        out,
    )
    assert blind is not None, out
    assert int(blind[1]) > 15 and int(blind[2]) > int(blind[3])
    assert "`python -m judges plan product_identity --drop 0.15` plans the set" in out
    # The accepted prompt is pinned beside the earlier pins, which stay.
    pins = tomllib.loads((planted / "product_identity" / "accepted.toml").read_text())[MODEL]
    assert set(pins) == {"0.3", "0.3.1"} and set(pins["0.3"]["prompts"]) == {"0.3.md"}
    assert f"wrote {planted / 'product_identity' / 'accepted.toml'}" in out
    assert tables["0.3.1"]["min_detection"]["cousin"] == 0.85  # the team's edit survives
    assert "a judge as good as the accepted run meets with probability 0.9975" in out
    # The floors at or below their ceiling were dropped, and said so.
    assert "dropped: at or below max_control_false_positive" in out
    # 0.3 is NOT FIT but its own table accepts it: the acceptance is kept, and said.
    assert tables["0.3"]["accept_not_fit"].startswith("SmolLM2-135M")
    assert "fitness: product_identity 0.3 on local:smollm2-135m: NOT FIT" in out


def test_a_version_lacking_runs_of_its_judge_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    planted = _copy_sets(tmp_path)
    config = planted / "product_identity" / "set.toml"  # the runs restricted to 0.3.1
    lists = 'noise_versions = ["0.3.1"]\nretest_versions = ["0.3.1"]\n'
    config.write_text(config.read_text().replace("retest = true\n", lists))
    before = (planted / "product_identity" / "gates.toml").read_text()
    assert _run(planted, "--accept", "0.2") == 2
    err = capsys.readouterr().err
    assert "--accept 0.2: refused, product_identity prompt 0.2 lacks runs its judge has" in err
    assert f"  {MODEL}: noise (set.toml noise_versions leaves 0.2 out" in err
    assert f"  {MODEL}: retest (set.toml retest_versions leaves 0.2 out" in err
    assert (planted / "product_identity" / "gates.toml").read_text() == before


def test_baseline_refuses_a_judge_at_chance_unless_accepted_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    planted = _copy_sets(tmp_path)
    gates = planted / "product_identity" / "gates.toml"
    before = "\n".join(
        line for line in gates.read_text().splitlines() if not line.startswith("accept_not_fit")
    )
    gates.write_text(before + "\n")

    assert _run(planted, "--accept", "0.3.1") == 1
    err = capsys.readouterr().err
    assert "prompt 0.3.1 is NOT FIT on local:smollm2-135m" in err and "nothing written" in err
    assert gates.read_text() == before + "\n"

    assert _run(planted, "--accept", "0.3.1", "--accept-not-fit", "a smoke-test judge") == 0
    assert _gates(planted)["0.3.1"]["accept_not_fit"] == "a smoke-test judge"
    # No floor at or below chance was suggested or kept.
    for table in _gates(planted).values():
        for section in ("sme", "test_retest"):
            assert all(v > 0 for k, v in table.get(section, {}).items() if "kappa" in k)


def test_reset_floors_suggests_the_predictive_bound_rounded(tmp_path: Path) -> None:
    planted = _copy_sets(tmp_path)
    assert _run(planted, "--accept", "0.3.1", "--reset-floors") == 0
    tables = _gates(planted)
    # 0.3.1 flagged 5 of 15 controls: the next run flags at most 12 (0.80) with 0.9975.
    predictive = scipy.stats.betabinom(15, 5.5, 10.5)
    assert predictive.ppf(0.9975) == 12
    assert tables["0.3.1"]["max_control_false_positive"] == 0.8
    # It caught 8 of 16 cousins: its floor is far below that ceiling, a floor a judge
    # flagging at random passes: not suggested.
    assert "min_detection" not in tables["0.3.1"]  # nor the ones the team had: dropped
    assert tables["0.3.1"]["max_error_rate"] == 0.0


def test_a_detection_floor_is_the_predictive_bound_rounded_down() -> None:
    rows = [_row(f"D-{i}", i < 15) for i in range(16)]
    rows += [_row(f"C-{i}", False, control=True) for i in range(2)]
    rows += [_row(f"C-{i + 2}", True, control=True) for i in range(38)]
    # 15 of 16 cousins: the next run's count under the Jeffreys beta-binomial predictive,
    # its 0.25% quantile (scipy's distribution, counted by hand here).
    predictive = scipy.stats.betabinom(16, 15.5, 1.5)
    counts = [c for c in range(17) if predictive.cdf(c - 1) <= 0.0025]
    floors = detection_floors(rows)
    assert floors["min_detection"]["cousin"] == math.floor(max(counts) / 16 / 0.05) * 0.05
    assert floors["min_detection"]["cousin"] < 15 / 16  # never the point value
    assert floors["min_detection"]["cousin"] > floors["max_control_false_positive"]


def test_an_equally_good_judge_meets_every_suggested_floor_95_percent_of_the_time() -> None:
    """Runs of a judge right on 90% of 16 defects and 30 controls: the floors one run
    suggests, and how often the next run of the same judge misses any of them."""
    rng = np.random.default_rng(33)
    misses = 0
    trials = 400
    for _ in range(trials):
        k, fp = rng.binomial(16, 0.9), rng.binomial(30, 0.1)
        rows = [_row(f"D-{i}", i < k) for i in range(16)]
        rows += [_row(f"C-{i}", i >= fp, control=True) for i in range(30)]
        floors = detection_floors(rows)
        k2, fp2 = rng.binomial(16, 0.9), rng.binomial(30, 0.1)
        low = floors.get("min_detection", {}).get("cousin", 0.0)
        high = floors.get("max_control_false_positive", 1.0)
        misses += k2 / 16 < low or fp2 / 30 > high
    assert misses / trials <= 0.05
    # A perfect run suggests no floor at its own value: 16/16 is not a floor of 1.0.
    perfect = [_row(f"D-{i}", True) for i in range(16)] + [_row("C-0", True, control=True)]
    assert detection_floors(perfect).get("min_detection", {}).get("cousin", 0.0) < 0.9


def test_a_retest_of_the_same_items_pools_into_the_floor_so_one_lucky_draw_sets_none() -> None:
    # Every one of 40 defects caught in the main run, 34 in its retest: what is known of the
    # judge's rate is 74 of 80, and the next run of 40 is predicted from that.
    main = [_row(f"D-{i}", True) for i in range(40)]
    retest = [_row(f"D-{i}", i < 34).model_copy(update={"run": "retest"}) for i in range(40)]
    alone = detection_floors(main)["min_detection"]["cousin"]
    pooled = detection_floors(main + retest)["min_detection"]["cousin"]
    predictive = scipy.stats.betabinom(40, 74.5, 6.5)
    counts = [c for c in range(41) if predictive.cdf(c - 1) <= 0.0025]
    assert pooled == pytest.approx(math.floor(max(counts) / 40 / 0.05) * 0.05) and pooled < alone
    # A judge right on 88% of them: the lucky main draw's floor alone fails it often.
    next_run = scipy.stats.binom(40, 0.88)
    assert next_run.cdf(math.ceil(alone * 40) - 1) > 0.05 > next_run.cdf(math.ceil(pooled * 40) - 1)
    # A retest of other items is not a draw of these: it does not pool.
    elsewhere = [row.model_copy(update={"item_id": f"E-{i}"}) for i, row in enumerate(retest)]
    assert detection_floors(main + elsewhere)["min_detection"]["cousin"] == alone


def _category(name: str, caught: int, of: int, run: str = "main") -> list[JudgementRow]:
    return [
        _row(f"{name}-{i}", i < caught).model_copy(update={"category": name, "run": run})
        for i in range(of)
    ]


def _judge(counts: dict[str, tuple[int, int]]) -> list[JudgementRow]:
    """A main run and its retest per category: (caught in main, caught in retest) of 21."""
    rows = []
    for name, (in_main, in_retest) in counts.items():
        rows += _category(name, in_main, 21) + _category(name, in_retest, 21, "retest")
    return rows


def test_a_category_that_drew_every_defect_is_held_to_the_judges_rate_not_its_luck() -> None:
    # One judge, four categories of 21 defects, right on about 90% of each: one category
    # caught all 42 of its draws (a 1-in-80 draw at 90%). Alone, its draws predict a next
    # run of 17/21 or more, a floor of 0.80 an equally good judge misses one run in 20; the
    # categories together say the judge's rate is about 0.92, and the floor follows that.
    lucky = {"a": (21, 21), "b": (18, 20), "c": (19, 19), "d": (17, 19)}
    together = detection_floors(_judge(lucky))["min_detection"]["a"]
    alone = detection_floors(_judge({"a": (21, 21)}))["min_detection"]["a"]
    next_run = scipy.stats.binom(21, 0.9)
    assert alone == 0.80 and together < alone
    assert (
        next_run.cdf(math.ceil(alone * 21) - 1) > 0.05 > next_run.cdf(math.ceil(together * 21) - 1)
    )
    # The other categories' floors are their own draws' (never raised by the shared rate).
    for name in "bcd":
        own = detection_floors(_judge({name: lucky[name]}))["min_detection"][name]
        assert detection_floors(_judge(lucky))["min_detection"][name] <= own


def test_categories_that_differ_keep_their_own_floors() -> None:
    # A judge that catches nearly every "a" defect and few "b" ones: the categories do not
    # share a rate, so neither floor is pulled toward the other.
    prior = shared_prior([(41, 42), (10, 42)])
    assert prior is not None and prior.a + prior.b < 5  # weak: each category speaks for itself
    differing = {"a": (21, 20), "b": (5, 5)}
    floors = detection_floors(_judge(differing))["min_detection"]
    alone = {
        n: detection_floors(_judge({n: differing[n]})).get("min_detection", {}).get(n) for n in "ab"
    }
    assert floors == {n: v for n, v in alone.items() if v is not None}
    assert shared_prior([(21, 21)]) is None and shared_prior([]) is None


def test_the_shared_rate_keeps_the_next_run_miss_within_its_share() -> None:
    """Over many baselines of a judge right on 90% of four categories of 21 defects (main
    and retest), how often the next run misses any of the four floors: at most 4 x 0.25%
    plus Monte Carlo slack, and no more often than with each category's draws alone."""
    rng = np.random.default_rng(68)
    trials, missed, missed_alone = 300, 0, 0
    for _ in range(trials):
        counts = {c: (int(rng.binomial(21, 0.9)), int(rng.binomial(21, 0.9))) for c in "abcd"}
        floors = detection_floors(_judge(counts))["min_detection"]
        alone = {
            c: detection_floors(_judge({c: counts[c]}))["min_detection"].get(c, 0.0) for c in "abcd"
        }
        next_run = {c: rng.binomial(21, 0.9) / 21 for c in "abcd"}
        missed += any(next_run[c] < floors.get(c, 0.0) for c in "abcd")
        missed_alone += any(next_run[c] < alone[c] for c in "abcd")
    assert missed <= missed_alone
    assert scipy.stats.binomtest(missed, trials).proportion_ci(0.95).low <= 4 * 0.0025


def test_an_unknown_accepted_version_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(_copy_sets(tmp_path), "--accept", "9.9") == 2
    assert "--accept 9.9: not a prompt version of product_identity" in capsys.readouterr().err


def _row(item: str, met: bool, control: bool = False) -> JudgementRow:
    return JudgementRow(
        judge="j", prompt_version="1", prompt_hash="h", model="m:m", item_id=item,
        category="control" if control else "cousin", control=control, status="ok",
        verdict={}, expect=[], met=met,
    )  # fmt: skip


def test_suggested_floors_pass_the_run_they_come_from_and_a_constant_judge_fails() -> None:
    rows = [_row(f"D-{i}", i < 12) for i in range(16)]
    rows += [_row(f"C-{i}", True, control=True) for i in range(40)]
    floors = detection_floors(rows)
    assert floors["min_detection"]["cousin"] <= 12 / 16
    assert floors["min_detection"]["cousin"] > 0  # a judge that finds nothing fails it
    assert floor_step(0.2999) == 0.25 and floor_step(0.3) == 0.3


def test_no_floor_is_suggested_that_no_run_could_fail() -> None:
    # 1 of 7 caught: the predicted bound rounds down to 0.0, which every run meets.
    rows = [_row(f"D-{i}", i < 1) for i in range(7)] + [_row("C-1", True, control=True)]
    assert scipy.stats.binomtest(1, 7).proportion_ci(method="wilson").low < 0.05
    assert "cousin" not in detection_floors(rows).get("min_detection", {})
    assert _bound(wilson(1, 7), at_least=True) is None
    assert _bound(wilson(7, 7), at_least=False) is None  # a ceiling of 1.0 on a rate
    assert _bound(wilson(15, 16), at_least=True) == 0.5  # 8 of 16 (see above)
    # An estimate (sd, kappa): one run does not bound the next; a perfect run's kappa of 1.0
    # or sd of 0.0 (the init scaffold's) is never suggested.
    assert _bound(Estimate(0.5, 0.3, 0.7, 20), at_least=True) is None
    assert _bound(Estimate(1.0, 1.0, 1.0, 6), at_least=True) is None
    assert _bound(Estimate(0.0, 0.0, 0.0, 6), at_least=False) is None


def test_merge_floors_keeps_unknown_sections() -> None:
    merged, notes = merge_floors(
        {"max_flip": {"x": 0.1}, "min_detection": {"cousin": 0.5}},
        {"min_detection": {"cousin": 0.3, "fabrication": 0.2}},
        reset=False,
    )
    assert merged == {"max_flip": {"x": 0.1}, "min_detection": {"cousin": 0.5, "fabrication": 0.2}}
    assert notes == ["min_detection.cousin = 0.5 kept (suggested 0.3)"]


def test_reset_floors_replaces_every_floor_and_names_the_ones_it_drops() -> None:
    merged, notes = merge_floors(
        {
            "baseline": "1.0",
            "min_detection": {"cousin": 0.6, "fabrication": 0.5},
            "max_error_rate": 0.0,
            "ranking": {"ndcg@10": 0.5},
        },
        {"min_detection": {"fabrication": 0.2}, "max_error_rate": 0.05},
        reset=True,
    )
    # Not a floor a suggestion sets: kept. A floor with no suggestion now: dropped, and said.
    assert merged == {
        "baseline": "1.0",
        "ranking": {"ndcg@10": 0.5},
        "min_detection": {"fabrication": 0.2},
        "max_error_rate": 0.05,
    }
    assert notes == ["min_detection.cousin = 0.6 dropped (--reset-floors: nothing to suggest)"]


def _probe_row(item: str, run: str, total: int, met: bool = True) -> JudgementRow:
    return JudgementRow(
        judge="j", prompt_version="1", prompt_hash="h", model="local:m", item_id=item,
        category="cousin", control=False, run=run, status="ok",
        verdict={"factual_accuracy": total // 2, "core_total": total}, expect=[], met=met,
    )  # fmt: skip


def test_max_flip_suggestions_are_predictive_bounds_and_never_a_ceiling_that_cannot_fail() -> None:
    items = [f"PE-{i:02d}" for i in range(10)]
    rows = [_probe_row(item, "main", 3) for item in items]
    # Padding raises the score of 2 items of 10; no dummy (a non-answer) is scored lowest.
    rows += [_probe_row(item, "probe-padding", 5 if i < 2 else 3) for i, item in enumerate(items)]
    rows += [_probe_row(item, "probe-dummy", 3, met=False) for item in items]

    gates, accepted = probe_baseline(rows, ["factual_accuracy", "core_total"], "core_total")

    # 2 of 10 biased: the next run is biased on at most 8 with probability 0.9975.
    assert scipy.stats.betabinom(10, 2.5, 8.5).ppf(0.9975) == 8
    assert gates == {"padding": ceil_step(0.8)} == {"padding": 0.8}  # not the point 0.2
    assert "dummy" not in gates  # 10/10 biased: a ceiling of 1.0 could never fail
    assert sorted(accepted["padding"]) == items[:2]
    assert sorted(accepted["dummy"]) == items  # each a strict xfail instead


def test_a_version_that_inherits_its_floors_never_inherits_accept_not_fit(
    tmp_path: Path,
) -> None:
    planted = _copy_sets(tmp_path)
    gates = planted / "product_identity" / "gates.toml"
    text = gates.read_text()
    gates.write_text(text[: text.index(f'["{MODEL}"."0.3.1"]')])  # 0.3.1 loses its table
    assert _gates(planted)["0.3"]["accept_not_fit"]

    # 0.3.1 (NOT FIT) is written a table from 0.3's floors, not 0.3's acceptance.
    assert _run(planted, "--accept", "0.3") == 0
    tables = _gates(planted)
    assert tables["0.3"]["accept_not_fit"] and "accept_not_fit" not in tables["0.3.1"]
    assert tables["0.3.1"]["baseline"] == "0.3"


def test_a_baseline_accepted_not_fit_hands_on_no_stability_floors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A judge at chance is steadier than a good one (the embedded judge scores nearly every
    item alike): its retest and noise floors would fail every better judge after it."""
    planted = _copy_sets(tmp_path)
    gates = planted / "product_identity" / "gates.toml"
    text = gates.read_text()
    head = text.split(f'["{MODEL}"."0.3.1"]')[0]
    steady = (
        'test_retest = { "min_exact_match.core_total" = 0.95 }\n'
        "noise_floor = { min_flag_stability = 0.9 }\n"
    )
    head = head.replace("max_flip = { authority = 0.5", steady + "max_flip = { authority = 0.5")
    # 0.3.1 detects less than 0.3: a detection floor it meets, so nothing else refuses it.
    head = head.replace(
        "cousin = 0.6, dropped_edge_case = 0.25", "cousin = 0.1, dropped_edge_case = 0.25"
    )
    head = head.replace("sign_flip = 0.55", "sign_flip = 0.1")
    gates.write_text(head)
    assert _gates(planted)["0.3"]["test_retest"] and _gates(planted)["0.3"]["accept_not_fit"]

    # Read: 0.3.1 (no table of its own) is gated by 0.3's floors but not its stability ones.
    sources = load_sources("product_identity", load_catalog(), planted)
    assert sources.planted is not None
    inherited = sources.planted.gates[(MODEL, "0.3.1")]
    assert inherited.min_detection == sources.planted.gates[(MODEL, "0.3")].min_detection
    assert inherited.max_flip and not inherited.test_retest and not inherited.noise_floor

    # Write: accepting 0.3.1 (NOT FIT itself) carries neither 0.3's stability floors nor
    # suggestions from its own steadiness, and says so.
    assert _run(planted, "--accept", "0.3.1", "--accept-not-fit", "a smoke-test judge") == 0
    out = capsys.readouterr().out
    written = _gates(planted)["0.3.1"]
    assert not set(written) & {"test_retest", "noise_floor", "label_stability", "panel"}
    assert written["max_flip"] and "max_error_rate" in written
    assert "test_retest of prompt 0.3 not inherited: it was accepted NOT FIT" in out
    assert "noise_floor of prompt 0.3 not inherited" in out


def _pairwise_project(tmp_path: Path) -> tuple[Path, Path]:
    """Two sets of 12 pairwise items; prompt 0.1 picks the better output in both orders,
    prompt 1.0 always names the output shown first (right in one order only)."""
    planted, reports = tmp_path / "planted_sets", tmp_path / "reports"
    (planted / "pairwise").mkdir(parents=True)
    items, rows = [], []
    for category in ("natural", "adversarial"):
        for i in range(12):
            item_id, gold = f"{category[:2].upper()}-{i + 1:02d}", "1" if i % 2 else "2"
            expect = [
                {"field": "winner_original", "op": "==", "value": gold},
                {"field": "winner_swapped", "op": "==", "value": gold},
            ]
            inputs = {"instruction": "Pick one.", "output_1": "one", "output_2": "two"}
            items.append(
                {"id": item_id, "slug": f"item-{i + 1}", "judge": "pairwise",
                 "category": category, "inputs": inputs, "expect": expect,
                 "provenance": {"source": "hand"}}
            )  # fmt: skip
            for version, winners in (("0.1", (gold, gold)), ("1.0", ("1", "2"))):
                rows.append(pairwise_row(version, item_id, category, gold, winners))
    (planted / "pairwise" / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    for version in ("0.1", "1.0"):
        (reports / "pairwise" / version).mkdir(parents=True)
        mine = [row for row in rows if row.prompt_version == version]
        write_jsonl(reports / "pairwise" / version / "results.jsonl", mine)
    return planted, reports


def test_baseline_refuses_a_pairwise_judge_at_chance_unless_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    planted, reports = _pairwise_project(tmp_path)
    gates = planted / "pairwise" / "gates.toml"

    def run(*extra: str) -> int:
        folders = ["--reports", str(reports), "--planted-sets", str(planted)]
        return main(["baseline", "pairwise", *folders, *extra])

    assert run("--accept", "1.0") == 1
    said = capsys.readouterr()
    assert "fitness: pairwise 0.1 on local:smollm2-135m: FIT" in said.out
    assert "fitness: pairwise 1.0 on local:smollm2-135m: NOT FIT" in said.out
    assert "pairwise chance: natural: AT CHANCE" in said.out
    assert "prompt 1.0 is NOT FIT" in said.err and not gates.exists()

    assert run("--accept", "0.1") == 0  # the fit one is accepted
    # A main run alone is one draw of the reference: said, with what to add.
    assert "note: prompt 0.1 has no retest run" in capsys.readouterr().out
    # Both of 1.0's sets accepted one by one: accepted as it is, nothing added to its table.
    gates.write_text(
        f'["{MODEL}"."1.0"]\npairwise_accepted = {{ natural = "n", adversarial = "a" }}\n'
    )
    assert run("--accept", "1.0") == 0
    table = tomllib.loads(gates.read_text())[MODEL]["1.0"]
    assert table["pairwise_accepted"] == {"natural": "n", "adversarial": "a"}
    assert "accept_not_fit" not in table


def test_no_agreement_floor_at_chance_is_suggested() -> None:
    # A kappa or alpha floor at 0 passes a judge at chance about half the time: not one.
    assert _below_chance("min_kappa.coherence", 0.0) and _below_chance("min_alpha.overall", -0.1)
    assert not _below_chance("min_kappa.coherence", 0.05)
    assert not _below_chance("min_exact_match.coherence", 0.0)  # a rate, not an agreement


def test_a_version_accepted_not_fit_is_suggested_no_stability_floor(tmp_path: Path) -> None:
    # geval 1.0 (the embedded judge) scores 43 of 44 items 1 on every facet and its retest
    # all 44: floors from that steadiness bound a constant judge, not a good one.
    planted = _copy_sets(tmp_path)
    argv = ["baseline", "geval", "--reports", str(ROOT / "reports"), "--planted-sets"]
    reason = ["--accept-not-fit", "a smoke-test judge"]
    assert main([*argv, str(planted), "--accept", "1.0", "--reset-floors", *reason]) == 0
    table = tomllib.loads((planted / "geval" / "gates.toml").read_text())[MODEL]["1.0"]
    assert not set(table) & {"test_retest", "noise_floor", "label_stability", "panel"}
    assert table["min_detection"] and table["accept_not_fit"] == "a smoke-test judge"


def test_a_version_worse_than_the_baseline_is_refused_unless_accepted_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    planted = _copy_sets(tmp_path)
    assert _run(planted, "--accept", "0.3", "--accept-not-fit", "a smoke-test judge") == 0
    gates = planted / "product_identity" / "gates.toml"
    before = gates.read_text()
    capsys.readouterr()

    # 0.3.1 catches 22 fewer defects than 0.3 on the same items (McNemar mid-p 0.0002).
    assert _run(planted, "--accept", "0.3.1") == 1
    captured = capsys.readouterr()
    assert "regression: product_identity 0.3.1 on local:smollm2-135m: regression.detection" in (
        captured.out
    )
    assert "prompt 0.3.1 is significantly worse than the accepted baseline" in captured.err
    assert "nothing written" in captured.err and gates.read_text() == before

    why = "the new rubric trades detection for calibration"
    assert _run(planted, "--accept", "0.3.1", "--accept-regression", why) == 0
    tables = _gates(planted)
    assert tables["0.3.1"]["baseline"] == "0.3.1" and tables["0.3.1"]["accept_regression"] == why
    assert "accept_regression" not in tables["0.3"]
    # Its report says so, as long as it is the baseline.
    sources = load_sources("product_identity", load_catalog(), planted)
    folder = build_folder(Results(ROOT / "reports"), "product_identity", "0.3.1", sources)
    assert any(why in note and "significantly worse" in note for note in folder.models[0].notes)


def test_accepting_touches_only_the_accepted_models_tables_from_that_version_on(
    tmp_path: Path,
) -> None:
    planted = _copy_sets(tmp_path)
    gates = planted / "product_identity" / "gates.toml"
    # An older version with a baseline of its own, and a model with no recording here (an
    # imported judge's table, say): acceptance of another version leaves both alone.
    text = gates.read_text().replace(
        '["local:smollm2-135m"."0.3"]', '["local:smollm2-135m"."0.3"]\nbaseline = "0.3"', 1
    )
    gates.write_text(text + '\n["openai:gpt-4o"."0.2"]\nbaseline = "0.2"\nmax_error_rate = 0.1\n')
    before = tomllib.loads(gates.read_text())

    assert _run(planted, "--accept", "0.3.1") == 0

    after = tomllib.loads(gates.read_text())
    assert after["openai:gpt-4o"] == before["openai:gpt-4o"]
    for version in ("0.2", "0.3"):
        assert after[MODEL][version] == before[MODEL][version]
    assert after[MODEL]["0.3.1"]["baseline"] == "0.3.1"
