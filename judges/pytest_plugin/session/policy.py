"""Which cassettes a run records and which it replays: the record mode, an interrupted
recording, imported judgements, and the accepted baselines' cassettes it keeps."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from judges.calls.backends import is_imported
from judges.calls.cassettes import recorded_interactions
from judges.core.naming import Case
from judges.pytest_plugin.pinned import BaselineGuard, missing_hint
from judges.pytest_plugin.session.settings import RecordMode, Settings
from judges.sets.pins import Pin

Pins = Callable[[Case], dict[tuple[str, str], Pin]]


class RecordPolicy:
    """Record or replay, per cassette; `pins` gives a case's accepted baselines' pins."""

    def __init__(self, settings: Settings, baselines: BaselineGuard, pins: Pins) -> None:
        self.settings = settings
        self.baselines = baselines
        self.pins = pins

    def should_record(self, path: Path, repeats: int, case: Case, run: str) -> bool:
        if is_imported(case.model):
            return False  # released by others: replayed, never called (re-import instead)
        mode = self.settings.record
        # An interrupted recording leaves fewer interactions than the test needs.
        wanted = mode is RecordMode.ALL or (mode is RecordMode.MISSING and (
            not path.is_file() or recorded_interactions(path) < repeats))  # fmt: skip
        # Only a cassette this mode would record counts as one the baseline guard kept.
        return wanted and not self.baselines.keeps(self.pins(case), case, run, path)

    def kept_hint(self, case: Case, shown_path: str, run: str) -> str:
        """Why a missing cassette was not recorded: an accepted baseline's, kept on purpose
        (empty when it is not one)."""
        return missing_hint(self.pins(case), case, shown_path, self.baselines, run)
