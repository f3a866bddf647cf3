"""Headless Chromium for the report pages: run it, read its console, measure its screenshots."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest
from PIL import Image

CHROMIUM = Path("/usr/bin/chromium")
needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="headless render needs /usr/bin/chromium (apt-get install -y chromium)",
)


def chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def widest_run(image: Image.Image, colour: tuple[int, int, int], rows: range) -> int:
    """The widest horizontal run of `colour` in the image's `rows`, in pixels."""
    widest = 0
    for y in rows:
        run = 0
        for x in range(image.width):
            run = run + 1 if image.getpixel((x, y)) == colour else 0
            widest = max(widest, run)
    return widest


def page_errors(stderr: str) -> list[str]:
    """Console messages and uncaught errors the page itself produced."""
    return [line for line in stderr.splitlines() if "Uncaught" in line or ":CONSOLE" in line]
