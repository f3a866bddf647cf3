"""Every hint the harness prints runs as printed: the command it names exists, names the
right version, and the file it names is there."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest

from judges.calls.progress import Progress
from judges.cli.main import main
from judges.reports.model.folders import Results, ResultsMissing

ROOT = Path(__file__).resolve().parents[1]


def test_a_version_never_recorded_names_the_command_that_records_it(tmp_path: Path) -> None:
    with pytest.raises(ResultsMissing) as caught:
        Results(tmp_path).rows("support_reply", "1.3")
    assert "`python -m pytest --record=missing -k support_reply-1.3`" in str(caught.value)


def test_baseline_accept_of_an_unrecorded_version_says_how_to_record_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    for recorded in ("0.2", "0.3"):  # 0.3.1's prompt file is there, its results are not
        source = ROOT / "reports" / "product_identity" / recorded / "results.jsonl"
        (tmp_path / "product_identity" / recorded).mkdir(parents=True)
        shutil.copy(source, tmp_path / "product_identity" / recorded / "results.jsonl")
    argv = ["baseline", "product_identity", "--accept", "0.3.1", "--reports", str(tmp_path)]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert "python -m pytest --record=missing -k product_identity-0.3.1" in error
    assert "run `pytest` first" not in error


def test_baseline_with_a_positional_version_suggests_accept(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit) as caught:
        main(["baseline", "product_identity", "0.3.1"])
    assert caught.value.code == 2
    error = capsys.readouterr().err
    assert "did you mean `python -m judges baseline product_identity --accept 0.3.1`" in error


def test_the_estimate_example_names_a_file_that_exists_and_runs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit):
        main(["estimate", "--help"])
    help_text = capsys.readouterr().out
    lines = help_text.splitlines()
    examples = [line for line in lines if line.strip().startswith("python -m judges estimate")]
    assert examples, help_text
    argv = shlex.split(examples[0])[3:]  # after `python -m judges`
    assert (ROOT / argv[argv.index("--outputs") + 1]).is_file()
    assert main([*argv, "--json"]) == 0


def test_plan_defaults_to_the_accepted_baseline_and_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """gates.toml accepts pairwise 0.1 for imported:GPT-4; the newest version is 1.0."""
    monkeypatch.chdir(ROOT)
    assert main(["plan", "pairwise", "--model", "imported:GPT-4"]) == 0
    first, *_ = capsys.readouterr().out.splitlines()
    assert first.startswith("prompt 0.1: the accepted baseline in gates.toml")


def test_plan_states_a_score_drop_on_its_scale_and_never_suggests_itself(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["plan", "product_identity", "--drop", "0.1"]) == 0
    out = capsys.readouterr().out
    # factual_accuracy is scored 0-3: a drop of 0.1 of its range is 0.3 points.
    accuracy = next(line for line in out.splitlines() if "score factual_accuracy" in line)
    assert "drop 0.30 points = 0.1 of its 0-3 scale" in accuracy
    assert "of the range 1" not in out
    assert "judges plan" not in out


def test_record_progress_counts_calls_as_the_plan_line_does() -> None:
    """The plan says "18 calls to make"; the progress counts those calls, judgements apart."""
    lines: list[str] = []
    progress = Progress(total=14, calls=18, write=lambda text, final: lines.append(text),
                        spent=lambda: 0.0)  # fmt: skip
    progress.finished(False, calls=3)  # a noise judgement: three repeats in one cassette
    progress.tick(final=True)
    assert lines[-1].startswith("judges record: 1/14 judgements, 3/18 calls, ")
