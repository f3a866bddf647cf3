"""Which reason decides a verdict: every reason in one stated order of precedence.

A verdict has many reasons (a floor failed, a regression against the accepted baseline, new
failures, a chance test at chance, a gate that is blind). A reader needs the one that
decides it first, so every format (report.md's Result line, index.html's banner and
overview row, report.json, the terminal and the GitHub step summary) leads with the same
one: the first reason, in the order of `Cause`, of those that belong to the verdict's word.

The order is `Cause`'s, stated with why in `judges.verdicts.vocabulary` beside the words.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from judges.verdicts.vocabulary import WORDS, Cause

__all__ = ["CAUSES", "Cause", "Reason", "deciding", "ordered"]

# The causes that can make each word (its entry in the registry); the deciding reason is
# the first of these.
CAUSES: dict[str, frozenset[Cause]] = {name: word.causes for name, word in WORDS.items()}


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
