"""The neutral benchmark format and its aggregation rules, on a benchmark whose every figure
was computed by hand (tests/_toy_benchmark.py): two orders, ties, unparsed replies, a
reward model's scores with equal-score pairs; each rule per subset and overall, under each
overall weighting; published figures checked exactly; hostile files refused by name."""

from __future__ import annotations

import json
import re
from fractions import Fraction as F
from pathlib import Path

import pytest

from judges.sets.benchmark import (
    BenchmarkError,
    PairScores,
    Published,
    load_benchmark,
    verdict_from_scores,
)
from judges.sets.benchmark_rules import RULES, TWO_ORDER_RULES
from judges.stats.fitness.benchmark import (
    Credits,
    Pair,
    Score,
    benchmark_published,
    credits_of,
    pair_credit,
    pairs_of,
    published_matches,
    round_exact,
    subset_scores,
)
from tests._toy_benchmark import HAND, MANIFEST, write_jsonl, write_toy


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    return write_toy(tmp_path / "toybench")


@pytest.mark.parametrize("judge", sorted(HAND))
def test_every_rule_gives_the_hand_computed_table(toy: Path, judge: str) -> None:
    benchmark = load_benchmark(toy)
    pairs = pairs_of(benchmark)[judge]
    for rule, (math_, code, overall) in HAND[judge].items():
        scores = subset_scores(judge, pairs, rule, credits_of(benchmark))
        assert [(s.subset, s.value) for s in scores] == [
            ("math", math_), ("code", code), (None, overall)
        ], rule  # fmt: skip


def test_the_overall_row_weighs_subsets_as_the_benchmark_says(toy: Path) -> None:
    pairs = pairs_of(load_benchmark(toy))["llm-x"]
    credits = Credits(tie_credit=F(1, 2))
    by_subsets = subset_scores("llm-x", pairs, "vote", credits, "subsets")[-1]
    assert by_subsets.value == (F(2, 3) + F(1, 2)) / 2 == F(7, 12)
    weighted = subset_scores("llm-x", pairs, "vote", credits, "weights", {"math": 3, "code": 1})
    assert weighted[-1].value == (3 * F(2, 3) + 1 * F(1, 2)) / 4 == F(5, 8)
    assert not by_subsets.binary  # a mean of subsets is no count of pairs


def test_a_tie_and_an_unparsed_reply_are_scored_apart(toy: Path) -> None:
    pairs = pairs_of(load_benchmark(toy))["llm-x"]
    m2 = next(p for p in pairs if p.item_id == "m2")  # B (right), tie
    c2 = next(p for p in pairs if p.item_id == "c2")  # none, B (right)
    half_tie = Credits(tie_credit=F(1, 2))
    assert pair_credit(m2, "per-judgement", half_tie) == F(3, 4)
    assert pair_credit(c2, "per-judgement", half_tie) == F(1, 2)
    # A benchmark that scores an unparsed reply as a tie, and a tie's vote as a loss:
    assert pair_credit(c2, "per-judgement", Credits(F(1, 2), F(1, 2))) == F(3, 4)
    assert pair_credit(m2, "vote", Credits(tie_vote=F(-1))) == 0  # +1 - 1 is not above 0
    assert pair_credit(m2, "vote", Credits()) == 1  # +1 + 0 is


def test_scores_become_verdicts_by_the_stated_rule_equal_scores_tie() -> None:
    assert verdict_from_scores(PairScores(A=0.5, B=0.5), True) == "tie"
    assert verdict_from_scores(PairScores(A=2, B=1), True) == "A"
    assert verdict_from_scores(PairScores(A=2, B=1), False) == "B"  # a loss or a distance


def test_the_reward_model_equal_scores_are_ties_not_picks(toy: Path) -> None:
    pairs = {p.item_id: p for p in pairs_of(load_benchmark(toy))["rm-z"]}
    assert pairs["m2"].verdicts == ("tie",) and pairs["m3"].verdicts == ("tie",)
    assert pairs["m2"].scores == ((0.5, 0.5),)


def test_every_named_rule_has_its_computation() -> None:
    pair = Pair("i", "s", "A", ("A", "B"))
    assert {rule: pair_credit(pair, rule, Credits()) for rule in RULES} == {
        "per-judgement": F(1, 2), "vote": 0, "single-order": 1, "both-orders": 0,
        "consistent-or-tie": 0,  # A then B: a tie, worth tie_credit 0
    }  # fmt: skip
    with pytest.raises(ValueError, match="needs 2 orders"):
        pair_credit(Pair("i", "s", "A", ("A",)), "vote", Credits())


