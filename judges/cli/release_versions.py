"""Which prompt version a release's strategy is filed under by `python -m judges import llmbar`:
the one it was imported under before, the one asked for, or 0.1 (LLMBar's Vanilla prompt, by
reference) for the first strategy of the first release; never one holding another strategy,
and never 0.1 unasked once it holds another release's outputs."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import yaml

from judges.calls.cassettes import FINGERPRINT_KEY
from judges.sets.imports import JUDGE, ImportError_

CONTENT = "content.toml"  # the release's name, each set's dataset hash, strategy -> version


def content_of(folder: Path) -> dict[str, Any]:
    path = folder / CONTENT
    return tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def version_for(
    strategy: str, requested: str | None, release: str, folder: Path, cassettes: Path
) -> str:
    """The prompt version a strategy's outputs go under, never one holding another's."""
    imported = dict(content_of(folder).get("strategies", {}))
    before = imported.get(strategy)
    if requested and before and requested != before:
        raise ImportError_(
            f"{release}'s {strategy} outputs are prompt {before}; import them there (leave out "
            f"--prompt-version), so one strategy is never two versions"
        )
    version = requested or before
    if version is None and imported:
        raise ImportError_(
            f"strategy {strategy!r} of {release} has no prompt version yet ("
            + ", ".join(f"{s} is prompt {v}" for s, v in sorted(imported.items()))
            + f"): add judges/prompts/pairwise/<V>/ naming {release}'s {strategy} prompt by "
            "reference, then pass --prompt-version V"
        )
    if version is None:  # the first strategy of a release: LLMBar's Vanilla prompt, 0.1
        strangers = [r for r in _releases_under("0.1", cassettes) if r != release]
        if strangers:
            raise ImportError_(
                f"prompt 0.1 holds {', '.join(strangers)}'s outputs (LLMBar's Vanilla prompt, "
                f"by reference); {release}'s {strategy} outputs are not filed there unasked: "
                "import it as a benchmark of its own with --benchmark (no prompt version "
                "needed), or pass --prompt-version V naming its prompt (add "
                "judges/prompts/pairwise/<V>/ by reference)"
            )
    version = version or "0.1"
    others = sorted(s for s, v in imported.items() if v == version and s != strategy)
    others += [
        s
        for s in _strategies_under(version, release, cassettes)
        if s != strategy and s not in others
    ]
    if others:
        raise ImportError_(
            f"prompt {version} already holds {release}'s {', '.join(others)} outputs; each "
            f"strategy is its own prompt version: import {strategy!r} with --prompt-version "
            f"naming another version (add judges/prompts/pairwise/<V>/ by reference)"
        )
    return version


def _fingerprints_under(version: str, cassettes: Path) -> list[dict[str, Any]]:
    """The fingerprint of each imported model's first cassette under `version`."""
    found = []
    for folder in sorted((cassettes / JUDGE / version).glob("imported-*")):
        first = next(iter(sorted(folder.glob("*.yaml"))), None)
        if first is not None:
            metadata = (yaml.safe_load(first.read_text(encoding="utf-8")) or {}).get("metadata")
            found.append(dict((metadata or {}).get(FINGERPRINT_KEY) or {}))
    return found


def _releases_under(version: str, cassettes: Path) -> list[str]:
    return sorted(
        {str(p["source"]) for p in _fingerprints_under(version, cassettes) if p.get("source")}
    )


def _strategies_under(version: str, release: str, cassettes: Path) -> list[str]:
    """Strategies of `release` already imported under `version` (one cassette per model)."""
    return sorted(
        {
            str(p["strategy"])
            for p in _fingerprints_under(version, cassettes)
            if p.get("source") == release and p.get("strategy")
        }
    )
