"""A real third-party tool installed for a proof, under the system's temporary folder (kept
between runs, so the install is paid once per machine): a Python tool in a virtual
environment that sees the harness's own dependencies (`--system-site-packages`), a Node tool
in an npm prefix. A proof that cannot reach the package registry is skipped, saying so."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import judges
from judges.storage.files import FolderBusy, FolderLock

ROOT = Path(judges.__file__).resolve().parents[1]
TOOLS = Path(tempfile.gettempdir()) / "judges-proof-tools"


@contextmanager
def _locked(name: str) -> Iterator[None]:
    """One installer at a time per tool: xdist workers may ask at once."""
    lock = FolderLock(TOOLS, f".{name}.lock")
    while True:
        try:
            lock.acquire()
            break
        except FolderBusy:
            time.sleep(1)
    try:
        yield
    finally:
        lock.release()


def tool_python(name: str, *requirements: str) -> Path:
    """The Python of a venv holding `requirements`, made once."""
    folder = TOOLS / name
    python = folder / "bin" / "python"
    done = folder / ".installed"
    with _locked(name):
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
    return python


def tool_bin(name: str, package: str, command: str) -> Path:
    """The executable `command` of the npm `package`, installed once into its own prefix."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"no npm on this machine to install {package}")
    folder = TOOLS / name
    done = folder / ".installed"
    with _locked(name):
        if not done.is_file():
            install = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder), package],
                capture_output=True, text=True, timeout=1200,
            )  # fmt: skip
            if install.returncode != 0:
                pytest.skip(
                    f"could not install {package} from the npm registry (is it reachable?): "
                    f"{install.stderr.strip()[-500:]}"
                )
            done.write_text(package + "\n", encoding="utf-8")
    return folder / "node_modules" / ".bin" / command


def run(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python args...` with this checkout's `judges` importable, no network needed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([str(python), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)  # fmt: skip
