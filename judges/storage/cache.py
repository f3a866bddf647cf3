"""The user's cache folder: what the harness may rebuild at any time (the corpus store's
Parquet files, the fingerprints of unchanged reports), kept out of every project."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """JUDGES_CACHE_DIR, else $XDG_CACHE_HOME/judges, else ~/.cache/judges."""
    if folder := os.environ.get("JUDGES_CACHE_DIR"):
        return Path(folder)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "judges"
