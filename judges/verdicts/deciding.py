"""Which reason decides a verdict: every reason in one stated order of precedence.

A verdict has many reasons (a floor failed, a regression against the accepted baseline, new
failures, a chance test at chance, a gate that is blind). A reader needs the one that
decides it first, so every format (report.md's Result line, index.html's banner and
overview row, report.json, the terminal and the GitHub step summary) leads with the same
one: the first reason, in the order of `Cause`, of those that belong to the verdict's word.

The order, and why:

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

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum

from judges.verdicts.vocabulary import FAIL, INCOMPLETE, NOT_FIT, PASS, UNDECIDED

__all__ = ["CAUSES", "Cause", "Reason", "deciding", "ordered"]


class Cause(IntEnum):
    """What a reason is about; the lower, the more it decides."""

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


# The causes that can make each word; the deciding reason is the first of these.
CAUSES: dict[str, frozenset[Cause]] = {
    INCOMPLETE: frozenset({Cause.MISSING}),
    NOT_FIT: frozenset({Cause.NOT_FIT, Cause.NOT_FIT_ACCEPTED}),
    FAIL: frozenset(
        {
            Cause.REGRESSION,
            Cause.FLOOR,
            Cause.NEW_FAILURE,
            Cause.ACCEPTED_MET,
            Cause.BIASED_PROBE,
        }
    ),
    UNDECIDED: frozenset({Cause.UNDECIDED}),
    PASS: frozenset({Cause.BLIND, Cause.PASSED}),
}


@dataclass(frozen=True)
class Reason:
    """One reason for a verdict: its cause, the whole sentence the first screen lists, and
    the clause a one-line verdict gives (`name`, then its `figure` where room is left)."""

    cause: Cause
    text: str
    name: str
    figure: str = ""
    model: str = ""  # the judge model it is about ("" for a set of a pairwise judge)


def ordered(reasons: Iterable[Reason], word: str) -> tuple[Reason, ...]:
    """The reasons by precedence, the one that decides `word` first (stable otherwise)."""
    found = sorted(reasons, key=lambda reason: reason.cause)
    first = deciding(found, word)
    if first is None:
        return tuple(found)
    return (first, *(reason for reason in found if reason is not first))


def deciding(reasons: Iterable[Reason], word: str) -> Reason | None:
    """The first reason, by precedence, whose cause can make `word`; None when none can."""
    causes = CAUSES.get(word, frozenset())
    found = sorted((r for r in reasons if r.cause in causes), key=lambda reason: reason.cause)
    return found[0] if found else None
