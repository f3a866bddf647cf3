"""Each perturbation changes what it claims and nothing else; derived items stay in sync."""

import contextlib
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judges.core.spec import load_catalog
from judges.sets import perturb
from judges.sets.planted import load_items

ROOT = Path(__file__).resolve().parents[1]
# No "barrier" on its own: the product names bring it, whole.
WORDS = [
    "the", "coupon", "is", "paid", "a", "above", "below", "investor", "rises", "falls",
    "an", "issuer", "never", "capital", "lower", "gain", "note", "at", "maturity",
]  # fmt: skip
PRODUCTS = sorted(perturb.COUSINS)


@st.composite
def sentence(draw):
    words = draw(st.lists(st.sampled_from(WORDS), min_size=4, max_size=10))
    if draw(st.booleans()):
        words.insert(draw(st.integers(0, len(words))), draw(st.sampled_from(PRODUCTS)))
    return " ".join(words).capitalize() + "."


texts = st.lists(sentence(), min_size=2, max_size=6).map(" ".join)
seeds = st.integers(0, 10_000)


@given(texts, seeds)
def test_flip_direction_changes_one_word_to_its_opposite(text, seed):
    try:
        result = perturb.flip_direction(text, seed)
    except perturb.PerturbationError:
        assert not any(w.lower() in perturb._OPPOSITE for w in re.findall(r"[A-Za-z]+", text))
        return
    before, after = text.split(" "), result.text.split(" ")
    changed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
    assert len(changed) == 1
    old, new = (w.strip(".").lower() for w in changed[0])
    assert perturb._OPPOSITE[old] == new


@given(texts, seeds)
def test_swap_product_changes_only_product_names(text, seed):
    pattern = re.compile(
        "|".join(re.escape(n) for n in sorted(PRODUCTS, key=len, reverse=True)), re.I
    )
    try:
        result = perturb.swap_product(text, seed)
    except perturb.PerturbationError:
        assert not pattern.search(text)
        return
    assert pattern.sub("<product>", result.text) == pattern.sub("<product>", text)
    assert result.text != text


@given(texts, seeds)
def test_drop_sentence_removes_exactly_one(text, seed):
    original = perturb.sentences(text)
    kept = perturb.sentences(perturb.drop_sentence(text, seed).text)
    assert len(kept) == len(original) - 1
    assert any(original[:i] + original[i + 1 :] == kept for i in range(len(original)))


@given(texts, seeds)
def test_shuffle_keeps_every_sentence_and_changes_the_order(text, seed):
    original = perturb.sentences(text)
    if len(set(original)) < 2:
        with pytest.raises(perturb.PerturbationError):
            perturb.shuffle_sentences(text, seed)
        return
    shuffled = perturb.sentences(perturb.shuffle_sentences(text, seed).text)
    assert Counter(shuffled) == Counter(original)
    assert shuffled != original


def _content(text):
    return Counter(
        w.strip(".").lower() for w in text.split() if w.lower() not in {"a", "an", "the"}
    )


@given(texts, seeds)
def test_corrupt_grammar_keeps_the_content_words(text, seed):
    try:
        result = perturb.corrupt_grammar(text, seed)
    except perturb.PerturbationError:
        return
    assert result.text != text
    assert _content(result.text) == _content(text)


@given(texts, seeds)
def test_generators_are_deterministic(text, seed):
    for generator in perturb.GENERATORS.values():
        with contextlib.suppress(perturb.PerturbationError):
            assert generator(text, seed) == generator(text, seed)


@pytest.mark.parametrize("judge", ["product_identity", "geval"])
def test_derived_items_match_their_recipe(judge):
    spec = load_catalog()[judge]
    folder = ROOT / "planted_sets" / judge
    items = load_items(folder / "items.jsonl", spec)
    derivations = perturb.load_derivations(folder / "derived.toml")
    hand = [item for item in items if item.provenance.source == "hand"]
    on_file = {item.id: item for item in items if item.provenance.source == "generated"}
    derived = perturb.derive_all(hand, derivations)
    assert derivations and {item.id for item in derived} == set(on_file)
    for item in derived:
        assert item == on_file[item.id], f"{item.id} drifted: run python -m judges derive {judge}"


@pytest.mark.parametrize("judge", ["product_identity", "geval"])
def test_deriving_again_rewrites_no_byte_of_the_committed_set(judge, tmp_path):
    """Generated items are replaced where they stand, not moved after the hand items."""
    spec = load_catalog()[judge]
    committed = ROOT / "planted_sets" / judge / "items.jsonl"
    copy = tmp_path / "items.jsonl"
    copy.write_bytes(committed.read_bytes())
    folder = ROOT / "planted_sets" / judge
    hand = [i for i in load_items(committed, spec) if i.provenance.source == "hand"]
    perturb.write_derived(
        copy, perturb.derive_all(hand, perturb.load_derivations(folder / "derived.toml"))
    )
    assert copy.read_bytes() == committed.read_bytes()


def test_a_new_generated_item_is_appended_and_a_stale_second_copy_goes(tmp_path):
    spec = load_catalog()["geval"]
    committed = ROOT / "planted_sets" / "geval" / "items.jsonl"
    items = load_items(committed, spec)
    hand = [i for i in items if i.provenance.source == "hand"]
    generated = [i for i in items if i.provenance.source == "generated"]
    lines = committed.read_text(encoding="utf-8").splitlines()
    first = next(n for n, line in enumerate(lines) if f'"id": "{generated[0].id}"' in line)
    last = next(n for n, line in enumerate(lines) if f'"id": "{generated[-1].id}"' in line)
    copy = tmp_path / "items.jsonl"
    # The last generated item missing, a stale copy of the first at the end.
    copy.write_text(
        "\n".join([*lines[:last], *lines[last + 1 :], lines[first]]) + "\n", encoding="utf-8"
    )

    derivations = perturb.load_derivations(ROOT / "planted_sets" / "geval" / "derived.toml")
    perturb.write_derived(copy, perturb.derive_all(hand, derivations))

    ids = [item.id for item in load_items(copy, spec)]
    assert len(ids) == len(set(ids)) == len(items)
    written = copy.read_text(encoding="utf-8").splitlines()
    assert written[first] == lines[first]  # in place
    assert written[-1] == lines[last]  # the missing one appended, byte for byte
