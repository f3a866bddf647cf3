"""Where this installation of the harness came from: its PEP 610 record (direct_url.json).

Read by the hints that install something into this very installation (the local extra)
and by `init`, which pins the harness a new project's CI installs.
"""

from __future__ import annotations

from importlib import metadata

DISTRIBUTION = "pytest-judges"


def direct_url_text(distribution: str = DISTRIBUTION) -> str | None:
    """The direct_url.json of the first installation of `distribution` that has one; None
    when it came from an index or is not installed. A source tree's own egg-info, which is
    found first when Python runs from that folder, has none and is passed over."""
    for found in metadata.distributions(name=distribution):
        text = found.read_text("direct_url.json")
        if text:
            return text
    return None
