"""What identifies the judge that answered: backend, model, and what the server says of itself.

The same request (prompt, seed, temperature) gets different replies from a different build,
machine or model file, and hosted models change under one name. A recording says which judge
made it, so a comparison can tell a prompt change from a changed judge:

- every judge: backend and model name;
- the embedded llama.cpp judge: the model file's SHA-256, the server package version, that
  each request is evaluated from an empty context, and the CPU features llama.cpp reports;
- a server at --judge-base-url: its `/props` build info when it has one (llama-server);
- hosted APIs: the `system_fingerprint` and model version their responses carry.

Stored at the top of each cassette, outside the matched request, and copied into the rows.
Cassettes recorded before this have none: they show "not recorded", never a guess.
"""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from judges.calls.embedded_server import FRESH_CONTEXT

NOT_RECORDED = "not recorded"
Fingerprint = dict[str, str]

__all__ = [
    "NOT_RECORDED",
    "Fingerprint",
    "describe",
    "embedded_fingerprint",
    "from_responses",
    "server_props",
]


@lru_cache(maxsize=8)
def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _cpu_features() -> str:
    """The features llama.cpp was built for and found (`llama_print_system_info`)."""
    try:
        import llama_cpp

        info = llama_cpp.llama_print_system_info()
    except (ImportError, AttributeError, OSError):
        return ""
    text = info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info)
    return " ".join(text.split())


def embedded_fingerprint(model_path: Path) -> Fingerprint:
    """The embedded llama.cpp judge: model file hash, server version, CPU features."""
    try:
        version = metadata.version("llama-cpp-python")
    except metadata.PackageNotFoundError:
        version = "unknown"
    found = {
        "model_sha256": file_sha256(model_path),
        "server": f"llama-cpp-python {version}",
        # Recordings that reused the previous request's context answered differently.
        "context": FRESH_CONTEXT,
        "cpu_features": _cpu_features(),
    }
    return {key: value for key, value in found.items() if value}


def server_props(base_url: str, timeout: float = 2.0) -> Fingerprint:
    """llama-server's `/props` build info, when the server has that route (else nothing)."""
    root = base_url.rstrip("/").removesuffix("/v1")
    try:
        with urllib.request.urlopen(f"{root}/props", timeout=timeout) as response:
            props = json.load(response)
    except (urllib.error.URLError, OSError, ValueError):
        return {}
    if not isinstance(props, dict):
        return {}
    found = {"server": props.get("build_info"), "server_model": props.get("model_path")}
    # A model path names one machine's folders: keep only the file name.
    if isinstance(found["server_model"], str):
        found["server_model"] = Path(found["server_model"]).name
    return {key: str(value) for key, value in found.items() if value}


def _json(body: Any) -> Mapping[str, Any] | None:
    if isinstance(body, Mapping):
        body = body.get("string", body)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str):
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data if isinstance(data, Mapping) else None


def from_responses(bodies: Iterable[Any]) -> Fingerprint:
    """`system_fingerprint` and the model version hosted responses carry, every distinct one."""
    seen: dict[str, set[str]] = {"system_fingerprint": set(), "response_model": set()}
    for body in bodies:
        data = _json(body)
        if data is None:
            continue
        if isinstance(data.get("system_fingerprint"), str):
            seen["system_fingerprint"].add(data["system_fingerprint"])
        if isinstance(data.get("model"), str):
            seen["response_model"].add(data["model"])
    return {key: ", ".join(sorted(values)) for key, values in seen.items() if values}


def describe(fingerprint: Mapping[str, str] | None) -> str:
    """One line for a report: backend:model and what else identifies the judge."""
    if not fingerprint:
        return NOT_RECORDED
    head = f"{fingerprint.get('backend', '?')}:{fingerprint.get('model', '?')}"
    rest = [
        f"{key}={value[:16] if key == 'model_sha256' else value}"
        for key, value in sorted(fingerprint.items())
        if key not in {"backend", "model", "cpu_features"}
    ]
    if "cpu_features" in fingerprint:
        rest.append(f"cpu=[{fingerprint['cpu_features'][:80]}]")
    return " ".join([head, *rest])
