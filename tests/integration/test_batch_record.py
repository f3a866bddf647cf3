"""`--record --batch` against the fake judge's batch APIs (`_batch_fake`), through the
official OpenAI and Anthropic SDKs: cassettes byte-identical to a synchronous recording of
the same replies, interruption and resume without paying twice, expired and failed
requests as error rows retried alone, and the cost cap held for the whole batch."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judges.calls.backends import load_batch_prices, load_prices
from judges.core.runner import seed_for
from judges.core.spec import load_catalog
from judges.sets.planted import load_planted_set
from judges.sets.probes import write_probes

from ._batch_fake import FakeBatches
from ._support import (
    ANTHROPIC_MODEL,
    FAKE_ANTHROPIC_KEY,
    FAKE_KEY,
    ITEMS,
    JUDGE,
    KEEP_LEDGER,
    FakeJudge,
    JudgesProject,
    Received,
    committed_peak,
    kept_ledger,
    sigint_at_default,
    versions,
)

OPENAI_MODEL = "openai:gpt-4o-mini"
JUDGEMENTS = len(versions()) * len(ITEMS)
POLL = ("--batch-poll", "0.01")
STATE = Path("cassettes") / ".judges-batch"
PROBES_TOML = """
score = "core_total"

[padding]
items = ["PE-01", "PE-02"]
field = "answer"
echo = "question"
seed = 1
"""


@pytest.fixture
def batches(fake_judge: FakeJudge) -> FakeBatches:
    fake = FakeBatches(fake_judge)
    fake_judge.routes = fake.route
    return fake


@pytest.fixture(params=["openai", "anthropic"])
def model(
    request: pytest.FixtureRequest, project: JudgesProject, monkeypatch: pytest.MonkeyPatch
) -> str:
    """A hosted model whose calls, synchronous or batched, reach the fake judge."""
    if request.param == "anthropic":
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_ANTHROPIC_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", project.judge.anthropic_url)
        return ANTHROPIC_MODEL
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    return OPENAI_MODEL


def _record(project: JudgesProject, model: str, *args: str) -> pytest.RunResult:
    return project.run("--judge-model", model, "-k", "test_planted_item", *args, record="all")


def _recorded(project: JudgesProject) -> dict[str, bytes]:
    root = project.root / "cassettes"
    return {str(p.relative_to(root)): p.read_bytes() for p in project.cassettes()}


def _rows(project: JudgesProject) -> dict[tuple[str, str, str], dict]:
    rows = project.results()
    for row in rows.values():
        row.pop("usage")
    return rows


def test_batch_cassettes_are_byte_identical_to_a_synchronous_recording(
    project: JudgesProject, fake_judge: FakeJudge, batches: FakeBatches, model: str
) -> None:
    _record(project, model).assert_outcomes(passed=JUDGEMENTS)
    synchronous, rows = _recorded(project), _rows(project)
    assert len(synchronous) == JUDGEMENTS and len(fake_judge.calls) == JUDGEMENTS
    shutil.rmtree(project.root / "cassettes")
    shutil.rmtree(project.root / "reports")
    fake_judge.received.clear()

    result = _record(project, model, "--batch", *POLL)
    result.assert_outcomes(passed=JUDGEMENTS)
    assert fake_judge.calls == []  # not one synchronous call
    assert len(batches.batches) == 1 and len(batches.submitted) == JUDGEMENTS
    assert _recorded(project) == synchronous
    assert _rows(project) == rows
    assert not (project.root / STATE).exists()  # all in the cassettes: nothing to resume
    assert project.files_containing(FAKE_KEY) == []
    assert project.files_containing(FAKE_ANTHROPIC_KEY) == []


def test_reply_retries_go_in_a_second_round_and_still_match_a_synchronous_recording(
    project: JudgesProject, fake_judge: FakeJudge, batches: FakeBatches, model: str
) -> None:
    """PE-02's first reply is not JSON: the runner asks again (attempt 1, its own seed),
    which a batch recording can only submit once the first round is back."""
    if model != OPENAI_MODEL:
        pytest.skip("the Anthropic SDK sends no seed: every attempt is the same request")
    first = seed_for(1234, 0, 0, "PE-02")

    def content(received: Received) -> str:
        if received.item_id == "PE-02" and received.body.get("seed") == first:
            return "not a verdict"
        return json.dumps(fake_judge.reply(received.item_id))

    fake_judge.content = content
    _record(project, model).assert_outcomes(passed=JUDGEMENTS)
    synchronous = _recorded(project)
    shutil.rmtree(project.root / "cassettes")
    fake_judge.received.clear()

    _record(project, model, "--batch", *POLL).assert_outcomes(passed=JUDGEMENTS)
    assert fake_judge.calls == []
    sizes = [len(batch.lines) for batch in batches.batches.values()]
    assert sizes == [JUDGEMENTS, len(versions())]  # the retries alone, in a second round
    assert _recorded(project) == synchronous


def test_an_interrupted_batch_recording_resumes_without_submitting_twice(
    project: JudgesProject, fake_judge: FakeJudge, batches: FakeBatches, model: str
) -> None:
    batches.hold.set()  # the batch stays in progress until the test lets it end
    argv = ["--judge-model", model, "-k", "test_planted_item", "--batch", *POLL]
    argv += ["--record", "--judge-base-url", fake_judge.url, "-p", "no:cacheprovider"]
    process = project.pytester.popen(
        [sys.executable, "-m", "pytest", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        preexec_fn=sigint_at_default,
    )
    manifest = project.root / STATE / "manifest.json"
    deadline = time.monotonic() + 120
    while not (manifest.is_file() and '"batch_id": "' in manifest.read_text()):
        assert process.poll() is None and time.monotonic() < deadline, "no batch created"
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == pytest.ExitCode.INTERRUPTED, err.decode()
    assert "--record --batch --resume" in err.decode()
    assert project.cassettes() == [] and len(batches.batches) == 1

    # Without --resume the unfinished recording is a usage error, not a second batch.
    again = _record(project, model, "--batch", *POLL)
    assert again.ret == pytest.ExitCode.USAGE_ERROR
    assert "--resume" in again.stderr.str() and len(batches.batches) == 1

    # As if the session had died between saving the batch and hearing back from the
    # provider: the batch is found again by `list` (OpenAI: by our key in its metadata;
    # Anthropic: by its time and size), not created a second time.
    state = json.loads(manifest.read_text(encoding="utf-8"))
    state["batches"][0]["batch_id"] = None
    manifest.write_text(json.dumps(state), encoding="utf-8")
    batches.hold.clear()
    _record(project, model, "--batch", "--resume", *POLL).assert_outcomes(passed=JUDGEMENTS)
    assert len(batches.batches) == 1 and len(batches.submitted) == JUDGEMENTS
    assert len(project.cassettes()) == JUDGEMENTS and fake_judge.calls == []
    assert not (project.root / STATE).exists()


def test_expired_and_failed_requests_are_error_rows_and_are_retried_alone(
    project: JudgesProject, fake_judge: FakeJudge, batches: FakeBatches, model: str
) -> None:
    batches.fail_items = {"PE-02"}
    batches.expire_after = JUDGEMENTS - 1  # the last request expires
    result = _record(project, model, "--batch", *POLL)
    lost = {line["custom_id"] for line in batches.submitted if "PE-02" in json.dumps(line)}
    lost.add(batches.submitted[-1]["custom_id"])
    result.assert_outcomes(passed=JUDGEMENTS - len(lost), failed=len(lost))
    errors = [row for row in project.results().values() if row["status"] != "ok"]
    assert len(errors) == len(lost) and {row["status"] for row in errors} == {"transport"}
    assert all("424" in row["error"] for row in errors)
    assert any("expired" in row["error"] for row in errors)
    assert any("failed this item" in row["error"] for row in errors)
    assert "retry those alone" in result.stderr.str()
    assert len(project.cassettes()) == JUDGEMENTS - len(lost)  # no cassette without a reply

    batches.fail_items, batches.expire_after = set(), None
    resumed = _record(project, model, "--batch", "--resume", *POLL)
    resumed.assert_outcomes(passed=JUDGEMENTS)
    first, retry = batches.batches.values()
    assert len(retry.lines) == len(lost)  # the failed requests alone
    assert [line for line in retry.lines if line not in first.lines] == retry.lines
    assert len(project.cassettes()) == JUDGEMENTS
    assert not (project.root / STATE).exists()


def test_the_cost_cap_refuses_a_batch_whose_worst_case_exceeds_it(
    project: JudgesProject, fake_judge: FakeJudge, batches: FakeBatches, model: str
) -> None:
    refused = _record(project, model, "--batch", "--cost-cap", "0.001", *POLL)
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    message = refused.stderr.str()
    assert f"a batch of {JUDGEMENTS} request(s) to {model} may cost up to $" in message
    assert "nothing was submitted" in message
    assert batches.batches == {} and fake_judge.calls == []
    assert not (project.root / STATE).exists()

    cap = 1.0
    project.pytester.makeconftest(KEEP_LEDGER)  # the session removes its own scratch files
    _record(project, model, "--batch", "--cost-cap", str(cap), *POLL).assert_outcomes(
        passed=JUDGEMENTS
    )
    peak, spent = committed_peak(kept_ledger(project.root))
    assert peak <= cap
    price = load_batch_prices()[model]
    one = price.cost(fake_judge.prompt_tokens, fake_judge.completion_tokens)
    assert spent == pytest.approx(JUDGEMENTS * one)  # every reply at the batch price
    assert price.cost(1, 1) == pytest.approx(load_prices()[model].cost(1, 1) / 2)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--batch",), "add --record"),
        (("--record", "--resume"), "add --batch"),
        (("--record", "--batch", "--judge-model", "local:smollm2-135m"), "no batch API"),
    ],
)
def test_batch_options_are_checked(
    project: JudgesProject, args: tuple[str, ...], message: str
) -> None:
    result = project.run(*args, "-k", "test_planted_item", "--judge-base-url", project.judge.url)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_bias_probes_are_asked_in_the_batch_too(
    project: JudgesProject, fake_judge: FakeJudge, batches: FakeBatches, model: str
) -> None:
    """Both record phases ask the bias probes with the planted items: the same cassettes."""
    if model != OPENAI_MODEL:
        pytest.skip("the probes' batching does not depend on the provider")
    root = Path(__file__).resolve().parents[2]
    probes = (root / "regression_tests/test_probes.py").read_text(encoding="utf-8")
    project.pytester.makepyfile(**{"regression_tests/test_probes": probes})
    project.write_set_file("probes.toml", PROBES_TOML)
    write_probes(load_planted_set(project.root / "planted_sets", load_catalog()[JUDGE]))
    select = ("-k", "test_planted_item or test_probe_item or test_probe_noise_item")
    synchronous_run = project.run("--judge-model", model, *select, record="all")
    assert synchronous_run.ret == pytest.ExitCode.OK
    # The record phase called the probes with the rest: its plan line names their runs.
    plan = next(line for line in synchronous_run.errlines if "calls to make" in line)
    assert "probe-padding" in plan and "probe-noise" in plan, plan
    synchronous = _recorded(project)
    assert len(fake_judge.calls) == len(synchronous)
    assert {name.split("/")[3] for name in synchronous if name.count("/") == 4} == {
        "probe-padding",
        "probe-noise",
    }
    shutil.rmtree(project.root / "cassettes")
    fake_judge.received.clear()

    batch = project.run("--judge-model", model, *select, "--batch", *POLL, record="all")
    assert batch.ret == pytest.ExitCode.OK
    assert fake_judge.calls == [] and len(batches.submitted) == len(synchronous)
    assert _recorded(project) == synchronous
