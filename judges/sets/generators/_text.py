"""What several generators share: a text's lines, or its sentences when it has one line."""

from __future__ import annotations

from judges.sets.perturb import sentences


def lines_or_sentences(text: str) -> list[str]:
    """The text's non-blank lines; a text on one line, its sentences instead."""
    lines = [line for line in text.split("\n") if line.strip()]
    return lines if len(lines) > 1 else sentences(text)


def words_only(text: str) -> str:
    """The text without white space: what a format-only edit must leave unchanged."""
    return "".join(text.split())
