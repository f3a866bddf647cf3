"""The words for verdict states, defined once: what a version's verdict is, and how one
chance test reads.

Every reader of a verdict (report.md, index.html, report.json, the terminal summary, the
GitHub step summary and annotations, JUnit properties and the tests' assertion messages)
spells a state with these members, so one state never has two names. Both are `StrEnum`s:
a member is its word in an f-string, in JSON and in a comparison with a plain string.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "AT_CHANCE",
    "BETTER",
    "FAIL",
    "FIT",
    "INCOMPLETE",
    "NOT_FIT",
    "PASS",
    "TOO_FEW",
    "UNDECIDED",
    "WORSE",
    "Reading",
    "Verdict",
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
