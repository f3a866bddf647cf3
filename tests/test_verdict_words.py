"""The registry of verdict words (`judges.verdicts.vocabulary`): each word's properties in one
entry, its place in one precedence; the docs, the deciding causes, the stylesheets and the
step summary read them from there."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from judges.reports.render.github import _verdict_cell
from judges.reports.render.html import _CSS as REPORT_CSS
from judges.reports.render.overview import _CSS as OVERVIEW_CSS
from judges.verdicts.deciding import CAUSES, Cause
from judges.verdicts.vocabulary import (
    FAIL,
    INCOMPLETE,
    NOT_FIT,
    PASS,
    UNDECIDED,
    UNFIT,
    UNFIT_ACCEPTED,
    WORDS,
    colour_rules,
    standing,
    worst,
)

DOCS = Path(__file__).resolve().parent.parent / "docs" / "gates-and-verdicts.md"


@dataclass
class Model:
    """Only what the precedence reads of a model's verdict."""

    incomplete: bool = False
    fit: bool = True
    accept_not_fit: str = ""
    undecided: bool = False
    failed: bool = False

    def problems(self) -> list[str]:
        return ["1 gate failed"] if self.failed else []


@pytest.mark.parametrize(
    ("model", "word"),
    [
        (Model(), PASS),
        (Model(undecided=True), UNDECIDED),
        (Model(failed=True, undecided=True), FAIL),
        (Model(fit=False, accept_not_fit="why"), NOT_FIT),
        (Model(fit=False, accept_not_fit="why", failed=True), FAIL),
        (Model(fit=False, failed=True), NOT_FIT),  # an unaccepted NOT FIT outranks FAIL
        (Model(fit=False, failed=True, incomplete=True), INCOMPLETE),
    ],
)
def test_a_models_word_is_the_first_row_of_the_precedence_that_holds(
    model: Model, word: str
) -> None:
    assert standing(model).word == word


def test_a_reports_word_is_its_worst_models() -> None:
    accepted, undecided = (
        standing(Model(fit=False, accept_not_fit="why")),
        standing(Model(undecided=True)),
    )
    assert worst([undecided, accepted]) == NOT_FIT  # an accepted NOT FIT over UNDECIDED
    assert worst([standing(Model(failed=True)), UNFIT_ACCEPTED]) == FAIL
    assert worst([standing(Model(failed=True)), UNFIT]) == NOT_FIT
    assert worst([]) == PASS


def test_every_word_opens_its_entry_in_the_docs_with_its_meaning() -> None:
    text = " ".join(DOCS.read_text(encoding="utf-8").split())
    for name, word in WORDS.items():
        assert f"- **{name}**: {word.meaning}" in text, name


def test_the_deciding_causes_are_the_words_own_and_each_cause_makes_one_word_at_most() -> None:
    assert {name: word.causes for name, word in WORDS.items()} == CAUSES
    assert CAUSES[UNDECIDED] == {Cause.UNDECIDED}
    owners = [cause for causes in CAUSES.values() for cause in causes]
    assert len(owners) == len(set(owners))


def test_the_stylesheets_colour_every_word_and_the_step_summary_marks_all_but_pass() -> None:
    for css, selector in ((REPORT_CSS, ".banner"), (OVERVIEW_CSS, ".w")):
        assert colour_rules(selector) in css
        for word in WORDS.values():
            assert re.search(rf"^{re.escape(selector)}\.{word.colour.css}\{{", css, re.M)
    assert [name for name, word in WORDS.items() if word.passing] == [PASS]
    for name in WORDS:
        cell = _verdict_cell(cast(Any, Shown(name)))
        assert cell == (name if name == PASS else f"{name} :x:"), name


class Shown(Model):
    """A model's verdict as the step summary's cell reads it: only its word."""

    def __init__(self, word: str) -> None:
        super().__init__()
        self.word = word

    def verdict_word(self) -> str:
        return self.word
