"""Replay a cassette without vcrpy, an SDK or HTTP: for judgements imported from a release.

The importer writes each imported request body with the backend's own `body()`, so the
body a replay builds is byte-for-byte what the cassette holds: sending it through the
openai SDK and vcrpy's HTTP stub (most of a replay's cost) would prove nothing more.
Recorded judges keep the SDK path: there it proves the cassette still matches what a live
call would send.

Matching is vcrpy's: method, path and the parsed JSON body; each recorded interaction
answers once, in order, so repeats replay as recorded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class UnreadableCassette(Exception):
    """A cassette file exists but is not a cassette (e.g. a merge conflict in its YAML)."""


class ReplayMiss(Exception):
    """The cassette holds no unplayed response for this request."""


def _canonical(body: Any) -> str:
    return json.dumps(body, sort_keys=True)


class DirectCassette:
    """One cassette file's interactions, answered in the order they were recorded."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.metadata: dict[str, Any] = {}
        self._interactions: list[tuple[str, str, str, Any]] = []
        self._played: set[int] = set()
        if path.is_file():  # a missing file replays nothing: every request is a miss
            self._load()

    def _load(self) -> None:
        try:
            data = yaml.load(self.path.read_text(encoding="utf-8"), Loader=_LOADER)
            if not isinstance(data, dict):
                raise TypeError("it is empty or not a mapping with 'interactions'")
            metadata = data.get("metadata") or {}
            for interaction in data["interactions"]:
                request, response = interaction["request"], interaction["response"]
                if not 200 <= int(response["status"]["code"]) < 300:
                    continue  # as a recording keeps them: never a reply
                self._interactions.append(
                    (
                        str(request["method"]).upper(),
                        urlsplit(str(request["uri"])).path,
                        _canonical(json.loads(request["body"])),
                        json.loads(response["body"]["string"]),  # not JSON: a damaged file
                    )
                )
        except (UnicodeDecodeError, ValueError, KeyError, TypeError, yaml.YAMLError) as error:
            reason = " ".join(str(error).split())[:160]
            raise UnreadableCassette(f"cassette {self.path} cannot be read ({reason})") from None
        self.metadata = metadata if isinstance(metadata, dict) else {}

    def get_metadata(self, key: str, default: Any = None) -> Any:
        """The cassette's metadata entry `key` (as vcrpy's cassette offers it)."""
        return self.metadata.get(key, default)

    def answer(self, method: str, path: str, body: dict[str, Any]) -> Any:
        """The first unplayed response recorded for this request (its parsed JSON body)."""
        wanted = (method.upper(), path, _canonical(body))
        for index, (*request, response) in enumerate(self._interactions):
            if index not in self._played and tuple(request) == wanted:
                self._played.add(index)
                return response
        raise ReplayMiss(
            f"cassette {self.path} holds no unplayed response for this {method} {path} request"
        )


class _Current(threading.local):
    cassette: DirectCassette | None = None


_CURRENT = _Current()


@contextmanager
def replaying(path: Path) -> Iterator[DirectCassette]:
    """Answer this thread's direct-replay requests from the cassette at `path`."""
    opened = DirectCassette(path)
    outer, _CURRENT.cassette = _CURRENT.cassette, opened
    try:
        yield opened
    finally:
        _CURRENT.cassette = outer


def answer(method: str, path: str, body: dict[str, Any]) -> Any:
    """The response the open cassette recorded for this request; ReplayMiss if none."""
    if _CURRENT.cassette is None:
        raise ReplayMiss(f"no cassette is open to answer this {method} {path} request")
    return _CURRENT.cassette.answer(method, path, body)
