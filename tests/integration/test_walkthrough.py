"""docs/your-own-judge.md, run as written: init, record, replay, baseline, report.

In an empty git repository (pytester's folder), against the fake judge on 127.0.0.1, with
no file of the harness copied or edited: the commands of the walkthrough's step 3, in its
order, end in a green replay and reports that match their results.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from judges.core.spec import load_catalog

from ._support import FakeJudge
from ._walkthrough import INNER_OPTIONS, MODEL, command

DOC = Path(__file__).resolve().parents[2] / "docs" / "your-own-judge.md"


def walkthrough_commands() -> list[str]:
    """Step 3's commands, as the page prints them."""
    text = DOC.read_text(encoding="utf-8")
    step = text.split("## 3. Record, replay, accept", 1)[1]
    block = re.search(r"```bash\n(.*?)```", step, re.S)
    assert block is not None
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_walkthrough_runs_as_written(
    repository: Path, pytester: pytest.Pytester, fake_judge: FakeJudge
) -> None:
    commands = walkthrough_commands()
    assert commands[0].startswith("python -m pytest --record --judge-model local:NAME")
    assert commands[1:] == [
        "python -m pytest",
        "python -m judges baseline support_reply --accept 1.0",
        "python -m pytest --snapshot-update",
        "python -m pytest",
        "python -m judges report --check",
    ]

    code, out = command(["init", "support_reply", "--model", MODEL])
    assert code == 0, out
    assert "wrote judge_tests/test_judges.py" in out
    # The test module pulls the suite in; it copies no test code.
    test_module = (repository / "judge_tests" / "test_judges.py").read_text()
    assert "def test_" not in test_module

    # 1. Record: every item, the noise floor (2 items x 3) and the retest run, live.
    live = ["--record", "--judge-model", MODEL, "--judge-base-url", fake_judge.url]
    recorded = pytester.runpytest_inprocess(*INNER_OPTIONS, *live)
    assert len(fake_judge.calls) == 6 + 2 * 3 + 6, [r.path for r in fake_judge.received]
    # SR-03 is missed; the set-level tests (gates, fitness, table, noise floor, retest) wait
    # for replay.
    recorded.assert_outcomes(passed=5 + 2 + 6, failed=1, skipped=5, deselected=5)
    cassettes = sorted((repository / "cassettes" / "support_reply" / "1.0").rglob("*.yaml"))
    assert len(cassettes) == 6 + 2 + 6

    # 2. Replay, offline: the miss fails, and the verdict table has no snapshot yet.
    replayed = pytester.runpytest_inprocess(*INNER_OPTIONS)
    assert replayed.ret == 1
    replayed.stdout.fnmatch_lines(["*SR-03*expected accuracy <= 1*returned accuracy=3*"])

    # 3. Accept 1.0: the miss becomes an accepted miss, and 1.0 the baseline.
    # Six items cannot show any judge beats chance: no test decides, so none fails either.
    code, out = command(["baseline", "support_reply", "--accept", "1.0"])
    assert code == 0, out
    assert "fitness: support_reply 1.0 on " in out and ": FIT" in out
    planted = repository / "planted_sets" / "support_reply"
    misses = tomllib.loads((planted / "expectations.toml").read_text())
    assert list(misses[MODEL]["1.0"]) == ["SR-03"]
    assert tomllib.loads((planted / "gates.toml").read_text())[MODEL]["1.0"]["baseline"] == "1.0"

    # 4. Accept the verdict table, then 5. the replay is green.
    assert pytester.runpytest_inprocess(*INNER_OPTIONS, "--snapshot-update").ret == 0
    calls = len(fake_judge.calls)
    green = pytester.runpytest_inprocess(*INNER_OPTIONS)
    assert green.ret == 0, green.stdout.str()
    # One set-level test has nothing to decide (baseline suggests no floor for a kappa or an
    # sd, which one run cannot bound): skipped with that reason, never passed.
    green.assert_outcomes(passed=5 + 2 + 6 + 4, skipped=1, xfailed=1, deselected=5)
    green.stdout.fnmatch_lines(["*set-level test(s) skipped their gates: *gate decided anything*"])
    assert len(fake_judge.calls) == calls  # offline: no call reached the judge

    # 6. The committed reports are what the results produce.
    code, out = command(["report", "--check"])
    assert code == 0, out
    report = (repository / "reports" / "support_reply" / "1.0" / "report.md").read_text()
    assert report.startswith("# support_reply, prompt 1.0: PASS")
    assert "PASS (fitness undecided: no chance test can decide at this set's size" in report
    # No scratch file is left for `git add -A` to stage.
    assert not (repository / ".judges-tmp").exists()

    # Replaying another model than the one recorded names the recorded one and the fix.
    toml = repository / "judge_prompts" / "support_reply" / "judge.toml"
    toml.write_text(toml.read_text().replace(MODEL, "local:other"))
    load_catalog.cache_clear()  # in-process runs share the loaded judges
    other = pytester.runpytest_inprocess(*INNER_OPTIONS)
    other.stdout.fnmatch_lines(
        ["*support_reply prompt 1.0 on local:other has no recordings yet (recorded for "
         "local-fake-judge: replay with --judge-model, or set baseline_model in*judge.toml)*"]
    )  # fmt: skip


