"""Where a project's CI installs the harness from: the source this installation came from.

pytest-judges is not on the package index yet, so a workflow that says
`pip install pytest-judges` would fail. The installation records its own source
(PEP 610 `direct_url.json`): a git URL and commit, or a local folder, itself often a git
clone whose remote CI can reach. The requirement pins that commit, so CI runs the
harness the project was set up with.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

from judges.storage.installation import DISTRIBUTION, direct_url_text

PLACEHOLDER = f"{DISTRIBUTION} @ git+https://REPLACE-WITH-THE-HARNESS-REPOSITORY"


@dataclass(frozen=True)
class HarnessSource:
    requirement: str  # a pip requirement line
    problem: str = ""  # why the requirement is a placeholder the user must edit

    @property
    def usable(self) -> bool:
        return not self.problem


def harness_source() -> HarnessSource:
    """The requirement that installs this very harness elsewhere, or a placeholder and why."""
    try:
        version = metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return HarnessSource(PLACEHOLDER, f"{DISTRIBUTION} is not installed as a distribution")
    text = direct_url_text()
    if text is None:  # installed from an index: pin the version
        return HarnessSource(f"{DISTRIBUTION}=={version}")
    return source_from_direct_url(text)


def source_from_direct_url(text: str) -> HarnessSource:
    """The requirement for a PEP 610 record (git URL + commit, or a local folder)."""
    try:
        record = json.loads(text)
        url = str(record["url"])
    except (ValueError, KeyError, TypeError):
        return HarnessSource(PLACEHOLDER, "its installation record (direct_url.json) is unreadable")
    vcs = record.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs") == "git" and vcs.get("commit_id"):
        return HarnessSource(f"{DISTRIBUTION} @ git+{url}@{vcs['commit_id']}")
    parsed = urlparse(url)
    if parsed.scheme != "file":
        return HarnessSource(f"{DISTRIBUTION} @ {url}")
    return _from_clone(Path(unquote(parsed.path)))


def _from_clone(folder: Path) -> HarnessSource:
    remote = _git(folder, "remote", "get-url", "origin")
    commit = _git(folder, "rev-parse", "HEAD")
    if not remote or not commit:
        return HarnessSource(
            PLACEHOLDER, f"it was installed from {folder}, which is not a git clone with a remote"
        )
    if not _reachable_from_ci(remote):
        return HarnessSource(
            PLACEHOLDER,
            f"it was installed from {folder}, whose remote {remote} is a local path CI cannot "
            "reach",
        )
    url = remote if "://" in remote else "ssh://" + remote.replace(":", "/", 1)
    return HarnessSource(f"{DISTRIBUTION} @ git+{url}@{commit}")


def _reachable_from_ci(remote: str) -> bool:
    """A network URL (https://, ssh://, git@host:path), not a folder on this machine."""
    if "://" in remote:
        return not remote.startswith("file://")
    return "@" in remote.split(":", 1)[0] and ":" in remote


def _git(folder: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""
