"""Judge fingerprints: what responses and the embedded server say, and how reports show it."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

from judges.calls.embedded_server import FRESH_CONTEXT, from_empty_context
from judges.calls.fingerprint import (
    NOT_RECORDED,
    describe,
    embedded_fingerprint,
    file_sha256,
    from_responses,
    server_props,
)
from judges.core.results import JudgementRow
from judges.reports.render.comparison import comparison_markdown
from judges.stats.regression.comparison import compare_versions


def test_hosted_responses_give_every_distinct_system_fingerprint() -> None:
    bodies = [
        {"string": json.dumps({"model": "gpt-4o-2024-11-20", "system_fingerprint": "fp_b"})},
        {"string": json.dumps({"model": "gpt-4o-2024-11-20", "system_fingerprint": "fp_a"})},
        {"string": b"not json"},
        None,
    ]
    assert from_responses(bodies) == {
        "system_fingerprint": "fp_a, fp_b",
        "response_model": "gpt-4o-2024-11-20",
    }
    assert from_responses([{"string": "[1, 2]"}]) == {}


def test_the_model_file_hash_is_its_sha256(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF" + bytes(range(256)) * 5000)
    assert file_sha256(model) == hashlib.sha256(model.read_bytes()).hexdigest()
    found = embedded_fingerprint(model)
    assert found["model_sha256"] == file_sha256(model)
    assert found["server"].startswith("llama-cpp-python ")
    if importlib.util.find_spec("llama_cpp") is not None:  # the `local` extra
        assert found["cpu_features"].startswith("CPU :"), found


def test_a_server_without_props_adds_nothing() -> None:
    assert server_props("http://127.0.0.1:9/v1", timeout=0.5) == {}


def test_describe_says_not_recorded_rather_than_guessing() -> None:
    assert describe(None) == NOT_RECORDED
    assert describe({}) == NOT_RECORDED
    line = describe({"backend": "openai", "model": "gpt-4o", "system_fingerprint": "fp_1"})
    assert line == "openai:gpt-4o system_fingerprint=fp_1"


def _row(version: str, item: str, met: bool, fingerprint: dict[str, str] | None) -> JudgementRow:
    return JudgementRow(
        judge="j", prompt_version=version, prompt_hash="h", model="local:m", item_id=item,
        category="cousin", control=False, status="ok", verdict={"score": 1}, expect=[],
        met=met, fingerprint=fingerprint,
    )  # fmt: skip


def test_comparison_flags_mixed_fingerprints_with_the_rerecord_command() -> None:
    one, two = {"backend": "local", "model": "m", "x": "1"}, {"backend": "local", "model": "m"}
    before = [_row("1", f"I-{i}", True, one) for i in range(3)]
    mixed = compare_versions(
        "j", ("1", before), ("2", [_row("2", f"I-{i}", True, two) for i in range(3)]), []
    )[0]
    assert mixed.mixed_fingerprints
    text = comparison_markdown(mixed)
    assert "**Mixed judge fingerprints:** 1 was judged by local:m x=1, 2 by local:m" in text
    assert 'pytest regression_tests --record=all --judge-model local:m -k "j-1-"' in text
    same = compare_versions(
        "j", ("1", before), ("2", [_row("2", f"I-{i}", True, one) for i in range(3)]), []
    )[0]
    assert not same.mixed_fingerprints
    legacy = [_row("2", f"I-{i}", True, None) for i in range(3)]
    old = compare_versions(
        "j", ("1", [_row("1", f"I-{i}", True, None) for i in range(3)]), ("2", legacy), []
    )[0]
    assert not old.mixed_fingerprints
    assert "Judge fingerprint (both versions): not recorded" in comparison_markdown(old)
    assert compare_versions("j", ("1", before), ("2", legacy), [])[0].mixed_fingerprints


def test_rows_without_a_fingerprint_keep_their_bytes() -> None:
    assert "fingerprint" not in _row("1", "I-1", True, None).dump()
    assert _row("1", "I-1", True, {"backend": "b"}).dump()["fingerprint"] == {"backend": "b"}


class _FakeLlama:
    """What `from_empty_context` relies on: `reset()` empties the context."""

    def __init__(self) -> None:
        self.n_tokens = 0
        self.seen: list[int] = []

    def reset(self) -> None:
        self.n_tokens = 0

    def generate(self, tokens: list[int]) -> list[int]:
        self.seen.append(self.n_tokens)  # tokens already in the context, reusable
        self.n_tokens = len(tokens)
        return tokens


def test_the_embedded_server_evaluates_every_request_from_an_empty_context() -> None:
    plain, fresh = _FakeLlama(), _FakeLlama()
    wrapped = from_empty_context(_FakeLlama.generate)
    for tokens in ([1, 2, 3], [1, 2, 4], [1, 2, 4]):
        plain.generate(tokens)
        wrapped(fresh, tokens)
    assert plain.seen == [0, 3, 3]  # llama-cpp-python as shipped: the context carries over
    assert fresh.seen == [0, 0, 0]
    assert wrapped.__name__ == "generate"


def test_the_embedded_fingerprint_says_how_the_context_is_kept(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    assert embedded_fingerprint(model)["context"] == FRESH_CONTEXT
