"""No credential on disk: scrub key-shaped strings, every key the session knows, and
credential query parameters of URLs.

A server may echo what it was sent (a 401 body repeating the request headers, a reply
quoting the key), and a base URL may carry a key in its query string. Shape alone misses
keys that do not look like `sk-...`, so every value the session holds is scrubbed by
value too: the key variables of the environment and the credential parameters of the base
URL (registered with `remember`).

A key of 16 characters or more is scrubbed by its distinctive body, not its whole string:
an echo may drop the `sk-...` prefix every key of a provider shares, cut the key, split it
with white space, change its case or base64-encode it. Every piece of 12 characters or
more of the body, in any case, across any run of white space (JSON's escaped newlines, tabs
and slashes included), or of its base64 at any of the three alignments (standard and
URL-safe), becomes `<redacted>` together with whatever part of the key surrounds it.
What an echo may encode is decoded before it is searched: JSON's `\\u0073` escapes (with any
number of backslashes, as a reply quoted inside a body has), `\\x73`, percent-encoding
(`%73`) and HTML character references (`&#115;`, `&#x73;`), alone or mixed with plain
characters; the key's hex (either case) and its body reversed are forms of their own.

How it stays fast: the keys' fragments are indexed once per set of keys (`fragment_index`,
cached) by their 6-character grams. Any 12-character piece holds a gram that starts at a
multiple of 6 in the text, so a text is checked with one C-level set lookup per 6
characters (white space and case removed first), and only a text that hits is searched
for the full extent of each piece.
"""

from __future__ import annotations

import base64
import functools
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from judges.calls.backends import KEY_VARIABLES

REDACTED = "<redacted>"
# Anchored on the left so words such as "task-specific" are never mistaken for a key.
SECRET_PATTERN = re.compile(
    r"(?<![A-Za-z0-9_-])"
    r"(sk-ant-[A-Za-z0-9_-]{8,}|sk-[A-Za-z0-9_-]{16,}|Bearer\s+[A-Za-z0-9._~+/=-]{12,})"
)
# Every match of SECRET_PATTERN contains one of these: text without them skips the pattern.
SECRET_MARKERS = ("sk-", "Bearer")
KEY_ENVIRONMENT = KEY_VARIABLES
# Query parameters that carry credentials (compared lower-case).
CREDENTIAL_PARAMETERS = frozenset(
    {"key", "api_key", "api-key", "apikey", "token", "access_token", "sig", "signature"}
)
# Values this long are scrubbed wherever they occur; a shorter key (a local server's "ollama"
# or "EMPTY") only where it stands alone, so "testing" survives a key "test" but the key
# itself never reaches disk.
MIN_SECRET_LENGTH = 8
# A key this long is scrubbed by fragment: every piece of its body of MIN_FRAGMENT or more.
# Shorter pieces, and pieces of shorter keys, are too likely to be ordinary words.
MIN_FRAGMENT_KEY = 16
MIN_FRAGMENT = 12
# Prefixes every key of a provider shares (longest first): not secret, so a piece made of
# them alone is kept ("sk-ant-api03" is 12 characters).
KEY_PREFIXES = (
    "sk-ant-admin01-", "sk-ant-api03-", "sk-svcacct-", "sk-admin-", "sk-proj-", "sk-ant-", "sk-",
)  # fmt: skip
# What may split a key as echoed: white space, JSON's escapes of it, the backslash of `\/`.
_GAP = re.compile(r"(?:\s|\\[nrt]|\\(?=/))+")
# Any MIN_FRAGMENT piece holds a gram of this length starting at a multiple of it
# (2 * _GRAM - 1 <= MIN_FRAGMENT).
_GRAM = 6
_GRAMS = re.compile(f".{{{_GRAM}}}", re.DOTALL)
# Escapes an echo may write a character as: JSON (`\\u0073`, any run of backslashes), C and
# Python (`\\x73`), percent-encoding (`%73`), HTML character references (`&#115;`, `&#x73;`).
_ESCAPE = re.compile(
    r"\\+u([0-9A-Fa-f]{4})|\\+x([0-9A-Fa-f]{2})|%([0-9A-Fa-f]{2})"
    r"|&#[xX]0*([0-9A-Fa-f]{1,6});|&#0*([0-9]{1,7});"
)
# A text without one of these holds no escape (one literal scan each, in C; a "%" alone,
# as in "100%", is no escape, so percent-encoding is looked for as itself).
_ESCAPE_MARKERS = ("\\u", "\\x", "&#")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_URL_SAFE = str.maketrans("+/", "-_")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_TOKEN_EDGE = "A-Za-z0-9_-"
_MEMO_LENGTH = 200  # texts up to this long are scrubbed once each (`_scrub_short`)