def test_the_docs_table_lists_every_registered_rule_in_order() -> None:
    doc = Path(__file__).resolve().parent.parent / "docs" / "pairwise-benchmarks.md"
    section = doc.read_text(encoding="utf-8").split("### The aggregation rules", 1)[1]
    table = section.split("\n### ", 1)[0]
    assert re.findall(r"^\| `([^`]+)` \|", table, flags=re.MULTILINE) == list(RULES)
    assert {"vote", "both-orders", "consistent-or-tie"} == TWO_ORDER_RULES


def test_every_published_figure_is_reproduced_exactly(toy: Path) -> None:
    matches = benchmark_published(load_benchmark(toy))
    assert len(matches) == 36 and all(m.equal for m in matches)
    first = matches[0]
    assert (first.published.judge, first.published.rule, str(first.shown)) == (
        "llm-x", "per-judgement", "75.00"
    )  # fmt: skip


def _published(value: float, **given: object) -> Published:
    return Published.model_validate({"judge": "j", "rule": "vote", "value": value} | given)


def test_a_published_figure_is_compared_to_the_digit() -> None:
    score = Score("j", None, "vote", F(7, 12), F(7), 12, True)
    assert published_matches(_published(58.33), score).equal
    assert not published_matches(_published(58.34), score).equal  # one digit off
    assert published_matches(_published(58.3), score).equal  # to the digits it shows
    assert published_matches(_published(0.5833, scale="fraction"), score).equal
    # In full float precision: 7 / 12 * 100 and 100 * 7 / 12 differ in the last bit.
    assert published_matches(_published(7 / 12 * 100), score).equal
    assert published_matches(_published(100 * 7 / 12), score).equal
    assert published_matches(_published(58.333333333333), score).equal  # 12 places
    assert not published_matches(_published(58.333333333334), score).equal


def test_rounding_ties_follow_the_stated_rule() -> None:
    assert round_exact(F(25, 2), 0) == 12 and round_exact(F(25, 2), 0, "half-up") == 13
    score = Score("j", None, "vote", F(1, 8), F(1), 8, True)  # 12.5%
    assert published_matches(_published(12, decimals=0), score).equal
    assert published_matches(_published(13, decimals=0, rounding="half-up"), score).equal
    assert not published_matches(_published(13, decimals=0), score).equal


def test_a_published_figure_of_a_subset_a_judge_never_judged_is_not_equal() -> None:
    assert not published_matches(_published(50.0), None).equal


# --------------------------------------------------------------------------- hostile files


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _refused(folder: Path, pattern: str) -> None:
    with pytest.raises(BenchmarkError, match=pattern):
        load_benchmark(folder)


def test_a_key_given_twice_is_refused_with_its_line(toy: Path) -> None:
    path = toy / "judgements.jsonl"
    text = path.read_text(encoding="utf-8").splitlines()
    text[2] = text[2].replace('"verdict"', '"verdict": "A", "verdict"', 1)
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    _refused(toy, r"judgements.jsonl:3: .*verdict")


@pytest.mark.parametrize(
    ("row", "pattern"),
    [
        ({"judge": "llm-x", "item": "zz", "order": 1, "verdict": "A"}, r":26: item 'zz' is not"),
        ({"judge": "llm-x", "item": "m1", "order": 1, "verdict": "A"}, r":26: .*already given"),
        ({"judge": "llm-x", "item": "m1", "order": 1, "verdict": None}, r":26: give a verdict"),
        ({"judge": "llm-x", "item": "m1", "order": 1, "verdict": "tie?"}, r":26: verdict"),
        ({"judge": "rm-z", "item": "m1", "order": 2, "verdict": "A"}, r":26: order 2, but rm-z"),
        ({"judge": "q", "item": "m1", "order": 1, "scores": {"A": 1, "B": 2}, "verdict": "A"},
         r":26: verdict 'A' but scores A=1, B=2 give 'B'"),
        ({"judge": "q", "item": "m1", "order": 1, "scores": {"A": "1", "B": 2}},
         r":26: scores.A"),
        ({"judge": "q", "item": "m1", "order": "1", "verdict": "A"}, r":26: order"),
    ],
)  # fmt: skip
def test_a_bad_judgement_row_is_refused_naming_its_line(
    toy: Path, row: dict[str, object], pattern: str
) -> None:
    path = toy / "judgements.jsonl"
    write_jsonl(path, [*_lines(path), row])
    _refused(toy, pattern)


