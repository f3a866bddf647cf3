"""Render every reports/<judge>/<version>/index.html to a PNG with headless Chromium.

Run by hand: python benchmarks/screenshot_reports.py [--reports reports] [--out DIR]
          or python benchmarks/screenshot_reports.py --quick   (the first page only, small)
Screenshots go outside the repository (default /tmp/judges-screenshots/), because report
folders are committed and a screenshot differs on every machine; the paths are printed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
)  # fmt: skip


def screenshot(chromium: str, page: Path, target: Path, width: int, height: int) -> bool:
    """One page to one PNG; False (and Chromium's last words on stderr) when it fails."""
    with tempfile.TemporaryDirectory(prefix="judges-chromium-") as profile:
        done = subprocess.run(
            [
                chromium,
                *FLAGS,
                f"--user-data-dir={profile}",
                f"--screenshot={target}",
                f"--window-size={width},{height}",
                page.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    if done.returncode != 0 or not target.is_file():
        print(f"failed: {page}\n{done.stderr[-1000:]}", file=sys.stderr)
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=Path, default=Path("reports"))
    parser.add_argument("--out", type=Path, default=Path("/tmp/judges-screenshots"))
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=2400)
    parser.add_argument("--quick", action="store_true", help="the first page only, 480x360")
    args = parser.parse_args(argv)
    if args.quick:
        args.width, args.height = 480, 360
    if not Path(args.chromium).exists():
        print(f"no Chromium at {args.chromium}: apt-get install -y chromium", file=sys.stderr)
        return 2
    pages = sorted(args.reports.glob("*/*/index.html"))[: 1 if args.quick else None]
    if not pages:
        print(f"no {args.reports}/*/*/index.html: run `python -m judges report`", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for page in pages:
        target = args.out / f"{page.parent.parent.name}-{page.parent.name}.png"
        if screenshot(args.chromium, page, target, args.width, args.height):
            print(target)
        else:
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
