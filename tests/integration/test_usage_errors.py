"""Bad options are usage errors (exit 4); a live call without its key says which key."""

from __future__ import annotations

import pytest

from ._support import ITEMS, WORKERS, FakeJudge, JudgesProject, versions


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("model", ["nonsense", "gemini:pro", "local:"])
def test_unknown_judge_model_is_a_usage_error(
    project: JudgesProject, workers: str, model: str
) -> None:
    result = project.run("--judge-model", model, workers=workers)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*argument --judge-model: judge model '{model}' must be backend:model with backend*"]
    )


@pytest.mark.parametrize("workers", WORKERS)
def test_negative_cost_cap_is_a_usage_error(project: JudgesProject, workers: str) -> None:
    result = project.run("--cost-cap", "-1", workers=workers)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*argument --cost-cap: the cost cap is a non-negative amount*"])


@pytest.mark.parametrize("workers", WORKERS)
def test_broken_price_file_is_a_usage_error(project: JudgesProject, workers: str) -> None:
    project.pytester.makefile(".toml", prices='[models."local:smollm2-135m"]\ninput = 1\n')

    result = project.run("--judge-prices", "prices.toml", workers=workers)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: *prices.toml: price table must hold*input_per_mtok*"])


@pytest.mark.parametrize("workers", WORKERS)
def test_openai_record_without_key_names_the_variable(
    project: JudgesProject, fake_judge: FakeJudge, workers: str
) -> None:
    # The base URL keeps any call that slipped past the key check on the fake server.
    result = project.run("--judge-model", "openai:gpt-4o-2024-11-20", workers=workers, record="all")

    result.assert_outcomes(failed=len(versions()) * len(ITEMS), skipped=len(versions()))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*live openai calls need OPENAI_API_KEY in the environment; export it*"]
    )
    assert fake_judge.received == []
