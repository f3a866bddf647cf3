"""Nothing secret is committed: cassettes, reports, results and planted sets are scanned for
key-shaped strings, credentials in URL query strings, and the value of every key variable
set while the tests run, and every piece of 12 characters of one (of 16 or more) in any
case, split by white space or base64-encoded."""

import os
import re
from pathlib import Path

import pytest

from judges.calls.credentials import KEY_ENVIRONMENT, MIN_SECRET_LENGTH
from tests._key_forms import LOCAL_KEY, fragments_in, key_forms

ROOT = Path(__file__).resolve().parents[1]
# Wider than the recorder's own redaction pattern on purpose: a second, independent net.
KEY_SHAPED = re.compile(
    r"(sk-ant-[A-Za-z0-9_-]{8,}|\bsk-[A-Za-z0-9_-]{16,}|Bearer\s+[A-Za-z0-9._~+/=-]{12,}"
    r"|x-api-key\s*[:=]\s*['\"]?[A-Za-z0-9_-]{16,}|\borg-[A-Za-z0-9]{16,})",
    re.IGNORECASE,
)
# A credential in a URL's query string (`...?key=...`, `&sig=...`).
QUERY_CREDENTIAL = re.compile(
    r"[?&](?:key|api[_-]?key|token|access_token|sig|signature)=[^&\s\"'<>]+", re.IGNORECASE
)
SCANNED = ("cassettes", "reports", "planted_sets")


def key_values() -> list[str]:
    """The values of the key variables set now (too short ones are not keys worth scanning)."""
    values = (os.environ.get(name, "") for name in KEY_ENVIRONMENT)
    return [value for value in values if len(value) >= MIN_SECRET_LENGTH]


def leaks(text: str) -> list[str]:
    found = [m.group() for m in KEY_SHAPED.finditer(text)]
    found += [m.group() for m in QUERY_CREDENTIAL.finditer(text)]
    found += [value for value in key_values() if value in text]
    return found + [piece for value in key_values() if len(value) >= 16
                    for piece in fragments_in(text, value)]  # fmt: skip


def test_scanner_finds_key_shaped_strings():
    samples = [
        "Authorization: Bearer sk-proj-abcdefghijklmnop1234",
        "sk-ant-api03-abcdefgh",
        "x-api-key: abcdefghijklmnop1234",
        "openai-organization: org-AbCdEfGhIjKlMnOpQr",
        "uri: http://127.0.0.1:8080/v1/chat/completions?key=plainvalue",
        "uri: https://example.org/v1/messages?api-version=1&API_KEY=abc",
        "https://blob.example.org/x?sv=2024&sig=abc%2Fdef",
    ]
    for text in samples:
        assert leaks(text), text
    assert not leaks("uri: http://127.0.0.1:8080/v1/chat/completions?api-version=2024-10-21")


def test_scanner_finds_the_value_of_a_key_variable(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("JUDGES_LOCAL_API_KEY", "plainvalue0123456789")  # no key shape at all
    assert leaks('{"echo": "you sent plainvalue0123456789"}')
    monkeypatch.delenv("JUDGES_LOCAL_API_KEY")
    assert not leaks('{"echo": "you sent plainvalue0123456789"}')


@pytest.mark.parametrize("form", list(key_forms(LOCAL_KEY)))
def test_scanner_finds_every_form_of_a_key_variable(monkeypatch: pytest.MonkeyPatch, form: str):
    monkeypatch.setenv("JUDGES_LOCAL_API_KEY", LOCAL_KEY)
    assert leaks(f'{{"echo": "you sent {key_forms(LOCAL_KEY)[form]}"}}')
    assert not leaks('{"echo": "you sent nothing of it"}')


@pytest.mark.parametrize("folder", SCANNED)
def test_no_secret_on_disk(folder):
    found = []
    for path in (p for p in sorted((ROOT / folder).rglob("*")) if p.is_file()):
        text = path.read_text(encoding="utf-8", errors="ignore")
        found += [f"{path.relative_to(ROOT)}: {leak[:12]}..." for leak in leaks(text)]
    assert not found, "secrets on disk:\n" + "\n".join(found)
