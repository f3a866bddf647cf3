"""What a cassette file on disk holds, read without vcrpy: for precise replay-miss messages
(`judges.calls.cassettes`, the facade, says them) and re-record commands.

A replay that finds no response says why as exactly as the file tells: it does not exist,
it holds fewer repeats than asked (an interrupted recording), it was recorded for another
model, or the request changed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from judges.calls.backends import ModelRef

# libyaml's parser when PyYAML was built with it: a cassette holds long quoted prompts, which
# the pure-Python scanner reads character by character (about 50 ms a cassette; these are
# read for every judgement of a `--record=missing` run).
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read(path: Path) -> Any:
    """The parsed file; its shape is unchecked (callers catch what a bad one raises)."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_FAST_LOADER)


def recorded_interactions(path: Path) -> int:
    """How many calls a cassette holds (0 when it cannot be read: it will be re-recorded)."""
    try:
        data = _read(path)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return 0
    interactions = data.get("interactions") if isinstance(data, dict) else None
    return len(interactions) if isinstance(interactions, list) else 0


def miss_reason(path: Path, model: ModelRef, repeats: int = 1, sent_uri: str | None = None) -> str:
    """Why a cassette has no response for this request, as precisely as the file tells:
    `sent_uri`, the request's URI, tells a server's URL from a prompt change."""
    if not path.is_file():
        return "does not exist"
    recorded = recorded_interactions(path)
    if recorded < repeats:
        return (
            f"is incomplete: {recorded} of {repeats} repeats recorded (the recording was "
            "interrupted, or set.toml's noise_repeats or retest_draws now asks for more than "
            "it holds); `--record=missing` records it again"
        )
    models = recorded_models(path)
    if models and model.model not in models:
        return (
            f"was recorded for model {', '.join(sorted(models))}, not {model.model}: it is "
            f"in the folder of {model} by mistake (move it to its model's folder)"
        )
    recorded_paths = _recorded_paths(path)
    sent_path = urlsplit(sent_uri).path if sent_uri else None
    if sent_path and recorded_paths and sent_path not in recorded_paths:
        was = ", ".join(sorted(recorded_paths))
        return (
            f"was recorded for requests to {was}, and this one went to {sent_path} "
            f"({sent_uri}): the base URL differs, not the prompt. Replay with the "
            "--judge-base-url it was recorded with, or with none (a replay calls no "
            "server); an OpenAI-compatible server's base URL ends in /v1"
        )
    return (
        "does not match the request: the prompt file, the item's inputs or the sampling "
        "settings changed since it was recorded"
    )


def _recorded_paths(path: Path) -> set[str]:
    """The URL path of every request a cassette holds (empty when unreadable)."""
    try:
        data = _read(path)
        return {urlsplit(str(i["request"]["uri"])).path for i in data["interactions"]}
    except (OSError, UnicodeDecodeError, yaml.YAMLError, LookupError, TypeError):
        return set()


def recorded_models(path: Path) -> set[str]:
    """The `model` of every request recorded in a cassette (empty when unreadable)."""
    try:
        data = _read(path)
        bodies = [i["request"]["body"] for i in data["interactions"]]
        return {json.loads(body)["model"] for body in bodies if body}
    except (ValueError, KeyError, TypeError, yaml.YAMLError):
        return set()


_ENDPOINTS = ("/chat/completions", "/messages")
# The metadata entry of a cassette that holds the judge's fingerprint (`judges.calls.fingerprint`).
FINGERPRINT_KEY = "judge_fingerprint"


def recorded_base_url(path: Path) -> str | None:
    """The server a local judge's cassette was recorded against, for a re-record command
    to repeat as `--judge-base-url`; None for the embedded judge (it starts on its own, on
    a new port each time), hosted APIs and unreadable files."""
    try:
        data = _read(path)
        fingerprint = data.get("metadata", {}).get(FINGERPRINT_KEY, {}) or {}
        uri = str(data["interactions"][0]["request"]["uri"])
    except (OSError, UnicodeDecodeError, yaml.YAMLError, AttributeError, LookupError, TypeError):
        return None
    if fingerprint.get("backend") != "local" or "model_sha256" in fingerprint:
        return None
    for endpoint in _ENDPOINTS:
        if uri.endswith(endpoint):
            return uri.removesuffix(endpoint)
    return None


def recorded_request_text(path: Path) -> str:
    """Every string of every request body a cassette holds, one per line (its prompts, as
    sent); empty when the file cannot be read."""
    return "\n".join(recorded_request_strings(path))


def recorded_request_strings(path: Path) -> list[str]:
    """Every string of every request body a cassette holds (its prompts, each whole, as
    sent); none when the file cannot be read."""
    try:
        data = _read(path)
        bodies = [i["request"]["body"] for i in data["interactions"]]
    except (OSError, UnicodeDecodeError, yaml.YAMLError, LookupError, TypeError):
        return []
    found: list[str] = []
    for body in bodies:
        try:
            _strings(json.loads(body) if isinstance(body, str | bytes) else body, found)
        except ValueError:
            continue
    return found


def _strings(value: object, found: list[str]) -> None:
    if isinstance(value, str):
        found.append(value)
    elif isinstance(value, dict):
        for inner in value.values():
            _strings(inner, found)
    elif isinstance(value, list):
        for inner in value:
            _strings(inner, found)
