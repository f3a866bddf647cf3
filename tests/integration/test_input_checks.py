"""Input files are checked before the first judge call: a usage error (exit 4) naming the
file, the line and the fix. Runs ask for live recording where they can, against the fake
judge, to show that nothing reached a judge call."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import pytest

from judges.core.spec import PROMPTS_ROOT

from ._support import ITEMS, JUDGE, MODEL, PYTEST_INI, FakeJudge, JudgesProject, versions


def refused(project: JudgesProject, fake_judge: FakeJudge, record: str | None = "all") -> Any:
    result = project.run(record=record)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    assert fake_judge.received == []
    return result.stderr


def with_expect(expect: list[dict[str, Any]]) -> list[dict[str, Any]]:
    items = copy.deepcopy(ITEMS)
    items[1]["expect"] = expect
    return items


def own_judges(project: JudgesProject) -> Path:
    """A copy of the built-in product_identity judge in the project, used through the ini."""
    folder = project.root / "judge_defs" / JUDGE
    shutil.copytree(PROMPTS_ROOT / JUDGE, folder)
    project.pytester.makefile(".ini", pytest=PYTEST_INI + "judges_prompts = judge_defs\n")
    return folder


# --------------------------------------------------------------------------- items.jsonl


def test_an_expect_value_of_the_wrong_type(project: JudgesProject, fake_judge: FakeJudge) -> None:
    project.write_items(with_expect([{"field": "factual_accuracy", "op": "<=", "value": "one"}]))
    refused(project, fake_judge).fnmatch_lines(
        ["ERROR: *items.jsonl:2: field 'expect.0': factual_accuracy <= 'one': '<=' compares *"]
    )


def test_in_with_a_value_that_is_not_a_list(project: JudgesProject, fake_judge: FakeJudge) -> None:
    project.write_items(with_expect([{"field": "factual_accuracy", "op": "in", "value": 1}]))
    refused(project, fake_judge).fnmatch_lines(
        ["ERROR: *items.jsonl:2: *factual_accuracy in 1: 'in' takes a non-empty list*"]
    )


def test_a_typo_in_an_expect_field(project: JudgesProject, fake_judge: FakeJudge) -> None:
    project.write_items(with_expect([{"field": "factual_acuracy", "op": "<=", "value": 1}]))
    refused(project, fake_judge).fnmatch_lines(
        [
            "ERROR: *items.jsonl:2: field 'expect.0': field 'factual_acuracy' is not a field of "
            "JudgeScore; valid fields: *factual_accuracy*"
        ]
    )


def test_an_empty_items_file(project: JudgesProject, fake_judge: FakeJudge) -> None:
    project.items_path.write_text("\n", encoding="utf-8")
    refused(project, fake_judge).fnmatch_lines(
        ["ERROR: *items.jsonl:1: the planted set has no items, so every gate would pass*"]
    )


def test_an_items_file_that_is_not_utf8(project: JudgesProject, fake_judge: FakeJudge) -> None:
    lines = project.items_path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b"Touching", b"Touch\xe9ing")  # Latin-1, not UTF-8
    project.items_path.write_bytes(b"".join(lines))
    refused(project, fake_judge).fnmatch_lines(
        ["ERROR: *items.jsonl:3: not UTF-8 (byte 0xe9 at column *); save the file as UTF-8"]
    )


# --------------------------------------------------------------------------- model tables


@pytest.mark.parametrize("name", ["expectations.toml", "gates.toml"])
def test_a_typo_in_a_model_key(project: JudgesProject, fake_judge: FakeJudge, name: str) -> None:
    body = 'PE-02 = "accepted"\n' if name == "expectations.toml" else "max_error_rate = 0.0\n"
    project.write_set_file(name, f'# header\n\n["local:smollm2-135"."{versions()[-1]}"]\n{body}')
    refused(project, fake_judge).fnmatch_lines(
        [
            f"ERROR: *{name}:3: *no judge model 'local:smollm2-135' is selected or recorded "
            f"for 'product_identity'; known models: {MODEL}*"
        ]
    )


@pytest.mark.parametrize("name", ["expectations.toml", "gates.toml"])
def test_a_typo_in_a_version_key(project: JudgesProject, fake_judge: FakeJudge, name: str) -> None:
    body = 'PE-02 = "accepted"\n' if name == "expectations.toml" else "max_error_rate = 0.0\n"
    project.write_set_file(name, f'["{MODEL}"."0.31"]\n{body}')
    refused(project, fake_judge).fnmatch_lines(
        [f"ERROR: *{name}:1: *has no prompt version '0.31'; versions: {', '.join(versions())}"]
    )


# --------------------------------------------------------------------------- the judge


def test_a_prompt_that_never_uses_an_input(project: JudgesProject, fake_judge: FakeJudge) -> None:
    prompt = own_judges(project) / f"{versions()[-1]}.md"
    prompt.write_text(prompt.read_text(encoding="utf-8").replace("{{answer}}", "the answer"))
    refused(project, fake_judge).fnmatch_lines(
        ["ERROR: *.md: prompt * never shows the judge {{answer}}; add each where*"]
    )


def test_a_misspelt_placeholder(project: JudgesProject, fake_judge: FakeJudge) -> None:
    prompt = own_judges(project) / f"{versions()[-1]}.md"
    text = prompt.read_text(encoding="utf-8")
    line = text[: text.index("{{answer}}")].count("\n") + 1
    prompt.write_text(text.replace("{{answer}}", "{{ Answer }}", 1))
    refused(project, fake_judge).fnmatch_lines(
        [
            f"ERROR: *.md:{line}: placeholder '{{{{ Answer }}}}' is not an input of "
            "'product_identity'; placeholders are {{answer}}, {{question}}, {{reference}}"
        ]
    )


def test_bad_toml_in_judge_toml(project: JudgesProject, fake_judge: FakeJudge) -> None:
    config = own_judges(project) / "judge.toml"
    config.write_text(config.read_text(encoding="utf-8") + "max_attempts = = 3\n")
    refused(project, fake_judge).fnmatch_lines(
        ["ERROR: *judge.toml: not valid TOML: Invalid value (at line *, column *)"]
    )


def test_a_verdict_module_that_does_not_exist(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    config = own_judges(project) / "judge.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("judges.builtin.product_identity", "judges.builtin.nope"))
    line = text[: text.index("module =")].count("\n") + 1
    refused(project, fake_judge).fnmatch_lines(
        [f"ERROR: *judge.toml:{line}: module 'judges.builtin.nope' cannot be imported*"]
    )


# --------------------------------------------------------------------------- cassettes


def recorded(project: JudgesProject) -> Path:
    result = project.run(record="all")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    return project.cassette_dir(versions()[-1]) / f"{ITEMS[1]['id']}-{ITEMS[1]['slug']}.yaml"


def test_an_empty_cassette(project: JudgesProject, fake_judge: FakeJudge) -> None:
    cassette = recorded(project)
    cassette.write_bytes(b"")
    fake_judge.received.clear()
    refused(project, fake_judge, record="missing").fnmatch_lines(
        [f"ERROR: cassette *{cassette.name} is empty (0 bytes): the recording never finished*"]
    )


def test_a_cassette_that_is_a_yaml_list(project: JudgesProject, fake_judge: FakeJudge) -> None:
    cassette = recorded(project)
    cassette.write_text("- interactions: []\n", encoding="utf-8")
    fake_judge.received.clear()
    refused(project, fake_judge, record=None).fnmatch_lines(
        [f"ERROR: cassette *{cassette.name} is a YAML list, not a vcrpy cassette*"]
    )


def test_a_cassette_recorded_for_another_model_is_a_usage_error(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    # Told from the cassette's first bytes before any call: the file, the model it was
    # recorded for, and the fix; never "the prompt file, the item's inputs ... changed".
    cassette = recorded(project)
    text = cassette.read_text(encoding="utf-8")
    cassette.write_text(text.replace('"model":"smollm2-135m"', '"model":"gpt-4o-mini"'))
    fake_judge.received.clear()
    refused(project, fake_judge, record=None).fnmatch_lines(
        [f"ERROR: cassette *{cassette.name} was recorded for model gpt-4o-mini, not "
         "smollm2-135m*move it to its model's folder*"]
    )  # fmt: skip
