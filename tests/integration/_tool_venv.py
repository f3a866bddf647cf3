"""A real third-party tool installed for a proof: a virtual environment under the system's
temporary folder (kept between runs, so the install is paid once per machine), seeing the
harness's own dependencies (`--system-site-packages`) and the tool on top; a proof that
cannot reach the package index is skipped, saying so."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import judges
from judges.storage.files import FolderBusy, FolderLock

ROOT = Path(judges.__file__).resolve().parents[1]
VENVS = Path(tempfile.gettempdir()) / "judges-proof-venvs"


def tool_python(name: str, *requirements: str) -> Path:
    """The Python of a venv holding `requirements`, made once (under a lock: xdist workers
    may ask at once)."""
    folder = VENVS / name
    python = folder / "bin" / "python"
    done = folder / ".installed"
    lock = FolderLock(VENVS, f".{name}.lock")
    while True:
        try:
            lock.acquire()
            break
        except FolderBusy:
            time.sleep(1)
    try:
        if not done.is_file():
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(folder)],
                           check=True)  # fmt: skip
            install = subprocess.run(
                [str(python), "-m", "pip", "install", "--quiet", *requirements],
                capture_output=True, text=True, timeout=900,
            )  # fmt: skip
            if install.returncode != 0:
                pytest.skip(
                    f"could not install {' '.join(requirements)} from the package index "
                    f"(is it reachable?): {install.stderr.strip()[-500:]}"
                )
            done.write_text(" ".join(requirements) + "\n", encoding="utf-8")
    finally:
        lock.release()
    return python


def run(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python args...` with this checkout's `judges` importable, no network needed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([str(python), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)  # fmt: skip
