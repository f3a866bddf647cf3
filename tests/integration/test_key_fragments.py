"""A server that echoes the key it was sent in every form issue 46 saw leak (its body without
the prefix, split by a space or a newline, its last 20 characters, upper case, base64 of
the key and of the body) leaves no piece of it anywhere: cassette, results.jsonl,
report.json, failures.md, index.html, the JUnit XML and the terminal, for each provider.

The judge's reply puts the forms in a field the failure message shows and in its
rationale, and misses the item, so that the message, the JUnit XML and failures.md all
quote it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._key_forms import ANTHROPIC_KEY, LOCAL_KEY, OPENAI_KEY, fragments_in, key_forms

from ._support import (
    ANTHROPIC_MODEL,
    JUDGE,
    FakeJudge,
    JudgesProject,
    Received,
    load_cassette,
    product_identity_verdict,
)

VERSION = "0.3.1"
ONE = ("-k", f"test_planted_item and {VERSION}-PE-02")  # a cousin: a match is a miss
WRITTEN = ("results.jsonl", "report.json", "failures.md", "index.html", "junit.xml")


def sent_key(received: Received) -> str:
    """The key as the client sent it: OpenAI's bearer token or Anthropic's x-api-key."""
    headers = {name.lower(): value for name, value in received.headers.items()}
    return headers.get("x-api-key") or headers["authorization"].removeprefix("Bearer ")


def echoing(received: Received) -> str:
    """A verdict that matches the cousin (a miss) and quotes every form of the key."""
    forms = " | ".join(key_forms(sent_key(received)).values())
    verdict = product_identity_verdict(3, f"you sent {forms}")
    verdict["answer_product"] = f"the product of {forms}"  # shown in the failure message
    return json.dumps(verdict)


@pytest.fixture(params=["openai", "anthropic", "local"])
def provider(
    request: pytest.FixtureRequest, project: JudgesProject, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, str | None]:
    """The key and the --judge-model of one provider, its calls sent to the fake judge."""
    if request.param == "anthropic":
        monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", project.judge.anthropic_url)
        return ANTHROPIC_KEY, ANTHROPIC_MODEL
    if request.param == "openai":
        monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
        return OPENAI_KEY, "openai:gpt-4o-mini"
    monkeypatch.setenv("JUDGES_LOCAL_API_KEY", LOCAL_KEY)
    return LOCAL_KEY, None


def written_files(project: JudgesProject) -> dict[str, Path]:
    folder = project.root / "reports" / JUDGE / VERSION
    files = {name: folder / name for name in WRITTEN[:3]}
    return files | {
        "index.html": project.root / "reports" / "index.html",
        "junit.xml": project.root / "junit.xml",
    }


def test_no_form_of_an_echoed_key_reaches_disk_or_the_terminal(
    project: JudgesProject, fake_judge: FakeJudge, provider: tuple[str, str | None]
) -> None:
    key, model = provider
    fake_judge.content = echoing
    chosen = ("--judge-model", model) if model else ()

    recorded = project.run(*ONE, *chosen, "--junitxml=junit.xml", record="all")

    recorded.assert_outcomes(failed=1)
    assert [sent_key(call) for call in fake_judge.calls] == [key]  # it was sent, and echoed
    (cassette,) = project.cassettes()
    # Parsed too: YAML may fold a long body across lines, with escapes a raw scan would miss.
    texts = {
        "stdout": recorded.stdout.str(),
        "the cassette": cassette.read_text(encoding="utf-8"),
        "the cassette, parsed": json.dumps(load_cassette(cassette)),
    }
    for name, path in written_files(project).items():
        texts[name] = path.read_text(encoding="utf-8")
    leaked = {name: fragments_in(text, key) for name, text in texts.items()}
    assert {name: found for name, found in leaked.items() if found} == {}
    for name in ("stdout", "the cassette, parsed", "results.jsonl", "failures.md", "junit.xml"):
        assert "<redacted>" in texts[name] or "&lt;redacted&gt;" in texts[name], name
    everywhere = [p for p in project.root.rglob("*") if p.is_file() and p.suffix != ".py"]
    assert [p for p in everywhere if fragments_in(p.read_text(errors="replace"), key)] == []
