"""docs/corpus.md's CSV walkthrough runs as printed: its bash blocks, in order, in an empty
folder; what the import prints is the doc's block to the character (the folder's own path
left out), and the report's judge-versus-human section is the doc's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import judges

DOC = Path(judges.__file__).resolve().parent.parent / "docs" / "corpus.md"
SECTION = "#### Step by step: a CSV of graded support answers"


def _blocks() -> tuple[list[str], list[str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split(SECTION, 1)[1].split("\n### ", 1)[0]
    fenced = re.findall(r"^```(\w*)\n(.*?)^```$", section, flags=re.DOTALL | re.MULTILINE)
    return [b for kind, b in fenced if kind == "bash"], [b for kind, b in fenced if not kind]


def test_the_csv_walkthrough_runs_as_printed(tmp_path: Path) -> None:
    bash, shown = _blocks()
    assert len(bash) == 2 and len(shown) == 2
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    printed = []
    for block in bash:
        done = subprocess.run(["bash", "-euc", block], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        printed.append(done.stdout.replace(f"{tmp_path}/", ""))
    assert printed[0] == shown[0]
    report = tmp_path / "reports" / "corpora" / "support_grades" / "corpus_report.md"
    assert report.read_text(encoding="utf-8").endswith(shown[1])
    queue = tmp_path / "reports" / "corpora" / "support_grades" / "review_queue.jsonl"
    assert len(queue.read_text(encoding="utf-8").splitlines()) == 2
