"""No credential on disk: scrub key-shaped strings, every key the session knows, and
credential query parameters of URLs.

A server may echo what it was sent (a 401 body repeating the request headers, a reply
quoting the key), and a base URL may carry a key in its query string. Shape alone misses
keys that do not look like `sk-...`, so every value the session holds is scrubbed by
value too: the key variables of the environment and the credential parameters of the base
URL (registered with `remember`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from judges.calls.backend_registry import KEY_VARIABLES

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
_TOKEN_EDGE = "A-Za-z0-9_-"

_remembered: set[str] = set()


def remember(value: str | None) -> None:
    """Scrub this value from everything written by this process from now on."""
    if value and value.strip():
        _remembered.add(value)


def known_secrets() -> list[str]:
    """Every key this process knows, longest first (a key may contain a shorter one)."""
    found = set(_remembered)
    for variable in KEY_ENVIRONMENT:
        value = os.environ.get(variable, "")
        if value.strip():
            found.add(value)
    return sorted(found, key=len, reverse=True)


def scrub(text: str, secrets: Sequence[str] | None = None) -> str:
    """`text` with every known key and every key-shaped string replaced by `<redacted>`.

    `secrets`: `known_secrets()` taken once by a caller that scrubs many strings at once
    (reading the environment for each of them was most of the cost)."""
    for secret in known_secrets() if secrets is None else secrets:
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
    """`scrub` for a body; a body holding no secret is returned as it is, undecoded."""
    secrets = [s.encode() for s in known_secrets()]
    markers = [m.encode() for m in SECRET_MARKERS]
    if not any(needle in data for needle in (*secrets, *markers)):
        return data
    text = data.decode("utf-8", errors="replace")
    cleaned = scrub(text)
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
