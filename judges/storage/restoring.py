"""How a file the user changed can be got back, said to fit the project: `git checkout --`
restores only a file git tracks, and a project not yet committed has none, so the hint
names git only for a tracked file and otherwise says what restores it instead."""

from __future__ import annotations

import subprocess
from pathlib import Path


def tracked(path: Path) -> bool:
    """Whether git tracks `path` (in its index), so `git checkout -- path` restores it. No
    git, no repository, an untracked file: False."""
    folder = path.parent
    while not folder.is_dir() and folder != folder.parent:  # a folder removed with its file
        folder = folder.parent
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "ls-files", "--error-unmatch", "--", str(path.absolute())],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def restore_hint(paths: list[Path], otherwise: str) -> str:
    """`git checkout -- PATHS` when git tracks every one of them, else `otherwise` (what
    restores them without git), with the reason git cannot."""
    if paths and all(tracked(path) for path in paths):
        return "git checkout -- " + " ".join(str(path) for path in paths)
    names = " and ".join(str(path) for path in paths)
    return f"{otherwise} (git does not track {names}, so `git checkout` cannot restore it)"
