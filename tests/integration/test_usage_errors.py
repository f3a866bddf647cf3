"""Bad options are usage errors (exit 4); a live call without its key says which key."""

from __future__ import annotations

import pytest

from ._support import FakeJudge, JudgesProject


@pytest.mark.parametrize("model", ["nonsense", "gemini:pro", "local:"])
def test_unknown_judge_model_is_a_usage_error(project: JudgesProject, model: str) -> None:
    result = project.run("--judge-model", model)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*argument --judge-model: judge model '{model}' must be backend:model with backend*"]
    )


def test_negative_cost_cap_is_a_usage_error(project: JudgesProject) -> None:
    result = project.run("--cost-cap", "-1")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*argument --cost-cap: the cost cap is a non-negative amount*"])


def test_broken_price_file_is_a_usage_error(project: JudgesProject) -> None:
    project.pytester.makefile(".toml", prices='[models."local:smollm2-135m"]\ninput = 1\n')

    result = project.run("--judge-prices", "prices.toml")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: *prices.toml: price table must hold*input_per_mtok*"])


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        ("openai:gpt-4o-2024-11-20", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-6", "ANTHROPIC_API_KEY"),
    ],
)
def test_record_without_the_api_key_is_a_usage_error_naming_it(
    project: JudgesProject, fake_judge: FakeJudge, model: str, variable: str
) -> None:
    # The project fixture unsets both keys. The base URL keeps any OpenAI call that slipped
    # past the check on the fake server, where it would be counted.
    result = project.run("--judge-model", model, record="all")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: --record with {model} needs {variable} in the environment; export it*"]
    )
    assert fake_judge.received == []


def test_record_of_another_local_model_without_its_server_is_a_usage_error(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    # Without --judge-base-url the embedded judge would start and answer as local:NAME.
    result = project.run("--judge-model", "local:NAME", "--record")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: --record with local:NAME needs the server that serves it: pass "
         "--judge-base-url URL (e.g. --judge-base-url http://127.0.0.1:8080/v1*"]
    )  # fmt: skip
    assert fake_judge.received == []
