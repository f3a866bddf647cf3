"""The finale tier: promotion rules, an end-to-end run on a fake judge, the CLI.

The fake judge is an object with `.model` and `.complete(request)`: no HTTP, no cassettes.
It scores by the run name planted in each summary, one table for the primary judge's
sampling and one for the greedy cross-check, so every mean, flag and rate is known by hand.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from judges.calls.backends import JudgeRequest, JudgeResponse, ModelRef, Price
from judges.calls.ledger import CostCapReached, Ledger
from judges.cli.main import main
from judges.core.runner import Call
from judges.finale.cassettes import _ReplayBudget, cassette_path
from judges.finale.config import (
    CROSS,
    PRIMARY,
    Candidate,
    Episode,
    FinaleConfig,
    FinaleError,
    Stratum,
    load_candidates,
    load_config,
    load_episodes,
)
from judges.finale.markdown import METADATA_BEGIN, METADATA_END
from judges.finale.plan import CallSlot
from judges.finale.promotion import (
    BELOW_FLOOR,
    GLOBAL_CAP,
    NO_METRIC,
    UNSTRATIFIED,
    assign_stratum,
    outside_top,
    promote_finalists,
)
from judges.finale.run import run_finale

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "planted_sets" / "finale" / "finale.toml"
DIMS = ("faithfulness", "coverage", "coherence", "fluency")


def config(**overrides: Any) -> FinaleConfig:
    data: dict[str, Any] = {
        "tag": "unit",
        "strata": [
            {"name": "cloud", "match": ["api_"]},
            {"name": "big", "match": ["local_big_"]},
            {"name": "small", "match": ["local_"]},
        ],
        "primary_model": "local:fake-judge",
        "cross_model": "local:fake-judge",
        "cross_temperature": 0.0,
        "cost_cap_usd": None,
    }
    data.update(overrides)
    return FinaleConfig.model_validate(data)


def cand(run: str, metric: float | None, episodes: tuple[str, ...] = ()) -> Candidate:
    metrics = {} if metric is None else {"rougeL_f1": metric}
    summaries = {e: f"<<{run}>> summary of {e}: the guest explains the plan." for e in episodes}
    return Candidate(run, metrics, summaries)


def reasons(promotion: Any, stratum: str) -> dict[str, str]:
    return {r.run: r.reason for r in promotion.stratum(stratum).rejected}


# --------------------------------------------------------------------------- strata


def test_first_match_wins_in_stratum_order() -> None:
    specific_first = (
        Stratum(name="dgx", match=("ollama_phi4", "ollama_qwen35_27b")),
        Stratum(name="mbp", match=("ollama_",)),
    )
    assert assign_stratum("ollama_phi4_v1", specific_first) == "dgx"
    assert assign_stratum("ollama_hermes3_8b_v1", specific_first) == "mbp"
    # The same rules in the other order: the catch-all swallows the specific run.
    assert assign_stratum("ollama_phi4_v1", specific_first[::-1]) == "mbp"
    assert assign_stratum("hybrid_extractive_v1", specific_first) is None


def test_substring_order_within_a_stratum_does_not_matter() -> None:
    a = (Stratum(name="s", match=("x_", "y_")),)
    b = (Stratum(name="s", match=("y_", "x_")),)
    for run in ("x_1", "y_1", "xy_1", "z_1"):
        assert assign_stratum(run, a) == assign_stratum(run, b)


def test_unstratified_runs_are_reported_and_never_promoted() -> None:
    promotion = promote_finalists([cand("api_a", 0.3), cand("mystery_v1", 0.9)], config())
    assert [f.run for f in promotion.finalists] == ["api_a"]
    assert [(r.run, r.reason) for r in promotion.unstratified] == [("mystery_v1", UNSTRATIFIED)]
    assert promotion.as_dict()["unstratified"][0]["metric"] == 0.9


# --------------------------------------------------------------------------- promotion


def test_seed_example_third_below_floor_is_dropped() -> None:
    # Leader 0.31; #3 at 0.20 is materially worse: 0.20 < 0.8 x 0.31 = 0.248.
    candidates = [cand("local_a", 0.31), cand("local_b", 0.27), cand("local_c", 0.20)]
    promotion = promote_finalists(candidates, config())
    small = promotion.stratum("small")
    assert small.leader == "local_a"
    assert small.floor == pytest.approx(0.248)
    assert small.promoted == ("local_a", "local_b")
    assert reasons(promotion, "small") == {"local_c": BELOW_FLOOR}
    assert "0.2000 < 0.2480" in small.rejected[0].detail


def test_a_run_exactly_on_the_floor_is_kept() -> None:
    # 0.8 x 0.30 is 0.24000000000000002 in floating point; 0.24 must still pass.
    promotion = promote_finalists([cand("api_a", 0.30), cand("api_b", 0.24)], config())
    assert promotion.stratum("cloud").promoted == ("api_a", "api_b")


def test_only_the_top_n_go_on_even_above_the_floor() -> None:
    runs = [cand(f"local_{name}", value) for name, value in
            [("a", 0.30), ("b", 0.29), ("c", 0.28), ("d", 0.27), ("e", 0.26)]]  # fmt: skip
    promotion = promote_finalists(runs, config())
    assert promotion.stratum("small").promoted == ("local_a", "local_b", "local_c")
    assert reasons(promotion, "small") == {"local_d": outside_top(3), "local_e": outside_top(3)}
    assert outside_top(3) == "outside top 3"
    smaller = promote_finalists(runs, config(top_per_stratum=2))
    assert reasons(smaller, "small")["local_c"] == "outside top 2"


def test_top_n_applies_before_the_floor() -> None:
    runs = [cand("local_a", 0.30), cand("local_b", 0.29), cand("local_c", 0.10),
            cand("local_d", 0.05)]  # fmt: skip
    found = reasons(promote_finalists(runs, config()), "small")
    assert found == {"local_c": BELOW_FLOOR, "local_d": outside_top(3)}


def test_ties_are_broken_by_run_name() -> None:
    runs = [cand("local_b", 0.25), cand("local_d", 0.25), cand("local_a", 0.25),
            cand("local_c", 0.25)]  # fmt: skip
    promotion = promote_finalists(runs, config())
    assert promotion.stratum("small").promoted == ("local_a", "local_b", "local_c")
    assert reasons(promotion, "small") == {"local_d": outside_top(3)}


def test_global_cap_trims_the_union_by_metric_then_name() -> None:
    runs = [
        cand("api_a", 0.40), cand("api_b", 0.35),
        cand("local_big_a", 0.38), cand("local_big_b", 0.33),
        cand("local_x", 0.33), cand("local_y", 0.30),
    ]  # fmt: skip
    promotion = promote_finalists(runs, config(global_cap=4))
    assert [f.run for f in promotion.finalists] == ["api_a", "local_big_a", "api_b", "local_big_b"]
    assert [f.global_rank for f in promotion.finalists] == [1, 2, 3, 4]
    # local_big_b and local_x tie at 0.33 across strata: the name decides who makes the cut.
    assert reasons(promotion, "small") == {"local_x": GLOBAL_CAP, "local_y": GLOBAL_CAP}
    assert "#5 of 6" in promotion.stratum("small").rejected[0].detail
    assert promotion.stratum("small").promoted == ()
    assert promotion.stratum("small").leader == "local_x"


def test_cross_check_goes_to_the_top_finalists_of_each_stratum() -> None:
    runs = [cand("api_a", 0.40), cand("api_b", 0.39), cand("api_c", 0.38),
            cand("local_z", 0.20)]  # fmt: skip
    promotion = promote_finalists(runs, config())
    assert [f.run for f in promotion.cross_checked] == ["api_a", "api_b", "local_z"]
    assert [f.run for f in promote_finalists(runs, config(cross_top_per_stratum=0)).finalists]
    assert promote_finalists(runs, config(cross_top_per_stratum=0)).cross_checked == ()


def test_missing_metric_and_empty_stratum() -> None:
    promotion = promote_finalists([cand("api_a", 0.3), cand("api_b", None)], config())
    assert reasons(promotion, "cloud") == {"api_b": NO_METRIC}
    big = promotion.stratum("big")
    assert (big.leader, big.floor, big.promoted, big.rejected) == (None, None, (), ())


def test_promotion_does_not_depend_on_input_order() -> None:
    runs = [cand(f"{prefix}{i}", round(0.1 + 0.01 * i, 2))
            for prefix in ("api_", "local_big_", "local_") for i in range(6)]  # fmt: skip
    expected = promote_finalists(runs, config(global_cap=7)).as_dict()
    shuffled = list(runs)
    random.Random(7).shuffle(shuffled)
    assert promote_finalists(shuffled, config(global_cap=7)).as_dict() == expected


def test_dotted_metric_names_read_nested_tables() -> None:
    c = Candidate("api_a", {"vs_reference": {"rougeL_f1": 0.3}, "flag": True}, {})
    assert c.metric("vs_reference.rougeL_f1") == 0.3
    assert c.metric("rougeL_f1") is None
    assert c.metric("flag") is None  # a bool is not a metric


# --------------------------------------------------------------------------- loading


def test_config_validation_names_the_problem(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unique"):
        config(strata=[{"name": "a", "match": ["x"]}, {"name": "a", "match": ["y"]}])
    with pytest.raises(ValueError, match="backend:model"):
        config(cross_model="gemini-2.5-pro")
    with pytest.raises(ValueError, match="empty substring"):
        config(strata=[{"name": "a", "match": [""]}])
    bad = tmp_path / "finale.toml"
    bad.write_text('tag = "x"\nglobal_cap = 0\n[[strata]]\nname = "a"\nmatch = ["x"]\n')
    with pytest.raises(FinaleError, match=r"(?s)finale\.toml.*global_cap"):
        load_config(bad)
    assert config().with_cost_cap(3.0).cost_cap_usd == 3.0
    with pytest.raises(ValueError):
        config().with_cost_cap(-1.0)


def test_loaders_report_file_and_line(tmp_path: Path) -> None:
    episodes = tmp_path / "episodes.jsonl"
    episodes.write_text('{"episode_id": "e1", "transcript": "A: hi"}\n{"episode_id": "e2"}\n')
    with pytest.raises(FinaleError, match=r"episodes\.jsonl:2"):
        load_episodes(episodes)
    run = tmp_path / "candidates" / "api_a"
    run.mkdir(parents=True)
    (run / "metrics.json").write_text("[1, 2]")
    with pytest.raises(FinaleError, match="JSON object"):
        load_candidates(tmp_path / "candidates")
    (run / "metrics.json").write_text('{"rougeL_f1": 0.3}')
    (run / "predictions.jsonl").write_text('{"episode_id": "e1", "summary": "S."}\n')
    (loaded,) = load_candidates(tmp_path / "candidates")
    assert (loaded.run, loaded.metric("rougeL_f1"), dict(loaded.summaries)) == (
        "api_a", 0.3, {"e1": "S."}
    )  # fmt: skip


def test_shipped_set_loads_and_is_small() -> None:
    cfg = load_config(SHIPPED)
    candidates = load_candidates(SHIPPED.parent / cfg.candidates)
    episodes = load_episodes(SHIPPED.parent / cfg.episodes)
    assert len(candidates) == 7 and len(episodes) == 2
    for episode in episodes:
        assert 120 <= len(episode.transcript.split()) <= 180
    for candidate in candidates:
        assert sorted(candidate.summaries) == sorted(e.episode_id for e in episodes)
        for summary in candidate.summaries.values():
            assert 40 <= len(summary.split()) <= 60, (candidate.run, summary)


# --------------------------------------------------------------------------- the fake judge

# Scores per run: (faithfulness, coverage, coherence, fluency).
PRIMARY_SCORES = {
    "api_alpha_v1": (5, 4, 4, 5),  # overall 4.5
    "api_beta_v1": (4, 4, 4, 4),  # 4.0
    "local_big_x_v1": (3, 3, 3, 3),  # 3.0: ranked below big_y despite the higher ROUGE
    "local_big_y_v1": (4, 4, 4, 4),  # 4.0
    "api_gamma_v1": (2, 3, 3, 3),  # 2.75; third in cloud, so not cross-checked
    "local_small_z_v1": (3, 4, 3, 2),  # 3.0; its second episode never parses
}
CROSS_SCORES = {
    "api_alpha_v1": (4, 3, 3, 4),  # 3.5: difference 1.0 > 0.5, contested; all adjacent
    "api_beta_v1": (4, 4, 4, 4),  # agrees exactly
    "local_big_x_v1": (5, 3, 3, 3),  # 3.5: difference exactly 0.5, not contested; faith off by 2
    "local_big_y_v1": (4, 4, 4, 4),
    "local_small_z_v1": (3, 4, 3, 2),  # agrees on the one episode that parses
}
EPISODES = (Episode("e1", "HOST: Welcome. GUEST: We fixed the roof first."),
            Episode("e2", "HOST: And next? GUEST: A second oven, not a second shop."))  # fmt: skip
METRICS = {"api_alpha_v1": 0.30, "api_beta_v1": 0.27, "api_gamma_v1": 0.25, "local_big_x_v1": 0.28,
           "local_big_y_v1": 0.26, "local_small_z_v1": 0.20, "mystery_v1": 0.50,
           "local_small_w_v1": 0.10}  # fmt: skip


class FakeJudge:
    """Replies as the geval judge would, from the tables above; counts what it was asked."""

    def __init__(self, tokens: int = 100) -> None:
        self.model = ModelRef.parse("local:fake-judge")
        self.tokens = tokens
        self.temperatures: list[float | None] = []

    def complete(self, request: JudgeRequest) -> JudgeResponse:
        self.temperatures.append(request.temperature)
        dim = request.schema_name.removeprefix("geval_")
        match = re.search(r"<<([a-z0-9_]+)>> summary of (e\d)", request.prompt)
        assert match, "the summary reaches the prompt"
        run, episode = match.groups()
        if run == "local_small_z_v1" and episode == "e2":
            text = "I think this summary is rather good."
        else:
            table = CROSS_SCORES if request.temperature == 0.0 else PRIMARY_SCORES
            text = json.dumps({"score": table[run][DIMS.index(dim)], "rationale": "fake"})
        return JudgeResponse(text, False, self.tokens, self.tokens)


FREE = Price(0.0, 0.0)


def fake_factory(
    backend: FakeJudge, out_dir: Path, price: Price = FREE
) -> tuple[Any, list[CallSlot]]:
    seen: list[CallSlot] = []

    @contextmanager
    def factory(slot: CallSlot) -> Iterator[Call]:
        assert (out_dir / "promotion.json").is_file(), "promotion.json is written first"
        seen.append(slot)
        yield Call(backend=backend, price=price, live=True, ledger=slot.ledger)

    return factory, seen


def finale_candidates() -> list[Candidate]:
    ids = tuple(e.episode_id for e in EPISODES)
    return [cand(run, value, ids) for run, value in METRICS.items()]


def run(out_dir: Path, **overrides: Any) -> Any:
    price = overrides.pop("price", FREE)
    backend = FakeJudge()
    factory, seen = fake_factory(backend, out_dir, price)
    result = run_finale(
        config(**overrides), finale_candidates(), EPISODES,
        judge_call_factory=factory, out_dir=out_dir,
    )  # fmt: skip
    return result, backend, seen


def entry(report: dict[str, Any], run_name: str) -> dict[str, Any]:
    return next(e for v in report["verdicts"] for e in v["finalists"] if e["run"] == run_name)


def strip_metadata(text: str) -> str:
    return re.sub(re.escape(METADATA_BEGIN) + ".*?" + re.escape(METADATA_END), "", text, flags=re.S)


# --------------------------------------------------------------------------- run_finale


def test_run_finale_end_to_end(tmp_path: Path) -> None:
    result, backend, seen = run(tmp_path)
    report = result.report
    files = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("."))
    assert files == ["finale_report.json", "finale_report.md", "finalists.jsonl", "promotion.json"]

    # Plan: 6 finalists x 2 episodes primary; the top 2 of each stratum cross-checked.
    assert [f.run for f in result.promotion.finalists] == [
        "api_alpha_v1", "local_big_x_v1", "api_beta_v1", "local_big_y_v1", "api_gamma_v1",
        "local_small_z_v1",
    ]  # fmt: skip
    assert [(s.role, s.finalist, s.episode_id) for s in seen][:3] == [
        (PRIMARY, "api_alpha_v1", "e1"), (PRIMARY, "api_alpha_v1", "e2"),
        (PRIMARY, "local_big_x_v1", "e1"),
    ]  # fmt: skip
    assert sum(s.role == CROSS for s in seen) == 10 and len(seen) == 22
    assert {s.sampling.temperature for s in seen if s.role == CROSS} == {0.0}  # type: ignore[union-attr]
    assert all(s.sampling is None for s in seen if s.role == PRIMARY)
    assert backend.temperatures.count(0.0) == 9 * 4 + 3
    assert {row.run for row in result.rows} == {PRIMARY, CROSS}

    alpha = entry(report, "api_alpha_v1")
    assert alpha["primary"]["dimensions"] == dict(zip(DIMS, (5.0, 4.0, 4.0, 5.0), strict=True))
    assert alpha["primary"]["overall"] == 4.5 and alpha["cross"]["overall"] == 3.5
    assert alpha["difference"] == 1.0 and alpha["contested"] is True
    assert alpha["agreement"]["exact_or_adjacent"]["successes"] == 8
    assert alpha["agreement"]["exact_or_adjacent"]["n"] == 8

    big_x = entry(report, "local_big_x_v1")
    assert big_x["difference"] == -0.5 and big_x["contested"] is False  # > 0.5, not >=
    assert big_x["agreement"]["exact_or_adjacent"]["successes"] == 6
    assert big_x["agreement"]["by_dimension"]["faithfulness"]["successes"] == 0
    assert report["contested"] == ["api_alpha_v1"]
    pooled = report["agreement"]["pooled"]
    assert (pooled["successes"], pooled["n"]) == (8 + 8 + 6 + 8 + 4, 36)

    # Ranked by the primary overall mean, not by ROUGE.
    big = next(v for v in report["verdicts"] if v["stratum"] == "big")
    assert [(e["rank"], e["run"]) for e in big["finalists"]] == [
        (1, "local_big_y_v1"), (2, "local_big_x_v1")
    ]  # fmt: skip

    gamma = entry(report, "api_gamma_v1")
    assert gamma["cross"] is None and gamma["contested"] is None and gamma["agreement"] is None
    small_z = entry(report, "local_small_z_v1")
    assert small_z["primary"]["scored"] == 1 and small_z["cross"]["scored"] == 1
    assert small_z["primary"]["errors"] == {"unparseable": 1}
    assert small_z["agreement"]["paired_episodes"] == 1 and small_z["contested"] is False
    assert report["errors"]["local_small_z_v1"] == {
        PRIMARY: {"unparseable": 1}, CROSS: {"unparseable": 1}
    }  # fmt: skip
    assert report["errors"]["api_gamma_v1"] == {PRIMARY: {}}
    assert report["complete"] is True and report["missing"]["judgements"] == 0
    assert report["cost"]["by_judge"][PRIMARY]["judge_calls"] == 11 * 4 + 3
    assert report["promotion"]["unstratified"][0]["run"] == "mystery_v1"

    lines = [json.loads(x) for x in (tmp_path / "finalists.jsonl").read_text().splitlines()]
    assert len(lines) == 22 * 4
    assert set(lines[0]) == {"run", "stratum", "episode_id", "dimension", "judge", "model",
                             "prompt_version", "score", "status"}  # fmt: skip
    failed = [x for x in lines if x["status"] != "ok"]
    assert {(x["run"], x["episode_id"], x["status"], x["score"]) for x in failed} == {
        ("local_small_z_v1", "e2", "unparseable", None)
    }
    assert len(failed) == 8

    md = (tmp_path / "finale_report.md").read_text()
    assert md.startswith("# Finale sweep \u2014 unit\n\n_Total spend: $0.00 (cap none)_\n")
    assert "## Verdicts by stratum" in md and "## Promotion details" in md
    assert "| Rank | Run | Faith | Cov | Coh | Flu | Mean | Contested? |" in md
    assert "| 1 | api_alpha_v1 | 5.00 | 4.00 | 4.00 | 5.00 | 4.50 | **yes** (+1.00) |" in md
    assert "| 1 | local_small_z_v1 (1/2 episodes) |" in md
    assert "local_small_w_v1 (0.1000): below floor" in md
    assert "| 3 | api_gamma_v1 | 2.00 | 3.00 | 3.00 | 3.00 | 2.75 | not cross-checked |" in md
    assert "| local_small_z_v1 | primary | unparseable 1 |" in md
    assert "What is missing" not in md


def test_artifacts_are_deterministic_apart_from_the_metadata(tmp_path: Path) -> None:
    first, _, _ = run(tmp_path / "a")
    run(tmp_path / "b")
    for name in ("promotion.json", "finalists.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    reports = [json.loads((tmp_path / d / "finale_report.json").read_text()) for d in "ab"]
    assert set(reports[0].pop("run_metadata")) >= {"generated_at", "mode", "source"}
    reports[1].pop("run_metadata")
    assert reports[0] == reports[1]
    mds = [strip_metadata((tmp_path / d / "finale_report.md").read_text()) for d in "ab"]
    assert mds[0] == mds[1]
    assert first.report["run_metadata"]["mode"] == "live (recorded)"


def test_cost_cap_stops_mid_run_and_keeps_partial_artifacts(tmp_path: Path) -> None:
    # 100 output tokens at $1250/M = $0.125 a call, and each call reserves its worst case,
    # max_tokens 160 = $0.20: a call starts while spent + 0.20 <= 1.40, so ten calls run,
    # i.e. two whole judgements and half of the third (local_big_x_v1 on e1).
    result, backend, _ = run(tmp_path, price=Price(0.0, 1250.0), cost_cap_usd=1.40)
    report = result.report
    statuses = [(row.item_id, row.status) for row in result.rows]
    assert statuses[:3] == [
        ("api_alpha_v1/e1", "ok"), ("api_alpha_v1/e2", "ok"), ("local_big_x_v1/e1", "cost_cap")
    ]  # fmt: skip
    assert all(status == "cost_cap" for _, status in statuses[2:])
    assert len(backend.temperatures) == 10
    assert result.complete is False and report["complete"] is False
    assert report["cost"]["total_usd"] == 1.25 and report["cost"]["cap_reached"] is True
    assert report["missing"]["judgements"] == 20
    assert report["missing"]["dimension_scores"] == 80
    assert {"run": "local_small_z_v1", "episode_id": "e2", "judge": PRIMARY} in (
        report["missing"]["items"]
    )

    assert (tmp_path / "promotion.json").is_file()
    lines = [json.loads(x) for x in (tmp_path / "finalists.jsonl").read_text().splitlines()]
    assert len(lines) == 88
    assert sum(x["status"] == "ok" for x in lines) == 8
    assert all(x["score"] is None for x in lines if x["status"] == "cost_cap")

    alpha = entry(report, "api_alpha_v1")
    assert alpha["primary"]["overall"] == 4.5 and alpha["cross"]["missing"] == 2
    assert alpha["contested"] is None  # nothing paired: not flagged either way
    assert entry(report, "local_big_x_v1")["primary"]["missing"] == 2

    md = (tmp_path / "finale_report.md").read_text()
    assert "_Total spend: $1.25 (cap $1.40)_" in md
    assert "**Incomplete: the cost cap stopped the run.** 20 of 22 judgements" in md
    assert "## What is missing" in md
    assert "| local_big_y_v1 | e2 | primary |" in md
    assert "| api_alpha_v1 | e1 | cross |" in md
    assert "n/a (no paired scores)" in md


def test_cost_cap_of_zero_spend_never_bites_a_free_judge(tmp_path: Path) -> None:
    result, _, _ = run(tmp_path, cost_cap_usd=0.01)
    assert result.complete


def test_a_cross_check_identical_to_the_primary_is_refused(tmp_path: Path) -> None:
    # geval's production temperature is 0.3: the same model at 0.3 would only repeat itself.
    with pytest.raises(FinaleError, match="only repeat"):
        run(tmp_path, cross_temperature=0.3)
    assert (tmp_path / "promotion.json").is_file()


def test_a_finalist_without_a_summary_is_an_error(tmp_path: Path) -> None:
    candidates = finale_candidates()
    candidates[0] = cand("api_alpha_v1", 0.30, ("e1",))
    factory, seen = fake_factory(FakeJudge(), tmp_path)
    with pytest.raises(FinaleError, match="api_alpha_v1/e2"):
        run_finale(config(), candidates, EPISODES, judge_call_factory=factory, out_dir=tmp_path)
    assert seen == []


def test_replay_budget_stops_where_the_recording_stopped(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl", cap_usd=0.25)
    budget = _ReplayBudget(FakeJudge(), Price(1250.0, 0.0), ledger)
    request = JudgeRequest("sys", "<<api_beta_v1>> summary of e1", "geval_coverage", {}, 16)
    budget.complete(request)
    budget.complete(request)
    with pytest.raises(CostCapReached):
        budget.complete(request)


def test_cassette_paths_separate_roles(tmp_path: Path) -> None:
    model = ModelRef.parse("local:smollm2-135m")
    primary = cassette_path(tmp_path, model, "ollama_phi4_v1", "ep-01", PRIMARY)
    cross = cassette_path(tmp_path, model, "ollama_phi4_v1", "ep-01", CROSS)
    assert primary == tmp_path / "local-smollm2-135m" / "ollama_phi4_v1" / "ep-01.yaml"
    assert cross == primary.with_name("ep-01.cross.yaml")


# --------------------------------------------------------------------------- CLI


def test_cli_dry_run_on_the_shipped_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["finale", "--dry-run", "--config", str(SHIPPED), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    promotion = json.loads((tmp_path / "promotion.json").read_text())
    assert [f["run"] for f in promotion["finalists"]] == [
        "anthropic_sonnet_v1", "ollama_qwen35_27b_v1", "ollama_mistral-small_24b_v1",
        "ollama_phi4_v1", "ollama_hermes3_8b_v1",
    ]  # fmt: skip
    assert [f["run"] for f in promotion["finalists"] if f["cross_check"]] == [
        "anthropic_sonnet_v1", "ollama_qwen35_27b_v1", "ollama_mistral-small_24b_v1",
        "ollama_hermes3_8b_v1",
    ]  # fmt: skip
    strata = {s["name"]: s for s in promotion["strata"]}
    assert {r["run"]: r["reason"] for r in strata["dgx_le_40b"]["rejected"]} == {
        "ollama_gemma3_27b_v1": "outside top 3"
    }
    assert {r["run"]: r["reason"] for r in strata["mbp_le_14b"]["rejected"]} == {
        "ollama_llama32_3b_v1": "below floor"
    }
    assert strata["mbp_le_14b"]["floor"] == 0.2 and strata["dgx_le_40b"]["floor"] == 0.232
    assert promotion["plan"]["judge_calls"] == (5 + 4) * 2 * 4
    assert "outside top 3" in out and "below floor" in out
    assert "judge calls for a full run: 72" in out
    assert [p.name for p in tmp_path.iterdir()] == ["promotion.json"]


def test_cli_replay_without_cassettes_names_the_record_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["finale", "--config", str(SHIPPED), "--out", str(tmp_path / "out"),
            "--cassettes", str(tmp_path / "none")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "python -m judges finale --record" in err
    assert "local-smollm2-135m/anthropic_sonnet_v1/ep-01-harbor-road.yaml" in err
    assert not (tmp_path / "out").exists()


def test_cli_rejects_a_bad_cost_cap(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["finale", "--dry-run", "--config", str(SHIPPED), "--out", str(tmp_path),
            "--cost-cap", "-1"]  # fmt: skip
    assert main(argv) == 2
    assert "cost_cap_usd" in capsys.readouterr().err
