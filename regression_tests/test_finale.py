"""The finale workflow replayed offline from its recorded panel calls.

`python -m judges finale --record` recorded it on the embedded judge; this test replays
it end to end and checks the artifacts a reviewer reads.
"""

import json
from pathlib import Path

from judges.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "planted_sets" / "finale" / "finale.toml"


def test_finale_replays_offline(tmp_path):
    out = tmp_path / "finale"
    code = main(
        ["finale", "--config", str(CONFIG), "--out", str(out),
         "--cassettes", str(ROOT / "cassettes" / "finale")]
    )  # fmt: skip
    assert code == 0
    promotion = json.loads((out / "promotion.json").read_text())
    report = json.loads((out / "finale_report.json").read_text())
    rows = [json.loads(line) for line in (out / "finalists.jsonl").read_text().splitlines()]
    finalists = promotion["finalists"]
    assert 0 < len(finalists) <= promotion["rules"]["global_cap"]
    # Every (finalist, episode, dimension, judge) left a row: a score or an explicit error.
    assert rows and all(row["status"] == "ok" or row["score"] is None for row in rows)
    assert not [row for row in rows if row["status"] == "cost_cap"]
    assert "## Verdicts by stratum" in (out / "finale_report.md").read_text()
    # Replay completes every planned judgement; unparseable replies are counted, not lost.
    assert report["complete"] and report["planned"]["judgements"] == 18
    ranked = [f["run"] for stratum in report["verdicts"] for f in stratum["finalists"]]
    assert sorted(ranked) == sorted(f["run"] for f in finalists)
