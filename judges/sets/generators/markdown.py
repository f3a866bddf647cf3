"""Plain text as Markdown (bullets, a bold lead, a heading), or Markdown as plain text."""

from __future__ import annotations

import random
import re

from judges.sets.generators import Generator, Options, PerturbationError, Perturbed
from judges.sets.generators._text import lines_or_sentences

# Markup at the start of a line (a heading, a bullet, a numbered item) or around words.
_LINE_MARK = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|[-*+][ \t]+|\d+[.)][ \t]+)", re.MULTILINE)
_INLINE_MARK = re.compile(r"\*\*|__|`")
STYLES = ("bullets", "bold", "heading")


def is_markdown(text: str) -> bool:
    return bool(_LINE_MARK.search(text) or _INLINE_MARK.search(text))


def markdown(text: str, seed: int, options: Options) -> Perturbed:
    if is_markdown(text):
        plain = _INLINE_MARK.sub("", _LINE_MARK.sub("", text))
        return Perturbed(plain, "Markdown removed: the same words as plain text")
    parts = [part.strip() for part in lines_or_sentences(text)]
    if not parts:
        raise PerturbationError("no text to mark up")
    style = random.Random(seed).choice(STYLES if len(parts) > 1 else ("bold",))
    if style == "bullets":
        marked = "\n".join(f"- {part}" for part in parts)
    elif style == "heading":
        marked = f"## {parts[0]}\n\n" + "\n".join(parts[1:])
    else:
        marked = " ".join([f"**{parts[0]}**", *parts[1:]])
    return Perturbed(marked, f"plain text as Markdown ({style})")


GENERATOR = Generator(
    "markdown", "invariance", "format", "plain text as Markdown, or Markdown as plain", markdown
)
