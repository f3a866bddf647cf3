"""Untrusted text quoted in Markdown: a judge's reply, rationale or error, an item's
field, a model's name or fingerprint. Markdown passes HTML through, so a quoted
`<script>` or `</table>` would reach a viewer as markup, and a quoted `|` or line break
would split a table row. The HTML pages escape on their own; these are the Markdown files'.

Inside a fenced code block nothing is markup: a fence quotes raw replies as they are.
"""

from __future__ import annotations

import re

__all__ = ["md_cell", "md_prose", "md_text"]

_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
# What could open markup inside prose: a tag, an autolink or a comment (`<` then a letter,
# `/`, `!` or `?`), and an entity (`&` then a letter or `#`).
_MARKUP_START = re.compile(r"<(?=[A-Za-z/!?])|&(?=[A-Za-z#])")


def md_text(text: str) -> str:
    """A wholly untrusted string, on one line, with `&`, `<` and `>` escaped."""
    return " ".join(str(text).splitlines()).translate(_ESCAPES)


def md_cell(text: str) -> str:
    """`md_text` that also stays in one table cell: `|` escaped, white space runs as one space."""
    return " ".join(str(text).split()).translate(_ESCAPES).replace("|", "\\|")


def md_prose(text: str) -> str:
    """The harness's own sentence with a user's string inside it (a reason naming a model):
    only what could open markup is escaped, so the sentence's own `p < 0.05`, `->` and `>=`
    read as written; on one line, like `md_text`."""
    return _MARKUP_START.sub(lambda found: md_text(found.group()), " ".join(text.splitlines()))
