"""The one place that turns a judgement into names: test ids, cassette paths, report keys."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from judges.calls.backends import ModelRef

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
# What one path part built from a user's string may hold. The loaders refuse a longer
# string (judge names, versions, ids, model names: see `judges.core.spec`, `ModelRef`), so
# the cut below never makes two names one.
NAME_LIMIT = 80


def safe_name(text: str, limit: int = NAME_LIMIT) -> str:
    """A file-system-safe, bounded name: one path part, never `.` or `..` (a name of dots
    alone becomes `_`), so a name can never lead out of the folder it is joined to."""
    name = _UNSAFE.sub("_", text).strip("_")[:limit]
    return name if name.strip(".") else "_"


@dataclass(frozen=True)
class Case:
    """One planted item under one prompt version and one judge model."""

    judge: str
    version: str
    model: ModelRef
    item_id: str
    slug: str

    @property
    def test_id(self) -> str:
        return f"{self.judge}-{self.version}-{self.item_id}-{self.slug}"

    def cassette(self, root: Path, run: str = "main") -> Path:
        """`<root>/<judge>/<version>/<model>/[<run>/]<item>-<slug>.yaml`."""
        folder = root / safe_name(self.judge) / safe_name(self.version) / self.model.slug
        if run != "main":
            folder = folder / safe_name(run)
        return folder / f"{safe_name(f'{self.item_id}-{self.slug}')}.yaml"


def report_dir(root: Path, judge: str, version: str) -> Path:
    return root / safe_name(judge) / safe_name(version)
