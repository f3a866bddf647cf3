"""Properties of the deterministic half of the judges: criterion matching, the identity cap
and asta-bench's levels. No network, no cassettes, no plugin fixtures.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from pydantic import ValidationError

from judges.builtin import product_identity, relevance
from judges.builtin.product_identity import JudgeScore
from judges.builtin.relevance import (
    Criterion,
    CriterionReply,
    Inputs,
    RelevanceReply,
    build_verdict,
    score_judgements,
)
from judges.core import rules

LABELS = tuple(rules.RELEVANCE_POINTS)
LABEL_OF_POINTS = {points: label for label, points in rules.RELEVANCE_POINTS.items()}
# Letters whose case mapping is one character each way, so a per-character case change
# is a pure case variant. (`ß` is covered by a separate test below.)
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789éüñøÅÇ"
DOCUMENT = {"id": "doc-1", "title": "A paper", "text": "Some text."}


# --------------------------------------------------------------------------- strategies

words = st.text(alphabet=_LETTERS, min_size=1, max_size=8)
names = st.lists(words, min_size=1, max_size=4).map(" ".join)
weights = st.floats(min_value=0.0, max_value=1.0, exclude_min=True, allow_nan=False)
surrounding = st.text(alphabet=" \t\n", max_size=3)


# Invisible format characters (Unicode Cf): zero-width space, BOM, soft hyphen, word joiner.
_INVISIBLE = ("\u200b", "\ufeff", "\u00ad", "\u2060", "\u200d")


def _looks_the_same(draw: st.DrawFn, char: str) -> str:
    """`char` in another spelling a reader cannot tell apart on screen."""
    spelling = draw(st.sampled_from(["as is", "decomposed", "full-width"]))
    if spelling == "decomposed":
        return unicodedata.normalize("NFD", char)  # é -> e + combining acute
    if spelling == "full-width" and "!" <= char <= "~":
        return chr(ord(char) + 0xFEE0)  # A -> U+FF21, full-width A
    return char


@st.composite
def variant_of(draw: st.DrawFn, name: str) -> str:
    """The same criterion name as a reader sees it: case, `_`/space, white space, Unicode
    forms (composed or not, full-width) and invisible characters changed."""
    out = []
    for char in name:
        if char == " ":
            out.append(draw(st.sampled_from([" ", "_", "  ", "_ ", "\t", "\u3000", "\u00a0"])))
        else:
            cased = char.upper() if draw(st.booleans()) else char.lower()
            out.append(_looks_the_same(draw, cased))
        if draw(st.integers(0, 3)) == 0:
            out.append(draw(st.sampled_from(_INVISIBLE)))
    return draw(surrounding) + "".join(out) + draw(surrounding)


@st.composite
def criteria_sets(draw: st.DrawFn, min_size: int = 1) -> tuple[Criterion, ...]:
    required = draw(
        st.lists(names, min_size=min_size, max_size=5, unique_by=rules.normalise_criterion_name)
    )
    return tuple(Criterion(name=name, weight=draw(weights)) for name in required)


def reply(judged: list[tuple[str, str]]) -> RelevanceReply:
    return RelevanceReply(
        criteria=[CriterionReply(name=n, relevance=label, evidence="") for n, label in judged]
    )


def inputs_for(criteria: tuple[Criterion, ...]) -> Inputs:
    return Inputs(query="a query", criteria=criteria, document=DOCUMENT)


def verdict(criteria: tuple[Criterion, ...], judged: list[tuple[str, str]]):
    return build_verdict({None: (reply(judged), "raw")}, inputs_for(criteria), "1.0")


# --------------------------------------------------------------------------- criterion names


@given(data=st.data(), criteria=criteria_sets())
def test_name_variants_score_like_the_exact_names(data: st.DataObject, criteria) -> None:
    labels = [data.draw(st.sampled_from(LABELS)) for _ in criteria]
    exact = [(c.name, label) for c, label in zip(criteria, labels, strict=True)]
    drifted = [(data.draw(variant_of(name)), label) for name, label in exact]
    drifted = data.draw(st.permutations(drifted))

    judged_exact = reply(exact).criteria
    judged_drifted = reply(drifted).criteria
    *_, score, level = score_judgements(criteria, judged_exact)
    _, missing, extra, drift_score, drift_level = score_judgements(criteria, judged_drifted)
    assert (missing, extra) == ([], [])
    assert (drift_score, drift_level) == (score, level)
    assert score is not None and level is not None

    expected, drifted_verdict = verdict(criteria, exact), verdict(criteria, drifted)
    assert drifted_verdict.status == expected.status == "ok"
    assert (drifted_verdict.score, drifted_verdict.level) == (expected.score, expected.level)
    by_criterion = {j.criterion: j for j in drifted_verdict.judgements}
    assert set(by_criterion) == {c.name for c in criteria}
    for c, label in zip(criteria, labels, strict=True):
        assert by_criterion[c.name].relevance == label
        assert by_criterion[c.name].weight == c.weight


@given(data=st.data(), criteria=criteria_sets())
def test_a_missing_criterion_is_never_scored(data: st.DataObject, criteria) -> None:
    dropped = data.draw(
        st.lists(st.sampled_from([c.name for c in criteria]), min_size=1, unique=True)
    )
    kept = [
        (data.draw(variant_of(c.name)), data.draw(st.sampled_from(LABELS)))
        for c in criteria
        if c.name not in dropped
    ]
    _, missing, _, score, level = score_judgements(criteria, reply(kept).criteria)
    assert missing == [c.name for c in criteria if c.name in dropped]
    assert (score, level) == (None, None)

    result = verdict(criteria, kept)
    assert result.status == "incomplete"
    assert result.missing == tuple(missing)
    assert (result.score, result.level) == (None, None)


@given(data=st.data(), criteria=criteria_sets(), unknown=names)
def test_an_extra_criterion_is_reported_not_fatal(data: st.DataObject, criteria, unknown) -> None:
    required_keys = {rules.normalise_criterion_name(c.name) for c in criteria}
    assume(rules.normalise_criterion_name(unknown) not in required_keys)
    exact = [(c.name, data.draw(st.sampled_from(LABELS))) for c in criteria]
    position = data.draw(st.integers(0, len(exact)))
    with_extra = [*exact[:position], (unknown, "Perfectly Relevant"), *exact[position:]]

    result = verdict(criteria, with_extra)
    assert result.extra == (unknown,)
    assert result.status == "ok"
    assert (result.score, result.level) == (
        verdict(criteria, exact).score,
        verdict(criteria, exact).level,
    )


@given(
    data=st.data(),
    name=names,
    others=st.lists(names, max_size=3, unique_by=rules.normalise_criterion_name),
)
def test_colliding_required_names_are_refused(data: st.DataObject, name: str, others) -> None:
    key = rules.normalise_criterion_name(name)
    others = [o for o in others if rules.normalise_criterion_name(o) != key]
    twin = data.draw(variant_of(name))
    listed = [name, *others, twin]
    with pytest.raises(rules.CriteriaCollision, match="same name once"):
        rules.check_distinct_criteria(listed)
    criteria = [{"name": n, "weight": 0.5} for n in listed]
    with pytest.raises(ValidationError, match="same name once") as caught:
        Inputs.model_validate({"query": "q", "criteria": criteria, "document": DOCUMENT})
    assert repr(name) in str(caught.value)
    assert repr(twin) in str(caught.value)


@given(criteria=criteria_sets())
def test_distinct_names_pass_the_collision_check(criteria) -> None:
    rules.check_distinct_criteria(c.name for c in criteria)
    assert inputs_for(criteria).criteria == criteria


# --------------------------------------------------------------------------- the seed's table

SEED_CRITERIA = (
    Criterion(name="decoupled workers", weight=0.5),
    Criterion(name="distributed RL", weight=0.5),
)


@pytest.mark.parametrize(
    ("judged_names", "status", "level"),
    [
        pytest.param(["decoupled workers", "distributed rl"], "ok", 3, id="observed-failure"),
        pytest.param(["decoupled workers", "distributed RL"], "ok", 3, id="exact"),
        pytest.param(["decoupled workers"], "incomplete", None, id="genuinely-missing"),
    ],
)
def test_seed_verification_table(judged_names: list[str], status: str, level: int | None) -> None:
    result = verdict(SEED_CRITERIA, [(n, "Perfectly Relevant") for n in judged_names])
    assert result.status == status
    assert result.level == level
    if status == "ok":
        assert result.score == 1.0
        assert result.missing == ()
    else:
        assert result.missing == ("distributed RL",)
        assert result.score is None


@given(name=names, data=st.data())
def test_a_variant_has_the_same_key_and_the_key_is_stable(name: str, data: st.DataObject) -> None:
    key = rules.normalise_criterion_name(name)
    assert rules.normalise_criterion_name(data.draw(variant_of(name))) == key
    assert rules.normalise_criterion_name(key) == key


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("café", "cafe\u0301"),
        ("BERT", "\uff22\uff25\uff32\uff34"),
        ("dense retrieval", "dense\u200b retrieval"),
        ("reward model", "\ufeffreward model"),
        ("tokenisation", "token\u00adisation"),
    ],
    ids=["combining-accent", "full-width", "zero-width-space", "bom", "soft-hyphen"],
)
def test_names_that_look_alike_are_one_criterion(a: str, b: str) -> None:
    assert rules.normalise_criterion_name(a) == rules.normalise_criterion_name(b)
    with pytest.raises(rules.CriteriaCollision, match="same name once"):
        rules.check_distinct_criteria([a, b])
    result = verdict((Criterion(name=a, weight=1.0),), [(b, "Perfectly Relevant")])
    assert result.status == "ok" and result.score == 1.0


@pytest.mark.parametrize("other", ["self attention", "selfattention", "self_attention"])
def test_hyphens_stay_distinct(other: str) -> None:
    assert rules.normalise_criterion_name("self-attention") != rules.normalise_criterion_name(other)
    rules.check_distinct_criteria(["self-attention", other])


def test_full_unicode_case_variants_match() -> None:
    criteria = (Criterion(name="Größe", weight=1.0),)
    result = verdict(criteria, [("Größe".upper(), "Perfectly Relevant")])
    assert result.status == "ok"


# --------------------------------------------------------------------------- levels


@given(
    a=st.floats(allow_nan=False, allow_infinity=False),
    b=st.floats(allow_nan=False, allow_infinity=False),
)
def test_score_to_level_is_monotone(a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert rules.score_to_level(low) <= rules.score_to_level(high)
    assert 0 <= rules.score_to_level(low) <= 3


@given(
    weight_list=st.lists(weights, min_size=1, max_size=6),
    data=st.data(),
)
def test_weighted_score_is_a_fraction(weight_list: list[float], data: st.DataObject) -> None:
    points = [data.draw(st.sampled_from([0, 1, 3])) for _ in weight_list]
    keys = [f"c{i}" for i in range(len(weight_list))]
    score = rules.weighted_score(
        dict(zip(keys, weight_list, strict=True)), dict(zip(keys, points, strict=True))
    )
    assert 0.0 <= score <= 1.0


@given(weight_list=st.lists(weights, min_size=1, max_size=6), data=st.data())
def test_level_never_drops_when_a_criterion_gets_more_relevant(
    weight_list: list[float], data: st.DataObject
) -> None:
    points = [data.draw(st.sampled_from([0, 1, 3])) for _ in weight_list]
    index = data.draw(st.integers(0, len(points) - 1))
    assume(points[index] < 3)
    raised = list(points)
    raised[index] = data.draw(st.sampled_from([p for p in (1, 3) if p > points[index]]))
    criteria = tuple(Criterion(name=f"criterion {i}", weight=w) for i, w in enumerate(weight_list))

    def judged(pts: list[int]) -> list[tuple[str, str]]:
        return [(c.name, LABEL_OF_POINTS[p]) for c, p in zip(criteria, pts, strict=True)]

    before, after = verdict(criteria, judged(points)), verdict(criteria, judged(raised))
    assert before.level is not None and after.level is not None
    assert after.level >= before.level
    assert after.score >= before.score


def test_reported_score_and_level_agree() -> None:
    criteria = tuple(Criterion(name=f"c{i}", weight=w) for i, w in enumerate((0.28, 0.33, 0.06)))
    result = verdict(criteria, [(c.name, "Perfectly Relevant") for c in criteria])
    assert result.score == 0.67
    assert result.level == rules.score_to_level(result.score) == 1


# --------------------------------------------------------------------------- JudgeScore

scores = st.integers(0, 3)
flags = st.sampled_from([True, False, None])


@st.composite
def judge_scores(draw: st.DrawFn) -> tuple[dict, JudgeScore]:
    raw = dict(
        factual_accuracy=draw(scores),
        completeness=draw(scores),
        causal_reasoning=draw(scores),
        product_identity_match=draw(flags),
        reference_product=draw(st.none() | st.text(max_size=20)),
        answer_product=draw(st.none() | st.text(max_size=20)),
        judge_prompt_version=draw(st.sampled_from(["0.2", "0.3", "0.3.1"])),
        rationale=draw(st.text(max_size=40)),
        raw=draw(st.text()),
    )
    return raw, JudgeScore(**raw)


@given(judge_scores())
def test_false_flag_caps_and_other_flags_leave_scores_alone(case) -> None:
    raw, score = case
    judged = raw["factual_accuracy"]
    assert score.factual_accuracy_as_judged == judged
    assert score.core_total == score.factual_accuracy + score.completeness + score.causal_reasoning
    assert score.product_identity_match is raw["product_identity_match"]
    if raw["product_identity_match"] is False:
        assert score.factual_accuracy <= 1
        assert score.factual_accuracy == min(judged, 1)
        assert score.capped is (judged > 1)
    else:
        assert score.factual_accuracy == judged
        assert score.capped is False
    assert (score.completeness, score.causal_reasoning) == (
        raw["completeness"],
        raw["causal_reasoning"],
    )


@given(judge_scores())
def test_rules_applied_twice_equal_once(case) -> None:
    _, score = case
    again = JudgeScore.model_validate(score.model_dump())
    assert again == score
    assert again.model_dump() == score.model_dump()
    assert JudgeScore.model_validate(again.model_dump()) == score


@given(judge_scores())
def test_json_round_trip_is_identical(case) -> None:
    raw, score = case
    text = score.model_dump_json()
    back = JudgeScore.model_validate_json(text)
    assert back == score
    assert back.model_dump_json() == text
    assert back.raw.encode("utf-8") == raw["raw"].encode("utf-8")


@given(
    version=st.sampled_from(["0.2", "0.3", "0.3.1"]),
    fa=scores,
    flag=st.booleans(),
    text=st.text(),
)
def test_raw_reply_survives_byte_for_byte(version: str, fa: int, flag: bool, text: str) -> None:
    model = product_identity.reply_model(version)
    fields = {
        "reference_product": "BRC",
        "answer_product": "RC",
        "product_identity_match": flag,
        "factual_accuracy": fa,
        "completeness": 2,
        "causal_reasoning": 2,
        "rationale": "r",
    }
    parsed = model.model_validate(fields)
    inputs = product_identity.Inputs(question="q", reference="r", answer="a")
    result = product_identity.build_verdict({None: (parsed, text)}, inputs, version)
    assert result.raw.encode("utf-8") == text.encode("utf-8")
    if version == "0.2":
        assert result.product_identity_match is None
        assert result.factual_accuracy == fa
    else:
        assert result.product_identity_match is flag
        assert result.factual_accuracy == (min(fa, 1) if flag is False else fa)


@given(st.integers(-10, 10), flags)
def test_cap_factual_accuracy_is_idempotent(value: int, flag: bool | None) -> None:
    once = rules.cap_factual_accuracy(value, flag)
    assert rules.cap_factual_accuracy(once, flag) == once
    if flag is False:
        assert once == min(value, rules.IDENTITY_MISMATCH_CAP)
    else:
        assert once == value


@pytest.mark.parametrize(
    ("factual_accuracy", "flag"),
    [(3, '"false"'), (3, "0"), (3.0, "false")],
    ids=["flag-as-string", "flag-as-zero", "score-as-float"],
)
def test_cap_holds_whatever_json_types_arrive(factual_accuracy: float, flag: str) -> None:
    text = (
        f'{{"factual_accuracy": {factual_accuracy}, "completeness": 1, "causal_reasoning": 1, '
        f'"product_identity_match": {flag}, "judge_prompt_version": "0.3.1", "raw": "x"}}'
    )
    score = JudgeScore.model_validate_json(text)
    assert score.product_identity_match is False
    assert score.factual_accuracy <= 1


def test_relevance_reply_model_is_version_independent() -> None:
    assert relevance.reply_model("1.0") is RelevanceReply
