"""When, how and with what reports were built: the one part that differs between builds.

It is kept out of the committed report files, so that those are a pure function of the
committed inputs (prompts, planted sets, cassettes, gates) and a replay of unchanged inputs
rewrites them byte for byte. It goes to the terminal summary and to `.run.json` beside each
report, a file that git ignores.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

RUN_FILE = ".run.json"
_PACKAGES = (
    "pytest-judges", "pytest", "pytest-xdist", "vcrpy", "pydantic", "numpy", "scipy",
    "krippendorff", "openai", "anthropic",
)  # fmt: skip


@dataclass(frozen=True)
class RunMetadata:
    generated_at: str
    source: str
    session_id: str | None
    durations: dict[str, float]
    packages: dict[str, str]

    @classmethod
    def collect(
        cls, source: str, session_id: str | None, durations: Mapping[str, float]
    ) -> RunMetadata:
        packages = {"python": platform.python_version()}
        for name in _PACKAGES:
            try:
                packages[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                continue
        return cls(
            generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
            source=source,
            session_id=session_id,
            durations={name: round(value, 3) for name, value in durations.items()},
            packages=packages,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "generated_at": self.generated_at,
            "source": self.source,
            "session_id": self.session_id,
            "durations_s": self.durations,
            "packages": self.packages,
        }

    def items(self) -> list[tuple[str, str]]:
        """Label and value of each entry, for the terminal summary."""
        return [
            ("generated", self.generated_at),
            ("source", self.source),
            ("session id", self.session_id or "-"),
            ("durations", ", ".join(f"{k} {v:.3f} s" for k, v in self.durations.items()) or "-"),
            ("packages", ", ".join(f"{k} {v}" for k, v in self.packages.items())),
        ]

    def json_text(self) -> str:
        """The content of `.run.json`."""
        return json.dumps(self.as_dict(), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
