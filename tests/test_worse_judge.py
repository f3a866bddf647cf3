"""A worse judge is caught, or the first screen says the set cannot see it.

A judge right on 90% of its judgements is recorded and accepted as the baseline (the table
`judges baseline --accept` writes, its default min_detectable_drop of 15 points); then ten
copies of a worse judge, right on 75%, are recorded and gated against it as new prompt
versions, under two error models: every scored field wrong in a wrong judgement, and one
facet alone wrong (a judge that slips on one criterion, which a verdict made of several
criteria may survive). Per built-in set shape and the `judges init` scaffold, at least 8 of
the 10 copies must read FAIL or NOT FIT, or every copy's first screen must state that its
detection gate is blind to the declared drop (judges.verdicts.regressions.sensitivity).
An unchanged judge at 90% reads PASS in at least 18 of 20 re-records of the same baseline.

The verdict is the one tests/_good_judge.py composes from the report's functions (fitness,
floors, the regression family against both baseline draws); seeded, so the same every run.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from judges.cli.init import scaffold

from ._good_judge import Errors, Shape, accept, load_shape, record, scaffold_shape, verdict

pytestmark = pytest.mark.proof  # a minute or two of simulated recordings

SHAPES = ["product_identity", "geval", "relevance", "pairwise", "init scaffold"]
MODELS = {"every field wrong": Errors(0.75), "one facet wrong": Errors(0.75, one_facet=True)}
COPIES, CAUGHT = 10, 8
UNCHANGED, PASSING = 20, 18


def _detection(rows: list) -> float:
    defects = [row for row in rows if row.run == "main" and not row.control]
    return sum(bool(row.met) for row in defects) / len(defects)


def _shape(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Shape:
    if name != "init scaffold":
        return load_shape(name)
    scaffold(tmp_path, "support", "local:any-model")
    monkeypatch.syspath_prepend(str(tmp_path))  # its verdict module, as pytest.ini adds it
    return scaffold_shape(tmp_path)


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("name", SHAPES)
def test_a_worse_judge_fails_or_the_set_says_it_cannot_see_it(
    name: str, model: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shape = _shape(name, tmp_path, monkeypatch)
    rng = random.Random(f"worse-{name}-{model}")
    base = record(shape, "base", rng)
    gates = accept(shape, base)
    worse = [record(shape, "worse", rng, MODELS[model]) for _ in range(COPIES)]
    copies = [verdict(shape, base, rows, gates) for rows in worse]
    words = Counter(v.word for v in copies)
    drop = _detection(base) - sum(map(_detection, worse)) / COPIES
    caught = words["FAIL"] + words["NOT FIT"]
    blind = sum(v.blind for v in copies)
    print(
        f"{name}, {model}: detection drop {drop:.2f}, {dict(words)}, blind on {blind} of {COPIES}"
    )
    assert caught >= CAUGHT or blind == COPIES, (dict(words), blind)


@pytest.mark.parametrize("name", SHAPES)
def test_an_unchanged_judge_still_passes(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shape = _shape(name, tmp_path, monkeypatch)
    rng = random.Random(f"unchanged-{name}")
    base = record(shape, "base", rng)
    gates = accept(shape, base)
    words = Counter(
        verdict(shape, base, record(shape, "again", rng), gates).word for _ in range(UNCHANGED)
    )
    print(f"{name}, unchanged: {dict(words)}")
    assert words["PASS"] >= PASSING, dict(words)
