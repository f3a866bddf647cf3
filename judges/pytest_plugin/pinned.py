"""A recording session never replaces an accepted baseline's cassettes unless told by name.

The baseline is what every later prompt version is compared with; re-recording it silently
(as the `--record=all` a stale cassette suggests would) moves the reference under the team's
feet. `--rerecord-baseline` does it on purpose, and the terminal says that it did.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from judges.core.naming import Case
from judges.sets.pins import PINS_FILE, Pin

OPTION = "--rerecord-baseline"


class BaselineGuard:
    """Which cassettes a recording session must leave alone, and what it left or replaced."""

    def __init__(self, allow: bool) -> None:
        self.allow = allow
        # (judge, version, model) -> its cassettes kept, or replaced on purpose
        self.kept: dict[tuple[str, str, str], set[Path]] = {}
        self.replaced: dict[tuple[str, str, str], set[Path]] = {}
        # folder -> whether it held a recording when this session first looked: a cassette
        # this session wrote there does not turn the rest of a new run's folder into gaps.
        self._recorded_before: dict[Path, bool] = {}

    @staticmethod
    def pinned(pins: Mapping[tuple[str, str], Pin], case: Case) -> bool:
        return (str(case.model), case.version) in pins

    def keeps(self, pins: Mapping[tuple[str, str], Pin], case: Case, path: Path) -> bool:
        """Whether recording `path` must be refused: it would replace the accepted baseline's
        cassette, or fill a gap in its recorded folder (a deleted cassette). A folder with no
        recording before this session (a run the baseline never had, such as a noise run
        enrolled after acceptance, or another --cassette-dir) replaces nothing."""
        if not self.pinned(pins, case):
            return False
        folder = path.parent
        if folder not in self._recorded_before:
            self._recorded_before[folder] = any(folder.glob("*.yaml"))
        recorded = path.is_file() or self._recorded_before[folder]
        key = (case.judge, case.version, str(case.model))
        if not recorded:
            return False
        if self.allow:
            self.replaced.setdefault(key, set()).add(path)
            return False
        self.kept.setdefault(key, set()).add(path)
        return True

    def lines(self) -> list[str]:
        """The terminal summary's account of the accepted baselines this session touched."""
        lines = [
            f"kept {len(paths)} cassette(s) of the accepted baseline {judge} prompt {version} on "
            f"{model}: "
            f"--record never replaces an accepted baseline (pinned in {PINS_FILE}); to "
            f"re-record it on purpose add {OPTION}, or record the change as a new version"
            for (judge, version, model), paths in sorted(self.kept.items())
        ]
        lines += [
            f"re-recorded {len(paths)} cassette(s) of the accepted baseline {judge} prompt "
            f"{version} on "
            f"{model} ({OPTION}): what changed is `git diff -- reports/{judge}/{version}/` "
            "once the replay has rewritten its report"
            for (judge, version, model), paths in sorted(self.replaced.items())
        ]
        return lines


def missing_hint(pins: Mapping[tuple[str, str], Pin], case: Case, path: Path) -> str:
    """For a replay miss of an accepted baseline: what to restore instead of re-recording."""
    if not BaselineGuard.pinned(pins, case):
        return ""
    return (
        f"\nPrompt {case.version} is the accepted baseline on {case.model}: its recording is "
        f"kept, not re-recorded. Restore the cassette (git checkout -- {path}) and the item or "
        f"settings it was recorded with; or re-record the baseline on purpose with {OPTION}."
    )
