"""docs/pairwise-benchmarks.md's walkthrough runs as printed: its bash blocks, in order, in an
empty folder (write the raw benchmark, convert it, import it, read its leaderboard), and
the leaderboard it shows is the one the commands print, to the character."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import judges

DOC = Path(judges.__file__).resolve().parent.parent / "docs" / "pairwise-benchmarks.md"
SECTION = "### Step by step: convert, import, read the leaderboard"


def _blocks() -> tuple[list[str], str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split(SECTION, 1)[1].split("\n### ", 1)[0]
    fenced = re.findall(r"^```(\w*)\n(.*?)^```$", section, flags=re.DOTALL | re.MULTILINE)
    bash = [body for kind, body in fenced if kind == "bash"]
    shown = [body for kind, body in fenced if not kind]
    return bash, shown[0]


def test_the_walkthrough_runs_as_printed(tmp_path: Path) -> None:
    bash, shown = _blocks()
    assert len(bash) == 3
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    printed = ""
    for block in bash:
        done = subprocess.run(["bash", "-euc", block], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        printed = done.stdout
    leaderboard = printed.split("see it ranked: ", 1)[1].split("\n", 1)[1]
    assert leaderboard.rstrip("\n") == shown.rstrip("\n")
    assert "published figures: 4 of 4 reproduced exactly" in printed
