"""The words for verdict states, defined once: what a version's verdict is, how one chance
test reads, and the registry of verdict words.

Every reader of a verdict (report.md, index.html, report.json, the terminal summary, the
GitHub step summary and annotations, JUnit properties and the tests' assertion messages)
spells a state with these members, so one state never has two names. Both are `StrEnum`s:
a member is its word in an f-string, in JSON and in a comparison with a plain string.

A verdict word's properties live in one entry of `WORDS`: what it means (the sentence
docs/gates-and-verdicts.md opens its entry with), the causes of reasons that can make it
(`judges.verdicts.deciding` picks the deciding one), its colour in index.html's banner and
the overview's badge, and whether the step summary marks it as needing action. When a word
holds is one row of `PRECEDENCE`, read in order: the first row that holds is a model's
word, and the worst row of its models a report's. Adding a word is an entry and a row here,
and the property of `ModelVerdict` its row reads (`judges.verdicts.verdict`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Protocol

from judges.sets.folder import PROBE_EXPECTATIONS_FILE

__all__ = [
    "AT_CHANCE",
    "BETTER",
    "CANNOT_DECIDE",
    "FAIL",
    "FAILED",
    "FIT",
    "INCOMPLETE",
    "MISSING",
    "NOT_FIT",
    "PASS",
    "PASSED",
    "PRECEDENCE",
    "TOO_FEW",
    "UNDECIDED",
    "UNFIT",
    "UNFIT_ACCEPTED",
    "WORDS",
    "WORSE",
    "YELLOW",
    "Cause",
    "Reading",
    "Standing",
    "Verdict",
    "Word",
    "colour_rules",
    "standing",
    "worst",
]


class Verdict(StrEnum):
    """A prompt version's verdict on one model:
    INCOMPLETE (a run or items it needs are missing), NOT FIT (no better than chance),
    FAIL (a gate failed), UNDECIDED (nothing failed, but no chance test can decide at the
    set's size: a coin flip would read the same), PASS. FIT is fitness alone (better than
    chance on every deciding test), before the gates are read."""

    PASS = "PASS"
    FAIL = "FAIL"
    NOT_FIT = "NOT FIT"
    INCOMPLETE = "INCOMPLETE"
    UNDECIDED = "UNDECIDED"
    FIT = "FIT"


class Reading(StrEnum):
    """How one chance test reads; a version is NOT FIT when a deciding test reads anything
    but BETTER, and a test reading TOO_FEW decides nothing."""

    BETTER = "better than chance"
    AT_CHANCE = "at chance"
    WORSE = "worse than chance"
    TOO_FEW = "too few to test"


PASS, FAIL, NOT_FIT, INCOMPLETE, UNDECIDED, FIT = (
    Verdict.PASS,
    Verdict.FAIL,
    Verdict.NOT_FIT,
    Verdict.INCOMPLETE,
    Verdict.UNDECIDED,
    Verdict.FIT,
)
BETTER, AT_CHANCE, WORSE, TOO_FEW = (
    Reading.BETTER,
    Reading.AT_CHANCE,
    Reading.WORSE,
    Reading.TOO_FEW,
)


class Cause(IntEnum):
    """What a reason for a verdict is about; the lower, the more it decides:

    1. what is missing (INCOMPLETE: nothing else can be read from a partial recording);
    2. a deciding chance test not better than chance, not accepted (an unaccepted NOT FIT
       outranks every gate: floors say little about a coin flip);
    3. a regression against the accepted baseline: the version is worse than what the team
       accepted, which a floor missed by a hair does not say;
    4. a floor of gates.toml; 5. new failures of planted items; 6. accepted misses now met;
       7. biased probe items;
    8. an accepted NOT FIT (it keeps the word NOT FIT only when nothing failed);
    9. UNDECIDED; 10. a PASS whose paired gate is blind to the declared drop; then what
       only informs (a gate not evaluated, a prompt worse than an earlier one) and a clean PASS.
    """

    MISSING = 1
    NOT_FIT = 2
    REGRESSION = 3
    FLOOR = 4
    NEW_FAILURE = 5
    ACCEPTED_MET = 6
    BIASED_PROBE = 7
    NOT_FIT_ACCEPTED = 8
    UNDECIDED = 9
    BLIND = 10
    NOTE = 11  # informs, decides nothing
    PASSED = 12


@dataclass(frozen=True)
class Colour:
    """A word's colour: the class index.html's banner and the overview's badge carry."""

    css: str
    background: str
    text: str
    border: str

    def rule(self, selector: str) -> str:
        return (
            f"{selector}.{self.css}{{background:{self.background};color:{self.text};"
            f"border-color:{self.border}}}\n"
        )


