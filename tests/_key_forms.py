"""Forms of a key a server may echo, and a brute-force oracle that finds any of them.

The oracle is written apart from `judges.calls.credentials` on purpose: it tries every
12-character window of the key's body (and of the body's base64 encodings) against the
text with white space and JSON escapes removed, in lower case, one window at a time.
"""

from __future__ import annotations

import base64
import html
import re
import urllib.parse

FRAGMENT = 12  # the shortest piece of a key's body that must never reach disk
# Fake keys of the three providers, each with the prefix every key of its kind shares.
OPENAI_KEY = "sk-proj-Zq7Hw2Kd9Lm4Xp1Rt6Vb3Ny8Fs5Gj0Ac"
ANTHROPIC_KEY = "sk-ant-api03-Qw3Er5Ty7Ui9Op1As2Df4Gh6Jk8Lz0Xc-Vb_Nm"
LOCAL_KEY = "Lk4Jh7Gf2Ds9Ap3Ow8Ie1Ur5YtMn6Bv"  # no recognisable shape at all
# The prefixes every key of a provider shares, longest first: no secret.
SHARED_PREFIXES = ("sk-ant-api03-", "sk-proj-", "sk-ant-", "sk-")
_GAPS = re.compile(r"\s+|\\[nrt]")
_ESCAPES = re.compile(r"\\+[ux]([0-9A-Fa-f]{2,4})")
_HEX_RUN = re.compile(r"[0-9A-Fa-f]{24,}")


def _character(found: re.Match[str]) -> str:
    return chr(int(found.group(1), 16))


def body_of(key: str) -> str:
    """The key without the prefix it shares with every key of its provider."""
    prefix = next((p for p in SHARED_PREFIXES if key.startswith(p)), "")
    return key.removeprefix(prefix)


def _b64(data: str, urlsafe: bool = False) -> str:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    return encode(data.encode()).decode()


def key_forms(key: str) -> dict[str, str]:
    """Each way issue 46 saw a key echoed, by name."""
    body, half = body_of(key), len(key) // 2
    return {
        "body without its prefix": body,
        "split by a space": f"{key[:half]} {key[half:]}",
        "split by a newline": f"{key[:half]}\n{key[half:]}",
        "last 20 characters": key[-20:],
        "upper case": key.upper(),
        "base64 of the key": _b64(key),
        "base64 of the body": _b64(body),
        "url-safe base64 of the body after one byte": _b64("x" + body, urlsafe=True)[2:],
        "base64 of the body after two bytes": _b64("xy" + body)[3:],
        "JSON \\u escapes": "".join(f"\\u{ord(c):04x}" for c in key),
        "JSON \\u escapes twice (a reply inside a body)": "".join(
            f"\\\\u{ord(c):04X}" for c in body
        ),
        "escapes mixed with plain characters": "".join(
            f"\\u{ord(c):04x}" if n % 2 else c for n, c in enumerate(body)
        ),
        "percent-encoding": "".join(f"%{ord(c):02X}" for c in key),
        "HTML character references": "".join(f"&#{ord(c)};" for c in body),
        "hex": key.encode().hex(),
        "upper-case hex of the body": body.encode().hex().upper(),
        "reversed": key[::-1],
    }


def _windows(text: str) -> set[str]:
    return {text[i : i + FRAGMENT].lower() for i in range(len(text) - FRAGMENT + 1)}


def fragment_windows(key: str) -> set[str]:
    """Every window that must not show: of the body, and of its base64 at each alignment
    (the four characters at each end of an encoding depend on what surrounds it)."""
    body = body_of(key)
    found = _windows(body)
    for pad in ("", "x", "xy"):
        for urlsafe in (False, True):
            found |= _windows(_b64(pad + body, urlsafe)[4:-4])
    return found


def _decoded(text: str) -> list[str]:
    """`text` as written, with its escapes decoded, with its runs of hex decoded (at both
    parities), and reversed: every view in which a piece of a key must not show."""
    unescaped = html.unescape(urllib.parse.unquote(_ESCAPES.sub(_character, text)))
    views = [text, unescaped]
    for run in _HEX_RUN.findall(_GAPS.sub("", unescaped)):
        for start in (0, 1):
            even = run[start : start + (len(run) - start) // 2 * 2]
            views.append(bytes.fromhex(even).decode("latin-1"))
    return views + [view[::-1] for view in views]


def fragments_in(text: str, key: str) -> list[str]:
    """The windows of `key` found in `text`, white space, JSON escapes and case ignored, in
    every view `_decoded` gives."""
    windows = fragment_windows(key)
    found = set()
    for view in _decoded(text):
        flat = _GAPS.sub("", view).replace("\\/", "/").lower()
        found |= {window for window in windows if window in flat}
    return sorted(found)