def test_a_new_version_by_the_recipe_alone_gets_every_run(
    repository: Path, pytester: pytest.Pytester, fake_judge: FakeJudge
) -> None:
    """README workflow 2: a prompt file, nothing else, then `--record -k <judge>-<version>`:
    the noise floor and the retest follow the judge, and the report is complete. A list in
    set.toml that leaves the version out makes its report INCOMPLETE, naming the run."""
    code, out = command(["init", "support_reply", "--model", MODEL])
    assert code == 0, out
    live = ["--record", "--judge-model", MODEL, "--judge-base-url", fake_judge.url]
    pytester.runpytest_inprocess(*INNER_OPTIONS, *live)
    prompts = repository / "judge_prompts" / "support_reply"
    (prompts / "1.1.md").write_text((prompts / "1.0.md").read_text(), encoding="utf-8")
    load_catalog.cache_clear()  # in-process runs share the loaded judges
    calls = len(fake_judge.calls)
    recorded = pytester.runpytest_inprocess(*INNER_OPTIONS, *live, "-k", "support_reply-1.1")
    # Six items, the noise floor (2 items x 3 repeats) and the retest, said before calling.
    recorded.stderr.fnmatch_lines(
        [f"judges record: 18 calls to make on {MODEL}: main 6, retest 6, noise 6 (2 cassettes)"]
    )
    assert len(fake_judge.calls) - calls == 6 + 2 * 3 + 6
    version = repository / "cassettes" / "support_reply" / "1.1"
    assert {p.parent.name for p in version.rglob("*.yaml")} == {
        "local-fake-judge",
        "noise",
        "retest",
    }
    pytester.runpytest_inprocess(*INNER_OPTIONS, "-k", "support_reply-1.1")  # the replay's report
    report = (repository / "reports" / "support_reply" / "1.1" / "report.md").read_text()
    assert "INCOMPLETE" not in report, report[:600]
    assert "### Noise floor (run `noise`)" in report
    assert "### Test-retest (runs `main` and `retest`)" in report

    # A list that restricts the noise run leaves 1.1 out: INCOMPLETE, with the run and the fix.
    set_toml = repository / "planted_sets" / "support_reply" / "set.toml"
    set_toml.write_text(set_toml.read_text() + 'noise_versions = ["1.0"]\n', encoding="utf-8")
    code, out = command(["report", "--judge", "support_reply"])
    assert code == 0, out
    report = (repository / "reports" / "support_reply" / "1.1" / "report.md").read_text()
    assert report.startswith("# support_reply, prompt 1.1: INCOMPLETE")
    assert "**Result: INCOMPLETE: lacks the noise run of its judge**" in report
    assert "set.toml noise_versions leaves 1.1 out: add it, or remove the key" in report
