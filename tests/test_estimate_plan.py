"""`python -m judges estimate` (Rogan-Gladen, cross-checked against judgy) and `plan`."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from judges.__main__ import main
from judges.core.results import Expectation
from judges.reports.sections.estimate import estimate_dict
from judges.stats.estimates.intervals import Estimate
from judges.stats.estimates.power import items_for_mcnemar, items_for_mean
from judges.stats.estimates.prevalence import corrected_pass_rate, rogan_gladen
from judges.stats.planning.set_sizes import noise_df_needed, plan_set
from judges.verdicts.estimate import (
    EstimateError,
    estimate_pass_rate,
    parse_condition,
    read_outputs,
)
from tests._estimate_rows import estimate_row

ROOT = Path(__file__).resolve().parents[1]


def test_rogan_gladen_by_hand_and_refusals() -> None:
    assert rogan_gladen(0.6, 0.9, 0.8) == pytest.approx((0.6 + 0.8 - 1) / (0.9 + 0.8 - 1))
    assert rogan_gladen(0.05, 0.9, 0.8) == 0.0  # clipped
    assert math.isnan(rogan_gladen(0.5, 0.5, 0.5))
    with pytest.raises(ValueError, match="no better than a coin"):
        corrected_pass_rate(5, 10, (5, 10), (5, 10))
    with pytest.raises(ValueError, match="0 <= count <= n"):
        corrected_pass_rate(11, 10, (5, 10), (9, 10))


def test_interval_covers_the_true_rate_about_95_percent() -> None:
    rng = np.random.default_rng(12)
    covered = 0
    for rep in range(200):
        theta, tpr, tnr = 0.6, 0.85, 0.8
        tp, tn = rng.binomial(60, tpr), rng.binomial(60, tnr)
        raw = rng.binomial(300, theta * tpr + (1 - theta) * (1 - tnr))
        r = corrected_pass_rate(
            int(raw), 300, (int(tp), 60), (int(tn), 60), n_resamples=4000, seed=rep
        )
        covered += r.low <= theta <= r.high
    assert scipy.stats.binomtest(covered, 200).proportion_ci().high >= 0.95 - 0.01
    assert covered >= 180


def test_estimate_applies_the_rule_to_controls_defects_and_outputs(tmp_path: Path) -> None:
    rule = (parse_condition("score >= 2"), parse_condition("ok != false"))
    assert rule[0] == Expectation(field="score", op=">=", value=2)
    main = [estimate_row(f"C{i}", True, {"score": 3, "ok": True}) for i in range(18)]
    # TPR 18/20
    main += [estimate_row(f"C{i + 18}", True, {"score": 1, "ok": True}) for i in range(2)]
    main += [estimate_row(f"D{i}", False, {"score": 0, "ok": True}) for i in range(16)]
    main += [estimate_row(f"D{i + 16}", False, {"score": 3, "ok": False}) for i in range(2)]
    # TNR 18/20
    main += [estimate_row(f"D{i + 18}", False, {"score": 3, "ok": True}) for i in range(2)]
    main.append(estimate_row("D99", False, None, status="transport"))
    outputs = tmp_path / "outputs.jsonl"
    lines = [json.dumps({"score": 3, "ok": True})] * 60 + [
        json.dumps({"verdict": {"score": 0}})
    ] * 40
    lines.append(estimate_row("X", False, None, status="unparseable").model_dump_json())
    outputs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    verdicts, left_out = read_outputs(outputs)
    assert len(verdicts) == 100 and left_out == {"failed judgement (unparseable)": 1}
    result = estimate_pass_rate("j", "1", "m", main, verdicts, rule, left_out)
    r = result.rate
    assert (r.tpr.successes, r.tpr.n, r.tnr.successes, r.tnr.n) == (18, 20, 18, 20)
    assert r.value == pytest.approx((0.6 + 0.9 - 1) / (0.9 + 0.9 - 1))
    assert r.low < r.value < r.high and result.labelled_left_out == 1
    assert estimate_dict(result)["pass_if"] == ["score >= 2", "ok != false"]


def test_estimate_refuses_what_it_cannot_use(tmp_path: Path) -> None:
    with pytest.raises(EstimateError, match="expected `field op value`"):
        parse_condition("score is high")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(EstimateError, match=r"bad\.jsonl:1: not JSON"):
        read_outputs(bad)
    with pytest.raises(EstimateError, match="needs answered controls"):
        estimate_pass_rate("j", "1", "m", [], [{"score": 1}], (parse_condition("score >= 1"),))


def test_estimate_command_on_the_recorded_retest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    results = ROOT / "reports" / "product_identity" / "0.3.1" / "results.jsonl"
    retest = [line for line in results.read_text().splitlines() if '"run": "retest"' in line]
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text("\n".join(retest) + "\n", encoding="utf-8")
    argv = ["estimate", "product_identity", "--version", "0.3.1", "--outputs", str(outputs)]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["pass_if"] == ["factual_accuracy >= 2", "product_identity_match != false"]
    assert data["raw"]["n"] == len(retest) and data["tpr"]["n"] == 15 and data["tnr"]["n"] == 46
    assert data["warnings"]  # TPR + TNR barely above 1: the report says the figure is weak
    assert main(["estimate", "relevance", "--outputs", str(outputs)]) == 2
    assert "no control items" in capsys.readouterr().err


def test_plan_needs_match_the_power_functions() -> None:
    main = [estimate_row(f"D{i}", False, {"s": i % 4}) for i in range(40)]
    main = [r.model_copy(update={"met": i % 3 != 0}) for i, r in enumerate(main)]
    retest = [
        r.model_copy(update={"run": "retest", "met": not r.met if i < 8 else r.met,
                             "verdict": {"s": (r.verdict["s"] + (i % 3) - 1) % 4}})
        for i, r in enumerate(main)
    ]  # fmt: skip
    kappa = Estimate(0.6, 0.4, 0.8, 30)
    plan = plan_set(
        "j", "1", "m", main + retest, ["s"], noise_sd={}, noise_items=9, noise_repeats=5,
        kappa=kappa, drop=0.1,
    )  # fmt: skip
    needs = {need.part: need for need in plan.needs}
    assert needs["category cousin"].needed == items_for_mcnemar(8 / 40, 0.1)
    diffs = [b.verdict["s"] - a.verdict["s"] for a, b in zip(main, retest, strict=True)]
    sd = float(np.std(diffs, ddof=1))
    assert needs["score s (defects)"].needed == items_for_mean(sd, 0.1 * 3)
    df = noise_df_needed()
    assert 45 <= df <= 50 and needs["noise floor"].needed == 1 + math.ceil(df / 9)
    se = 0.4 / (2 * scipy.stats.norm.ppf(0.975))
    z = scipy.stats.norm.ppf(0.95) + scipy.stats.norm.ppf(0.8)
    assert needs["SME labels (kappa gate)"].needed == math.ceil(
        30 * (z * math.sqrt(2) * se / 0.1) ** 2
    )
    assert "add" in "\n".join(plan.lines())


def test_plan_command_on_the_recorded_runs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["plan", "product_identity", "--drop", "0.1", "--power", "0.8", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    parts = {need["part"]: need for need in data["needs"]}
    assert parts["category cousin"]["now"] == 16 and parts["category cousin"]["needed"] > 16
    assert "26/46 flipped on retest" in parts["category cousin"]["basis"]
    assert parts["noise floor"]["now"] == 5
    assert parts["SME labels (kappa gate)"]["now"] == 17
    with pytest.raises(SystemExit) as stopped:
        main(["plan", "product_identity", "--drop", "1.5"])
    assert stopped.value.code == 2
    assert "expected a number in (0, 1)" in capsys.readouterr().err


def test_the_report_shows_the_estimate_when_set_toml_names_outputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    planted = tmp_path / "planted_sets"
    shutil.copytree(ROOT / "planted_sets" / "product_identity", planted / "product_identity")
    shutil.copytree(ROOT / "planted_sets" / "sme", planted / "sme")
    folder = tmp_path / "reports" / "product_identity" / "0.3.1"
    folder.mkdir(parents=True)
    results = (ROOT / "reports" / "product_identity" / "0.3.1" / "results.jsonl").read_text()
    (folder / "results.jsonl").write_text(results, encoding="utf-8")
    retest = [line for line in results.splitlines() if '"run": "retest"' in line]
    (planted / "product_identity" / "outputs.jsonl").write_text("\n".join(retest) + "\n")
    set_toml = planted / "product_identity" / "set.toml"
    set_toml.write_text('outputs = {"0.3.1" = "outputs.jsonl"}\n' + set_toml.read_text())
    argv = ["report", "--judge", "product_identity", "--reports", str(tmp_path / "reports")]
    assert main([*argv, "--planted-sets", str(planted)]) == 0
    text = (folder / "report.md").read_text(encoding="utf-8")
    assert "### Pass rate on unlabelled outputs (bias-corrected)" in text
    assert "pass = factual_accuracy >= 2 and product_identity_match != false" in text
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert data["models"][0]["pass_rate_estimate"]["raw"]["n"] == len(retest)
    # A file that is not there is a note in the report, not a silent omission.
    (planted / "product_identity" / "outputs.jsonl").unlink()
    assert main([*argv, "--planted-sets", str(planted)]) == 0
    assert (
        "pass-rate estimate not computed (set.toml outputs)" in (folder / "report.md").read_text()
    )