GREEN = Colour("pass", "#dafbe1", "#116329", "#1a7f37")
RED = Colour("fail", "#ffebe9", "#a40e26", "#cf222e")
ORANGE = Colour("notfit", "#fff1e5", "#953800", "#bc4c00")
GREY = Colour("incomplete", "#eaeef2", "#424a53", "#6e7781")
# Not a word's: the overview marks a PASS whose paired gate is blind to the declared drop.
YELLOW = Colour("blind", "#fff8c5", "#7d4e00", "#bf8700")


@dataclass(frozen=True)
class Word:
    """One verdict word and what every format needs of it."""

    verdict: Verdict
    meaning: str  # what it says, as docs/gates-and-verdicts.md's entry for it opens
    causes: frozenset[Cause]  # the reasons that can make it; the first of them decides it
    colour: Colour
    passing: bool  # nothing to act on: the step summary marks every other word with :x:


# In the order of the stylesheets' colour rules (each colour once, first use first).
WORDS: dict[str, Word] = {
    word.verdict: word
    for word in (
        Word(
            Verdict.PASS,
            "fit (every deciding chance test above chance) and nothing failed",
            frozenset({Cause.BLIND, Cause.PASSED}),
            GREEN,
            passing=True,
        ),
        Word(
            Verdict.FAIL,
            "a gate failed, a planted item failed its expectation, an accepted miss is now met "
            "(strict XPASS), or a bias-probe item is biased and not accepted in "
            f"{PROBE_EXPECTATIONS_FILE}",
            frozenset(
                {
                    Cause.REGRESSION,
                    Cause.FLOOR,
                    Cause.NEW_FAILURE,
                    Cause.ACCEPTED_MET,
                    Cause.BIASED_PROBE,
                }
            ),
            RED,
            passing=False,
        ),
        Word(
            Verdict.NOT_FIT,
            "not better than chance on something the set measures",
            frozenset({Cause.NOT_FIT, Cause.NOT_FIT_ACCEPTED}),
            ORANGE,
            passing=False,
        ),
        Word(
            Verdict.INCOMPLETE,
            "the recording is partial",
            frozenset({Cause.MISSING}),
            GREY,
            passing=False,
        ),
        Word(
            Verdict.UNDECIDED,
            "nothing failed, but no chance test can decide at the set's size, so a coin flip "
            "would read the same",
            frozenset({Cause.UNDECIDED}),
            GREY,
            passing=False,
        ),
    )
}


def colour_rules(selector: str, *more: Colour) -> str:
    """The stylesheet's rule of each word's colour, then of `more`, each colour once, for
    `selector`."""
    colours = dict.fromkeys([*(word.colour for word in WORDS.values()), *more])
    return "".join(colour.rule(selector) for colour in colours)


class Decided(Protocol):
    """What the precedence reads of one model's verdict (`ModelVerdict`)."""

    @property
    def incomplete(self) -> bool: ...
    @property
    def fit(self) -> bool: ...
    @property
    def accept_not_fit(self) -> str: ...
    @property
    def undecided(self) -> bool: ...
    def problems(self) -> list[str]: ...


@dataclass(frozen=True)
class Standing:
    """One row of the precedence: a word, and when a model's verdict is it."""

    word: Verdict
    holds: Callable[[Decided], bool]


MISSING = Standing(Verdict.INCOMPLETE, lambda m: m.incomplete)
# An unaccepted NOT FIT outranks a failed gate: floors say little about a coin flip.
UNFIT = Standing(Verdict.NOT_FIT, lambda m: not m.fit and not m.accept_not_fit)
FAILED = Standing(Verdict.FAIL, lambda m: bool(m.problems()))
# gates.toml keeps the NOT FIT (accept_not_fit): the word only when nothing failed.
UNFIT_ACCEPTED = Standing(Verdict.NOT_FIT, lambda m: not m.fit)
# A version nothing failed is PASS only where its set could have shown it at chance.
CANNOT_DECIDE = Standing(Verdict.UNDECIDED, lambda m: m.undecided)
PASSED = Standing(Verdict.PASS, lambda m: True)
PRECEDENCE = (MISSING, UNFIT, FAILED, UNFIT_ACCEPTED, CANNOT_DECIDE, PASSED)


def standing(model: Decided) -> Standing:
    """The first row of the precedence that holds of `model`: its word."""
    return next(row for row in PRECEDENCE if row.holds(model))


def worst(rows: Iterable[Standing]) -> Verdict:
    """The word of the earliest of `rows` in the precedence (a report of several models);
    PASS when there is none."""
    return min(rows, key=PRECEDENCE.index, default=PASSED).word
