"""The evaluator leaderboard: each figure against an independent computation on the project's
imported copy of the LLMBar release (items.jsonl and the cassettes' raw replies, read here
with yaml and json, not through the harness), against LLMBar's published figures, and on
made-up judges whose biases are known.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import yaml

from judges.__main__ import main
from judges.core.results import JudgementRow, Usage, read_jsonl
from judges.reports import terminal
from judges.reports.render.github import summary_markdown
from judges.reports.sections.leaderboard import leaderboard_text
from judges.reports.write import rebuild_reports
from judges.stats.fitness.evaluator import spend
from judges.stats.fitness.leaderboard import SetLeaderboard, leaderboards
from judges.stats.fitness.pairwise import Judged
from tests._pairwise_rows import pairwise_row

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "planted_sets/pairwise/releases/llmbar/published/Vanilla"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# The label each position names, per order: original shows output_1 as (a).
_LABEL = {"original": {"a": "1", "b": "2"}, "swapped": {"a": "2", "b": "1"}}


def _binomial_two_sided(k: int, n: int) -> float:
    """Exact two-sided binomial p at 0.5, by summing the tail (the symmetric case)."""
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(k, n - k) + 1)) / 2**n
    return min(1.0, 2 * tail)


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def _is_list(text: str) -> bool:
    """Two or more lines opening with a bullet or a number: written without a regex."""
    count = 0
    for line in text.splitlines():
        stripped = line.lstrip()
        head, _, rest = stripped.partition(" ")
        marker = head in ("-", "*", "+", "\u2022") or (
            head[:-1].isdigit() and head[-1:] in (".", ")")
        )
        count += bool(marker and rest.strip())
    return count >= 2


def _raw_release() -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, dict[str, Any]]]]:
    """items: id -> item line; replies: model -> id -> order -> label or None."""
    items = {}
    for line in (ROOT / "planted_sets/pairwise/items.jsonl").read_text().splitlines():
        item = json.loads(line)
        items[item["id"]] = item
    replies: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for path in sorted((ROOT / "cassettes/pairwise/0.1").glob("imported-*/*.yaml")):
        model = path.parent.name.removeprefix("imported-")
        item_id = "-".join(path.stem.split("-")[:2])
        orders = {}
        for exchange in yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)["interactions"]:
            order = re.search(r"pairwise prompt 0\.1: (\w+)", exchange["request"]["body"])[1]  # type: ignore[index]
            body = json.loads(exchange["response"]["body"]["string"])
            winner = json.loads(body["choices"][0]["message"]["content"])["winner"]
            orders[order] = None if winner is None else _LABEL[order][winner]
        replies[model][item_id] = orders
    return items, replies


@pytest.fixture(scope="module")
def raw() -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, dict[str, Any]]]]:
    return _raw_release()


@pytest.fixture(scope="module")
def boards() -> dict[str, SetLeaderboard]:
    from judges.core.spec import load_catalog
    from judges.sets.planted import load_planted_set
    from judges.verdicts.pairwise import outputs_of

    planted = load_planted_set(ROOT / "planted_sets", load_catalog()["pairwise"])
    rows = read_jsonl(ROOT / "reports/pairwise/0.1/results.jsonl")
    return {b.category: b for b in leaderboards(rows, outputs_of(planted.items))}


def _independent(items: dict[str, Any], mine: dict[str, dict[str, Any]], category: str) -> dict:
    ids = sorted(i for i in mine if items[i]["category"] == category)
    gold = {i: str(items[i]["expect"][0]["value"]) for i in ids}
    out: dict[str, Any] = {"n": len(ids)}
    judgements = [(i, order, mine[i][order]) for i in ids for order in ("original", "swapped")]
    named = [(i, order, w) for i, order, w in judgements if w is not None]
    out["right"] = sum(w == gold[i] for i, _, w in named)
    out["scores"] = {
        i: sum(mine[i][o] == gold[i] for o in ("original", "swapped")) / 2 for i in ids
    }
    out["parsed"] = len(named)
    first_shown = {"original": "1", "swapped": "2"}
    out["first"] = (sum(w == first_shown[o] for _, o, w in named), len(named))
    first_twice = sum(mine[i]["original"] == "1" and mine[i]["swapped"] == "2" for i in ids)
    second_twice = sum(mine[i]["original"] == "2" and mine[i]["swapped"] == "1" for i in ids)
    out["position_p"] = _binomial_two_sided(first_twice, first_twice + second_twice)
    for feature, owner_of in (
        ("longer", lambda a, b: None if len(a) == len(b) else ("1" if len(a) > len(b) else "2")),
        (
            "list",
            lambda a, b: None if _is_list(a) == _is_list(b) else ("1" if _is_list(a) else "2"),
        ),
    ):
        owners = {
            i: owner_of(items[i]["inputs"]["output_1"], items[i]["inputs"]["output_2"]) for i in ids
        }
        owned = [i for i in ids if owners[i] is not None]
        picks = [(i, w) for i, _, w in named if owners[i] is not None]
        more = less = 0
        for i in owned:
            ws = [mine[i][o] for o in ("original", "swapped") if mine[i][o] is not None]
            if ws:
                share = sum(w == owners[i] for w in ws) / len(ws)
                more += share > (gold[i] == owners[i])
                less += share < (gold[i] == owners[i])
        out[feature] = {
            "judge": (sum(w == owners[i] for i, w in picks), len(picks)),
            "gold": (sum(gold[i] == owners[i] for i in owned), len(owned)),
            "p": _binomial_two_sided(more, more + less),
        }
    return out


CATEGORIES = ("adversarial_gptinst", "adversarial_neighbor", "natural")


@pytest.mark.parametrize("category", CATEGORIES)
def test_every_figure_matches_an_independent_count_on_the_released_replies(
    category: str, raw: Any, boards: dict[str, SetLeaderboard]
) -> None:
    items, replies = raw
    board = boards[category]
    assert {f.model for f in board.entries} == {f"imported:{m}" for m in replies}
    for figures in board.entries:
        model = figures.model.removeprefix("imported:")
        ref = _independent(items, replies[model], category)
        assert (figures.items, figures.right) == (ref["n"], ref["right"])
        assert figures.agreement.value == pytest.approx(ref["right"] / (2 * ref["n"]))
        published = json.loads((RELEASE / category / f"{model}.json").read_text())
        assert f"{100 * figures.agreement.value}%" == published["correct_average"]
        assert (figures.parsed.successes, figures.parsed.n) == (ref["parsed"], 2 * ref["n"])
        first = figures.position.first
        assert (first.successes, first.n) == ref["first"]
        assert (first.low, first.high) == pytest.approx(_wilson(*ref["first"]))
        assert figures.position.test.p_value == pytest.approx(ref["position_p"], rel=1e-9)
        for feature, pref in (("longer", figures.length), ("list", figures.lists)):
            assert pref is not None
            assert (pref.judge.successes, pref.judge.n) == ref[feature]["judge"], feature
            assert (pref.gold.successes, pref.gold.n) == ref[feature]["gold"], feature
            assert pref.test.p_value == pytest.approx(ref[feature]["p"], rel=1e-9), feature
        assert figures.spend.usd_per_1000 is None and "imported" in figures.spend.cost_unknown


@pytest.mark.parametrize("category", CATEGORIES)
def test_ranking_and_neighbour_tests_follow_the_items(
    category: str, raw: Any, boards: dict[str, SetLeaderboard]
) -> None:
    items, replies = raw
    board = boards[category]
    values = [f.agreement.value for f in board.entries]
    assert values == sorted(values, reverse=True) and len(board.entries) == 5
    assert len(board.neighbours) == 4
    for upper, lower, pair in zip(board.entries, board.entries[1:], board.neighbours, strict=False):
        a = _independent(items, replies[upper.model.removeprefix("imported:")], category)
        b = _independent(items, replies[lower.model.removeprefix("imported:")], category)
        better = sum(a["scores"][i] > b["scores"][i] for i in a["scores"])
        worse = sum(a["scores"][i] < b["scores"][i] for i in a["scores"])
        assert (pair.upper, pair.lower) == (upper.model, lower.model)
        assert (pair.test.b, pair.test.c) == (better, worse)
        assert pair.test.p_value == pytest.approx(_binomial_two_sided(better, better + worse))


def _judged(pick: Any, n: int = 40) -> tuple[list[Judged], dict[str, tuple[str, str]]]:
    """n items, gold alternating; output_1 always the longer; `pick(item, order)`."""
    items, outputs = [], {}
    for k in range(n):
        gold = "1" if k % 2 else "2"
        item_id = f"IT-{k:03d}"
        items.append(Judged(item_id, "set", gold, pick(gold, "original"), pick(gold, "swapped")))
        outputs[item_id] = ("a long answer " * 5, "short")
    return items, outputs


def _rows(items: list[Judged], model: str) -> list[JudgementRow]:
    return [
        pairwise_row("1.0", j.item_id, "set", j.gold, (j.original, j.swapped)).model_copy(  # type: ignore[arg-type]
            update={"model": model}
        )
        for j in items
    ]


def test_a_position_follower_and_a_length_lover_are_caught_and_a_fair_judge_is_not() -> None:
    follower, outputs = _judged(lambda gold, order: "1" if order == "original" else "2")
    lover, _ = _judged(lambda gold, order: "1")  # output_1 is always the longer
    fair, _ = _judged(lambda gold, order: gold)
    rows = _rows(follower, "x:follower") + _rows(lover, "x:lover") + _rows(fair, "x:fair")
    (board,) = leaderboards(rows, outputs)
    by = {f.model: f for f in board.entries}
    assert [f.model for f in board.entries] == ["x:fair", "x:follower", "x:lover"]
    assert by["x:follower"].position.first.rate == 1.0
    assert by["x:follower"].position.test.b == 40 and by["x:follower"].position.test.p_value < 1e-9
    assert by["x:fair"].position.first.rate == 0.5 and by["x:fair"].position.test.p_value == 1.0
    assert by["x:lover"].length.judge.rate == 1.0 and by["x:lover"].length.gold.rate == 0.5
    assert by["x:lover"].length.test.b == 20 and by["x:lover"].length.test.c == 0
    assert by["x:lover"].length.test.p_value < 1e-5
    assert by["x:fair"].length.test.n == 0 and by["x:fair"].length.test.p_value == 1.0
    assert by["x:fair"].lists is None  # no output has a list
    # The fair judge is right on all 40 items, the follower and the lover on half of each.
    assert board.neighbours[0].test.b == 40 and board.neighbours[0].test.p_value < 1e-9


def test_price_is_per_thousand_judgements_and_unknown_when_imported() -> None:
    rows = [
        pairwise_row("1.0", f"IT-{k}", "set", "1", ("1", "1")).model_copy(
            update={"model": "openai:m", "usage": Usage(calls=2, cost_usd=0.001)}
        )
        for k in range(4)
    ]
    assert spend(rows).usd_per_1000 == pytest.approx(0.5)
    assert spend(rows).seconds_per_1000 is None and "not recorded" in spend(rows).time_unknown
    live = [r.model_copy(update={"live": True, "latency_s": 3.0}) for r in rows]
    assert spend(live).seconds_per_1000 == pytest.approx(1500.0)
    imported = [r.model_copy(update={"model": "imported:GPT-4"}) for r in rows]
    assert spend(imported).usd_per_1000 is None
    assert spend(imported).cost_unknown.startswith("unknown: imported")


def test_the_command_prints_the_five_judges_ranked_on_each_set(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["leaderboard", "pairwise", "--version", "0.1"]) == 0
    out = capsys.readouterr().out
    for category in CATEGORIES:
        assert f"pairwise prompt 0.1, {category} (" in out
    natural = out.split("natural (")[1]
    ranked = re.findall(r"^(\d)\s+(imported:\S+)\s+(\d+\.\d)%", natural, re.MULTILINE)
    assert ranked[:2] == [("1", "imported:GPT-4", "95.5"), ("2", "imported:PaLM2", "83.0")]
    assert len(ranked) == 5 and "nan" not in out
    assert "USD: unknown: imported" in out
    assert main(["leaderboard", "pairwise", "--version", "9.9"]) == 2
    assert "no prompt version 9.9" in capsys.readouterr().err
    assert main(["leaderboard", "product_identity"]) == 2
    assert "not a pairwise judge" in capsys.readouterr().err


def test_the_built_in_pairwise_reports_carry_the_leaderboard_and_read_right(tmp_path: Path) -> None:
    for version in ("0.1", "1.0"):
        target = tmp_path / "reports/pairwise" / version
        target.mkdir(parents=True)
        shutil.copy(ROOT / "reports/pairwise" / version / "results.jsonl", target)
    rebuild_reports(tmp_path / "reports", ROOT / "planted_sets", "pairwise")
    folder = tmp_path / "reports/pairwise"
    report = json.loads((folder / "0.1/report.json").read_text())
    natural = next(b for b in report["pairwise"]["leaderboard"] if b["category"] == "natural")
    assert [e["model"] for e in natural["ranking"]][:2] == ["imported:GPT-4", "imported:PaLM2"]
    assert "Leaderboard: which judge model to choose" in (folder / "0.1/index.html").read_text()
    markdown = (folder / "0.1/report.md").read_text()
    assert "### Leaderboard, natural (100 items, 5 models)" in markdown
    # Every chance p-value names its side; none is shown bare as the smaller of the two.
    chance_cells = re.findall(r"(?:chance|too few to test) \((.+?)\) \| \d+ \|$", markdown, re.M)
    assert len(chance_cells) == 15
    assert all("one-sided p(better) " in c for c in chance_cells)
    assert all(", p(worse) " in c for c in chance_cells)
    # 1.0 judges the 16 items set.toml names: complete, so its verdict is not INCOMPLETE.
    small = json.loads((folder / "1.0/report.json").read_text())
    assert not small["verdict"].startswith("INCOMPLETE"), small["verdict"]
    assert all(not m["missing_items"] for m in small["models"])
    text = (folder / "1.0/report.md").read_text()
    assert "nan" not in text.replace("nano", "")
    assert "sees only a drop" not in text and "detects 0/13: there is no detection" in text
    assert "adversarial_gptinst | 12 |" not in text  # 13 items everywhere


def test_incomplete_gives_one_reason_in_every_format(tmp_path: Path) -> None:
    """A recording missing one item set.toml asks for: the same words everywhere."""
    target = tmp_path / "reports/pairwise/1.0"
    target.mkdir(parents=True)
    lines = (ROOT / "reports/pairwise/1.0/results.jsonl").read_text().splitlines()
    (target / "results.jsonl").write_text("\n".join(lines[1:]) + "\n")
    built = rebuild_reports(tmp_path / "reports", ROOT / "planted_sets", "pairwise")
    reason = "1 item set.toml asks for not judged"
    assert json.loads((target / "report.json").read_text())["verdict"] == f"INCOMPLETE: {reason}"
    assert f"INCOMPLETE: {reason}" in (target / "report.md").read_text()
    banner = f'INCOMPLETE<span class="decides">{reason}</span>'
    assert banner in (target / "index.html").read_text()
    (folder,) = built.folders
    (model,) = folder.models
    assert terminal.model_line(model, "pairwise", "1.0").endswith(f"INCOMPLETE: {reason}")
    assert f"INCOMPLETE: {reason} :x:" in summary_markdown([folder])


def test_the_terminal_table_tells_no_test_from_the_last_rank() -> None:
    same, outputs = _judged(lambda gold, order: gold)
    (board,) = leaderboards(_rows(same, "x:one") + _rows(same, "x:two"), outputs)
    lines = leaderboard_text(board, "pairwise", "1.0")
    assert lines[0] == "pairwise prompt 1.0, set (40 items, 2 models), ranked by agreement:"
    first, second = lines[2], lines[3]
    assert first.startswith("1  x:one") and first.endswith("no test")  # alike on every item
    assert second.startswith("2  x:two") and second.endswith("  -")
    assert "nan" not in "\n".join(lines)


def test_models_of_two_prompt_versions_on_the_same_items_are_ranked_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two strategies filed under two prompt versions, on the same items: each version's
    board, then one board ranking both (issue 47); a model on other items stays apart."""
    monkeypatch.chdir(ROOT)
    ids = ["NATU-001", "NATU-002", "NATU-003", "NATU-004"]
    judged = {
        "0.1": {"imported:A": [("1", "1"), ("2", "2"), ("1", "1"), ("2", "1")]},
        "1.0": {"imported:B": [("1", "2"), ("2", "2"), ("2", "2"), ("1", "1")],
                "imported:C": [("1", "1")]},
    }  # fmt: skip
    for version, models in judged.items():
        rows = [
            pairwise_row(version, item, "natural", "1", winners).model_copy(update={"model": model})
            for model, all_winners in models.items()
            for item, winners in zip(ids, all_winners, strict=False)
        ]
        folder = tmp_path / "pairwise" / version
        folder.mkdir(parents=True)
        (folder / "results.jsonl").write_text(
            "".join(r.model_dump_json() + "\n" for r in rows), encoding="utf-8"
        )
    assert main(["leaderboard", "pairwise", "--reports", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    together = out.split("pairwise prompt 0.1, 1.0 together, natural (4 items, 2 models)")[1]
    ranked = re.findall(r"^(\d)\s+(imported:\S+ \(\S+\))\s+(\d+\.\d)%", together, re.MULTILINE)
    assert ranked == [("1", "imported:A (0.1)", "62.5"), ("2", "imported:B (1.0)", "37.5")]
    assert out.count("together") == 1  # imported:C judged one item: ranked with no one
