"""docs/your-own-judge.md, run as written: init, record, replay, baseline, report.

In an empty git repository (pytester's folder), against the fake judge on 127.0.0.1, with
no file of the harness copied or edited: the commands of the walkthrough's step 3, in its
order, end in a green replay, a decided PASS and reports that match their results. The
scaffold's set is large enough to decide: a coin-flip judge recorded in it is refused.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import shlex
import tomllib
from collections import Counter
from pathlib import Path

import pytest

from judges.core.spec import load_catalog

from ._support import FakeJudge, Received
from ._walkthrough import INNER_OPTIONS, MODEL, command, scaffold_items

DOC = Path(__file__).resolve().parents[2] / "docs" / "your-own-judge.md"
ITEMS = len(scaffold_items())  # the planted items init writes
NOISE = 2 * 3  # set.toml's noise floor: 2 items x 3 repeats
PER_VERSION = ITEMS + NOISE + ITEMS  # main, noise, retest


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

    code, out = command(["init", "support_reply", "--model", MODEL, "--base-url", fake_judge.url])
    assert code == 0, out
    # init's own record command, run as printed (its `python -m pytest` is this pytester).
    (printed,) = [line.strip() for line in out.splitlines() if "--record" in line]
    words = shlex.split(printed)
    assert words[:3] == ["python", "-m", "pytest"], printed
    assert words[3:] == ["--record", "--judge-model", MODEL, "--judge-base-url", fake_judge.url]
    assert "wrote judge_tests/test_judges.py" in out
    # The test module pulls the suite in; it copies no test code.
    test_module = (repository / "judge_tests" / "test_judges.py").read_text()
    assert "def test_" not in test_module

    # 1. Record: every item, the noise floor (2 items x 3) and the retest run, live.
    recorded = pytester.runpytest_inprocess(*INNER_OPTIONS, *words[3:])
    assert len(fake_judge.calls) == PER_VERSION, [r.path for r in fake_judge.received]
    # SR-003 is missed; the set-level tests (gates, fitness, table, noise floor, retest) wait
    # for replay.
    recorded.assert_outcomes(passed=ITEMS - 1 + 2 + ITEMS, failed=1, skipped=5, deselected=7)
    cassettes = sorted((repository / "cassettes" / "support_reply" / "1.0").rglob("*.yaml"))
    assert len(cassettes) == ITEMS + 2 + ITEMS

    # 2. Replay, offline: the miss fails, and the verdict table has no snapshot yet.
    replayed = pytester.runpytest_inprocess(*INNER_OPTIONS)
    assert replayed.ret == 1
    replayed.stdout.fnmatch_lines(["*SR-003*expected accuracy <= 1*returned accuracy=3*"])

    # 3. Accept 1.0: the miss becomes an accepted miss, and 1.0 the baseline. The set is
    # large enough for its chance tests to decide: 1.0 is FIT on evidence.
    code, out = command(["baseline", "support_reply", "--accept", "1.0"])
    assert code == 0, out
    assert "fitness: support_reply 1.0 on " in out and ": FIT" in out
    planted = repository / "planted_sets" / "support_reply"
    misses = tomllib.loads((planted / "expectations.toml").read_text())
    assert list(misses[MODEL]["1.0"]) == ["SR-003"]
    assert tomllib.loads((planted / "gates.toml").read_text())[MODEL]["1.0"]["baseline"] == "1.0"

    # 4. Accept the verdict table, then 5. the replay is green.
    assert pytester.runpytest_inprocess(*INNER_OPTIONS, "--snapshot-update").ret == 0
    calls = len(fake_judge.calls)
    green = pytester.runpytest_inprocess(*INNER_OPTIONS)
    assert green.ret == 0, green.stdout.str()
    # One set-level test has nothing to decide (baseline suggests no floor for a kappa or an
    # sd, which one run cannot bound): skipped with that reason, never passed.
    green.assert_outcomes(passed=ITEMS - 1 + 2 + ITEMS + 4, skipped=1, xfailed=1, deselected=7)
    green.stdout.fnmatch_lines(["*set-level test(s) skipped their gates: *gate decided anything*"])
    assert len(fake_judge.calls) == calls  # offline: no call reached the judge

    # 6. The committed reports are what the results produce.
    code, out = command(["report", "--check"])
    assert code == 0, out
    report = (repository / "reports" / "support_reply" / "1.0" / "report.md").read_text()
    assert report.startswith("# support_reply, prompt 1.0: PASS")
    assert "fitness undecided" not in report  # a PASS on evidence: the chance tests decided
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
    code, out = command(["init", "support_reply", "--model", MODEL, "--base-url", fake_judge.url])
    assert code == 0, out
    # init's own record command, run as printed (its `python -m pytest` is this pytester).
    (printed,) = [line.strip() for line in out.splitlines() if "--record" in line]
    words = shlex.split(printed)
    assert words[:3] == ["python", "-m", "pytest"], printed
    assert words[3:] == ["--record", "--judge-model", MODEL, "--judge-base-url", fake_judge.url]
    live = ["--record", "--judge-model", MODEL, "--judge-base-url", fake_judge.url]
    pytester.runpytest_inprocess(*INNER_OPTIONS, *live)
    prompts = repository / "judge_prompts" / "support_reply"
    (prompts / "1.1.md").write_text((prompts / "1.0.md").read_text(), encoding="utf-8")
    load_catalog.cache_clear()  # in-process runs share the loaded judges
    calls = len(fake_judge.calls)
    recorded = pytester.runpytest_inprocess(*INNER_OPTIONS, *live, "-k", "support_reply-1.1")
    # Every item, the noise floor (2 items x 3 repeats) and the retest, said before calling.
    recorded.stderr.fnmatch_lines(
        [
            f"judges record: {PER_VERSION} calls to make on {MODEL}: main {ITEMS}, "
            f"retest {ITEMS}, noise {NOISE} (2 cassettes)"
        ]
    )
    assert len(fake_judge.calls) - calls == PER_VERSION
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


class CoinFlipJudge:
    """Each score a fair draw of 0-3, whatever the reply: seeded per request and per how many
    identical requests came before, so every run of the test sees the same answers."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()

    def __call__(self, received: Received) -> str:
        body = hashlib.sha256(json.dumps(received.body, sort_keys=True).encode()).hexdigest()
        rng = random.Random(f"coin-flip|{body}|{self.seen[body]}")
        self.seen[body] += 1
        scores = {field: rng.randrange(4) for field in ("accuracy", "helpfulness")}
        return json.dumps({**scores, "rationale": "a coin flip"})