_remembered: set[str] = set()


def remember(value: str | None) -> None:
    """Scrub this value from everything written by this process from now on."""
    if value and value.strip():
        _remembered.add(value)


def known_secrets() -> tuple[str, ...]:
    """Every key this process knows, longest first (a key may contain a shorter one)."""
    found = set(_remembered)
    for variable in KEY_ENVIRONMENT:
        value = os.environ.get(variable, "")
        if value.strip():
            found.add(value)
    return tuple(sorted(found, key=lambda s: (-len(s), s)))


@dataclass(frozen=True)
class _Form:
    """One way a key may be written (as is, or base64 at one alignment), lower case;
    characters before `distinct_from` come from the shared prefix alone."""

    text: str
    distinct_from: int


def _lower(text: str) -> str:
    """ASCII lower case, one character for one (str.lower may lengthen non-ASCII text)."""
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)


def _forms(key: str) -> Iterator[_Form]:
    key = _GAP.sub("", key)
    prefix = next((p for p in KEY_PREFIXES if key.startswith(p) and len(key) > len(p)), "")
    yield _Form(_lower(key), len(prefix))
    yield _Form(_lower(key[len(prefix) :][::-1]), 0)  # reversed: the body alone
    raw = key.encode()
    yield _Form(raw.hex(), 2 * len(prefix.encode()))
    for pad in range(3):  # the key after 0, 1 or 2 bytes of other text
        encoded = base64.b64encode(b"\0" * pad + raw).decode()
        # Only the characters whose 6 bits all come from the key: the first and last few
        # depend on the text around it.
        first, last = -(-8 * pad // 6), 8 * (pad + len(raw)) // 6
        distinct = max(0, -(-8 * (pad + len(prefix.encode())) // 6) - first)
        # The core, and the whole tail as written when the key ends the encoded text.
        for text in (encoded[first:last], encoded[first:]):
            yield _Form(_lower(text), distinct)
            yield _Form(_lower(text.translate(_URL_SAFE)), distinct)


class FragmentIndex:
    """The fragments of a set of keys, indexed by gram: built once per set (cached)."""

    def __init__(self, keys: Sequence[str]) -> None:
        forms = {form for key in keys for form in _forms(key)}
        self.forms = tuple(f for f in forms if len(f.text) - f.distinct_from >= MIN_FRAGMENT)
        grams: dict[str, list[tuple[_Form, int]]] = {}
        for form in self.forms:
            for at in range(form.distinct_from, len(form.text) - _GRAM + 1):
                grams.setdefault(form.text[at : at + _GRAM], []).append((form, at))
        self.grams = grams

    def scrub(self, text: str) -> str:
        if len(text) < MIN_FRAGMENT or not self.grams:
            return text
        escaped = _has_escapes(text)
        flat = _flatten(_unescape(text) if escaped else text)
        aligned = _GRAMS.findall(flat)  # the grams at multiples of _GRAM, in C
        if self.grams.keys().isdisjoint(aligned):
            return text  # the fast path: not one gram of any key
        hits = [n * _GRAM for n, gram in enumerate(aligned) if gram in self.grams]
        for piece in self._pieces(flat, hits):
            text = _spread(piece, escaped).sub(REDACTED, text)
        return text

    def _pieces(self, flat: str, hits: list[int]) -> list[str]:
        """The pieces of a key in `flat`, longest first: each hit gram grown as far as the
        key goes both ways, kept if MIN_FRAGMENT of it are distinctive."""
        found: set[str] = set()
        reached = 0
        for at in hits:
            if at + _GRAM <= reached:
                continue  # inside a piece already found
            for form, offset in self.grams[flat[at : at + _GRAM]]:
                start, begin = _grow_left(flat, at, form.text, offset)
                end, stop = _grow_right(flat, at + _GRAM, form.text, offset + _GRAM)
                if stop - max(begin, form.distinct_from) >= MIN_FRAGMENT:
                    found.add(flat[start:end])
                    reached = max(reached, end)
        return sorted(found, key=lambda piece: (-len(piece), piece))


def _has_escapes(text: str) -> bool:
    return any(marker in text for marker in _ESCAPE_MARKERS) or (
        "%" in text and _PERCENT.search(text) is not None
    )


def _unescaped(found: re.Match[str]) -> str:
    json, byte, percent, html_hex, html_decimal = found.groups()
    code = int(json or byte or percent or html_hex, 16) if not html_decimal else int(html_decimal)
    return chr(code) if code < 0x110000 else found.group()


def _unescape(text: str) -> str:
    """The text with every escape `_ESCAPE` knows written as its character."""
    return _ESCAPE.sub(_unescaped, text)


def _flatten(text: str) -> str:
    """The text without its gaps, in ASCII lower case (`str.split` is the quick way)."""
    joined = _GAP.sub("", text) if "\\" in text else "".join(text.split())
    return _lower(joined)


def _grow_left(flat: str, at: int, form: str, offset: int) -> tuple[int, int]:
    while at > 0 and offset > 0 and flat[at - 1] == form[offset - 1]:
        at, offset = at - 1, offset - 1
    return at, offset


def _grow_right(flat: str, at: int, form: str, offset: int) -> tuple[int, int]:
    while at < len(flat) and offset < len(form) and flat[at] == form[offset]:
        at, offset = at + 1, offset + 1
    return at, offset


def _written(character: str) -> str:
    """A character of a piece as a text may write it: as is, or escaped in either case."""
    forms = [re.escape(character)]
    cases = {character.lower(), character.upper()}
    for code in sorted(ord(case) for case in cases if len(case) == 1):
        forms.append(rf"\\+u{code:04x}|&#x0*{code:x};|&#0*{code};")
        if code < 0x100:
            forms.append(rf"\\+x{code:02x}|%{code:02x}")
    return f"(?:{'|'.join(forms)})"


@functools.lru_cache(maxsize=256)
def _spread(piece: str, escaped: bool = False) -> re.Pattern[str]:
    """A piece found in the flattened text, as written in the text: any case, gaps between
    its characters (the gaps inside are redacted with it), and, in a text with escapes, each
    character as is or escaped."""
    gap = f"(?:{_GAP.pattern})?"
    characters = [_written(c) if escaped else re.escape(c) for c in piece]
    return re.compile(gap.join(characters), re.IGNORECASE)


@functools.lru_cache(maxsize=32)
def _index_of(secrets: tuple[str, ...]) -> FragmentIndex:
    return FragmentIndex([s for s in secrets if len(s.strip()) >= MIN_FRAGMENT_KEY])


def fragment_index(secrets: Sequence[str]) -> FragmentIndex:
    """The fragment index of the keys among `secrets` long enough to be scrubbed by piece."""
    return _index_of(secrets if isinstance(secrets, tuple) else tuple(secrets))


def scrub(text: str, secrets: Sequence[str] | None = None) -> str:
    """`text` with every known key, every piece of one and every key-shaped string replaced
    by `<redacted>`.

    `secrets`: `known_secrets()` taken once by a caller that scrubs many strings at once
    (reading the environment for each of them was most of the cost)."""
    secrets = known_secrets() if secrets is None else tuple(secrets)
    if len(text) <= _MEMO_LENGTH:
        return _scrub_short(text, secrets)
    return _scrub(text, secrets)


@functools.lru_cache(maxsize=8192)
def _scrub_short(text: str, secrets: tuple[str, ...]) -> str:
    """Rows repeat the same short strings (judge, model, category, verdict fields) across
    thousands of rows: each is scrubbed once."""
    return _scrub(text, secrets)


def _scrub(text: str, secrets: tuple[str, ...]) -> str:
    if secrets:
        text = fragment_index(secrets).scrub(text)
    for secret in secrets:
        if secret not in text:
            continue
        if len(secret) >= MIN_SECRET_LENGTH:
            text = text.replace(secret, REDACTED)
        else:
            alone = rf"(?<![{_TOKEN_EDGE}]){re.escape(secret)}(?![{_TOKEN_EDGE}])"
            text = re.sub(alone, REDACTED, text)
    if any(marker in text for marker in SECRET_MARKERS):
        text = SECRET_PATTERN.sub(REDACTED, text)
    return text


def scrub_bytes(data: bytes) -> bytes:
    """`scrub` for a body; a body holding no secret is returned as it is."""
    secrets = known_secrets()
    markers = [m.encode() for m in SECRET_MARKERS]
    if not secrets and not any(marker in data for marker in markers):
        return data
    text = data.decode("utf-8", errors="replace")
    cleaned = scrub(text, secrets)
    return data if cleaned == text else cleaned.encode()


def is_credential(name: str, value: str) -> bool:
    return name.lower() in CREDENTIAL_PARAMETERS or (bool(value) and value in known_secrets())


def credential_values(url: str) -> list[str]:
    """The credential values a URL carries: query parameters and a password."""
    parts = urlsplit(url)
    values = [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if is_credential(k, v)]
    return values + ([parts.password] if parts.password else [])


def strip_credentials(url: str) -> str:
    """The URL without credential query parameters and without user and password."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    kept = [(k, v) for k, v in query if not is_credential(k, v)]
    netloc = parts.netloc.rpartition("@")[2]
    if len(kept) == len(query) and netloc == parts.netloc:
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(kept), parts.fragment))
