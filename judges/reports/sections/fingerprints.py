"""The judges that answered a report's rows: their fingerprints per run."""

from __future__ import annotations

from collections.abc import Sequence

from judges.calls.fingerprint import describe as describe_fingerprint
from judges.core.results import JudgementRow


def fingerprints(rows: Sequence[JudgementRow]) -> dict[str, tuple[str, ...]]:
    """Per run, every judge fingerprint its rows were recorded with ("not recorded" if none)."""
    found: dict[str, set[str]] = {}
    for row in rows:
        found.setdefault(row.run, set()).add(describe_fingerprint(row.fingerprint))
    return {run: tuple(sorted(found[run])) for run in sorted(found)}