def test_a_coin_flip_version_is_refused_and_never_reads_pass(
    repository: Path, pytester: pytest.Pytester, fake_judge: FakeJudge
) -> None:
    """The scaffold's set decides: a coin-flip judge recorded as prompt 1.2, after 1.0 was
    recorded and accepted, is NOT FIT; `baseline --accept 1.2` refuses it, and its report
    does not read PASS."""
    code, out = command(["init", "support_reply", "--model", MODEL, "--base-url", fake_judge.url])
    assert code == 0, out
    # init's own record command, run as printed (its `python -m pytest` is this pytester).
    (printed,) = [line.strip() for line in out.splitlines() if "--record" in line]
    words = shlex.split(printed)
    assert words[:3] == ["python", "-m", "pytest"], printed
    assert words[3:] == ["--record", "--judge-model", MODEL, "--judge-base-url", fake_judge.url]
    live = ["--record", "--judge-model", MODEL, "--judge-base-url", fake_judge.url]
    pytester.runpytest_inprocess(*INNER_OPTIONS, *live)
    pytester.runpytest_inprocess(*INNER_OPTIONS)  # the replay writes 1.0's report
    code, out = command(["baseline", "support_reply", "--accept", "1.0"])
    assert code == 0, out

    prompts = repository / "judge_prompts" / "support_reply"
    (prompts / "1.2.md").write_bytes((prompts / "1.0.md").read_bytes())
    load_catalog.cache_clear()  # in-process runs share the loaded judges
    fake_judge.content = CoinFlipJudge()
    calls = len(fake_judge.calls)
    pytester.runpytest_inprocess(*INNER_OPTIONS, *live, "-k", "support_reply-1.2")
    assert len(fake_judge.calls) - calls == PER_VERSION
    pytester.runpytest_inprocess(*INNER_OPTIONS, "-k", "support_reply-1.2")  # its report

    code, out = command(["baseline", "support_reply", "--accept", "1.2"])
    assert code != 0, out
    assert "fitness: support_reply 1.2 on " in out and ": NOT FIT" in out, out
    gates = repository / "planted_sets" / "support_reply" / "gates.toml"
    assert "1.2" not in tomllib.loads(gates.read_text())[MODEL]  # nothing accepted
    report = (repository / "reports" / "support_reply" / "1.2" / "report.md").read_text()
    first = report.splitlines()[0]
    assert first.startswith("# support_reply, prompt 1.2: ") and "PASS" not in first, first
    assert "NOT FIT" in first, first
