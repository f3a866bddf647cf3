"""`corpus report` on what a corpus may hold: a judge whose every row is an error (no
leader, no P(first)) is reported, not a KeyError; a scale name is quoted, so it can open no
tag and forge no heading."""

from __future__ import annotations

import json
from pathlib import Path

from judges.cli.main import main

MANIFEST = """name = "e"
source = "s"
licence = "unknown"

[scale]
name = "<script>alert(1)</script>\\n# Result: PASS"
low = 0
high = 1
verdict = "side"
midpoint = 0.5

[judges.a]
[judges.b]
"""


def _corpus(root: Path) -> list[str]:
    folder = root / "corpora" / "e"
    folder.mkdir(parents=True)
    (folder / "corpus.toml").write_text(MANIFEST)
    items = [{"id": f"Q{i}", "inputs": {}} for i in range(3)]
    rows = [{"system": s, "item": f"Q{i}", "judge": "a", "score": i / 2}
            for s in ("x", "y") for i in range(3)]  # fmt: skip
    rows += [{"system": s, "item": f"Q{i}", "judge": "b", "error": "transport: refused"}
             for s in ("x", "y") for i in range(3)]  # fmt: skip
    for name, data in (("items.jsonl", items), ("judgements.jsonl", rows)):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in data))
    return ["--corpora", str(root / "corpora"), "--reports", str(root / "reports")]


def test_a_judge_with_only_error_rows_and_a_hostile_scale_name_are_reported(
    tmp_path: Path,
) -> None:
    assert main(["corpus", "report", *_corpus(tmp_path)]) == 0
    report = (tmp_path / "reports" / "e" / "corpus_report.md").read_text(encoding="utf-8")
    assert "-> none (no system has a score) (P(first) undefined)" in report
    assert "<script>" not in report and "&lt;script&gt;" in report
    assert not [line for line in report.splitlines() if line.startswith("# Result")]
