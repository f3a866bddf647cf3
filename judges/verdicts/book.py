"""A session's verdicts, each built once: every set-level test of a version reads the same
object, and the inputs of each judge are loaded once."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from judges.core.spec import JudgeSpec
from judges.stats.estimates.memo import Memo
from judges.verdicts.inputs import Sources, load_sources
from judges.verdicts.verdict import ModelVerdict

__all__ = ["VerdictBook"]


class VerdictBook:
    """Verdicts by (judge, version, model), and each judge's inputs, for one session."""

    def __init__(
        self, catalog: Callable[[], Mapping[str, JudgeSpec]], planted_root: Path, memo: Memo
    ) -> None:
        self._catalog = catalog  # the session's, loaded when first asked for
        self._planted_root = planted_root
        self._memo = memo
        self._sources: dict[str, Sources] = {}
        self._verdicts: dict[tuple[str, str, str], ModelVerdict] = {}

    def sources(self, judge: str) -> Sources:
        if judge not in self._sources:
            found = load_sources(judge, self._catalog(), self._planted_root)
            self._sources[judge] = replace(found, memo=self._memo)
        return self._sources[judge]

    def verdict(
        self, judge: str, version: str, model: str, build: Callable[[Sources], ModelVerdict]
    ) -> ModelVerdict:
        key = (judge, version, model)
        if key not in self._verdicts:
            self._verdicts[key] = build(self.sources(judge))
        return self._verdicts[key]