def test_a_missing_order_and_a_nan_score_are_refused(toy: Path) -> None:
    path = toy / "judgements.jsonl"
    write_jsonl(path, [*_lines(path), {"judge": "q", "item": "m1", "order": 1, "verdict": "A"}])
    _refused(toy, r"q on item m1: no judgement in order\(s\) \[2\]")
    rows = [r for r in _lines(path) if r["judge"] != "q"]
    path.write_text(
        "".join(json.dumps(r) + "\n" for r in rows)
        + '{"judge": "rm-z", "item": "m1", "order": 1, "scores": {"A": NaN, "B": 1}}\n',
        encoding="utf-8",
    )
    _refused(toy, r":26: .*finite")


@pytest.mark.parametrize(
    ("old", "new", "pattern"),
    [
        ('licence = "unknown"\n', "", r"licence: Field required"),
        ('rule = "single-order"\n', 'rule = "vote"\n', r"rule 'vote' needs 2 orders"),
        ('weighting = "items"', 'weighting = "weights"', r"weights are given exactly"),
        (
            'rule = "vote"\n',
            'rule = "majority"\n',
            r"rule: unknown rule 'majority'; the rules are per-judgement, vote, single-order",
        ),
        ('name = "toybench"', 'name = "../x"', r"name: String should match"),
    ],
)
def test_a_bad_manifest_is_refused(toy: Path, old: str, new: str, pattern: str) -> None:
    assert old in MANIFEST
    (toy / "benchmark.toml").write_text(MANIFEST.replace(old, new, 1), encoding="utf-8")
    _refused(toy, pattern)


def test_weights_name_every_subset(toy: Path) -> None:
    manifest = MANIFEST.replace(
        'weighting = "items"', 'weighting = "weights"\nweights = { math = 1 }'
    )
    (toy / "benchmark.toml").write_text(manifest, encoding="utf-8")
    _refused(toy, r"weights name \['math'\], the items' subsets are \['code', 'math'\]")


@pytest.mark.parametrize(
    ("row", "pattern"),
    [
        ({"judge": "llm-x", "subset": "poetry", "rule": "vote", "value": 1}, r"subset 'poetry'"),
        ({"judge": "nobody", "rule": "vote", "value": 1}, r"judge 'nobody' judged nothing"),
        ({"judge": "rm-z", "rule": "vote", "value": 1}, r"rule 'vote' needs 2 orders"),
        ({"judge": "llm-x", "rule": "vote", "value": 60.0}, r"the same figure is given on line"),
    ],
)
def test_a_bad_published_row_is_refused(toy: Path, row: dict[str, object], pattern: str) -> None:
    path = toy / "published.jsonl"
    write_jsonl(path, [*_lines(path), row])
    _refused(toy, pattern)


def test_a_duplicate_item_and_an_unknown_judge_in_the_manifest_are_refused(toy: Path) -> None:
    path = toy / "items.jsonl"
    items = _lines(path)
    write_jsonl(path, [*items, items[0]])
    _refused(toy, r"items.jsonl:6: item 'm1' already given on line 1")
    write_jsonl(path, items)
    (toy / "benchmark.toml").write_text(MANIFEST + '[judges."ghost"]\n', encoding="utf-8")
    _refused(toy, r"\[judges\] names \['ghost'\], which judged nothing")


def test_a_judge_whose_lower_score_wins_says_so_in_its_own_table(toy: Path) -> None:
    manifest = MANIFEST + "higher_is_better = false\n"  # under [judges."rm-z"]
    (toy / "benchmark.toml").write_text(manifest, encoding="utf-8")
    pairs = {p.item_id: p.verdicts for p in pairs_of(load_benchmark(toy))["rm-z"]}
    assert pairs == {"m1": ("B",), "m2": ("tie",), "m3": ("tie",), "c1": ("A",), "c2": ("A",)}


@pytest.mark.parametrize(
    ("name", "data", "pattern"),
    [
        ("benchmark.toml", b'name = "x"\nname = "y"\n', r"benchmark.toml: not TOML"),
        ("benchmark.toml", None, r"no benchmark.toml; write one naming the benchmark"),
        ("items.jsonl", None, r"no items.jsonl; one line per pair"),
        ("items.jsonl", b"\n\n", r"items.jsonl: no items"),
        ("items.jsonl", b'{"id": "m1", \xff}\n', r"items.jsonl:1: not UTF-8"),
        ("items.jsonl", b'{"id": "m1"\n', r"items.jsonl:1: not JSON"),
        ("judgements.jsonl", None, r"no judgements.jsonl"),
        ("published.jsonl", b'{"judge": "llm-x", "rule": "vote", "value": "60%"}\n',
         r"published.jsonl:1: value"),
    ],
)  # fmt: skip
def test_a_missing_or_unreadable_file_is_named(
    toy: Path, name: str, data: bytes | None, pattern: str
) -> None:
    path = toy / name
    if data is None:
        path.unlink()
    else:
        path.write_bytes(data)
    _refused(toy, pattern)
