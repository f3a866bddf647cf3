"""Report prose written once for Markdown, shown in HTML: `*em*`, `**strong**`, `` `code` ``.

The same sentences explain a section in report.md and in index.html; in HTML their markup
would otherwise show literally. Everything is escaped first, so no text can inject a tag.
"""

from __future__ import annotations

import re
from html import escape

_CODE = re.compile(r"`([^`]+)`")
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_EM = re.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])")


def inline_html(text: str) -> str:
    """Escaped HTML of `text`, its inline Markdown emphasis and code turned into tags."""
    parts = _CODE.split(text)  # odd indexes are code spans: no emphasis inside them
    out = []
    for index, part in enumerate(parts):
        if index % 2:
            out.append(f"<code>{escape(part)}</code>")
        else:
            html = escape(part)
            html = _STRONG.sub(r"<strong>\1</strong>", html)
            out.append(_EM.sub(r"<em>\1</em>", html))
    return "".join(out)
