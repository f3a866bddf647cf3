"""Nothing key-shaped is committed: cassettes, reports, results and planted sets are scanned."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Wider than the recorder's own redaction pattern on purpose: a second, independent net.
KEY_SHAPED = re.compile(
    r"(sk-ant-[A-Za-z0-9_-]{8,}|\bsk-[A-Za-z0-9_-]{16,}|Bearer\s+[A-Za-z0-9._~+/=-]{12,}"
    r"|x-api-key\s*[:=]\s*['\"]?[A-Za-z0-9_-]{16,}|\borg-[A-Za-z0-9]{16,})",
    re.IGNORECASE,
)
SCANNED = ("cassettes", "reports", "planted_sets")


def test_scanner_finds_key_shaped_strings():
    samples = [
        "Authorization: Bearer sk-proj-abcdefghijklmnop1234",
        "sk-ant-api03-abcdefgh",
        "x-api-key: abcdefghijklmnop1234",
        "openai-organization: org-AbCdEfGhIjKlMnOpQr",
    ]
    for text in samples:
        assert KEY_SHAPED.search(text), text


@pytest.mark.parametrize("folder", SCANNED)
def test_no_key_shaped_string_on_disk(folder):
    leaks = []
    for path in (p for p in sorted((ROOT / folder).rglob("*")) if p.is_file()):
        text = path.read_text(encoding="utf-8", errors="ignore")
        leaks += [
            f"{path.relative_to(ROOT)}: {m.group()[:12]}..." for m in KEY_SHAPED.finditer(text)
        ]
    assert not leaks, "key-shaped strings on disk:\n" + "\n".join(leaks)
