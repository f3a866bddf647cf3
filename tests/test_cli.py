"""`python -m judges`: help for every subcommand and option, unknown judges, dry-run output."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from judges.cli.main import build_parser, main
from judges.reports.format import p_value
from judges.stats.estimates.intervals import McNemar
from judges.stats.regression.gates import mcnemar_one_sided

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "planted_sets" / "finale" / "finale.toml"


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_every_subcommand_and_option_has_help() -> None:
    parser = build_parser()
    commands = _subcommands(parser)
    assert set(commands) >= {"derive", "report", "baseline", "finale"}
    choices = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helped = {action.dest for action in choices._choices_actions if action.help}
    assert helped == set(commands), f"subcommands without help: {set(commands) - helped}"
    for name, sub in _every_parser(commands):
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help, f"python -m judges {name}: {action.option_strings or action.dest}"


def _every_parser(
    commands: dict[str, argparse.ArgumentParser], prefix: str = ""
) -> list[tuple[str, argparse.ArgumentParser]]:
    """Each command with its nested actions (`corpus report`), so none escapes the check."""
    found: list[tuple[str, argparse.ArgumentParser]] = []
    for name, sub in commands.items():
        found.append((prefix + name, sub))
        found.extend(_every_parser(_subcommands(sub), f"{prefix}{name} "))
    return found


@pytest.mark.parametrize(
    "argv",
    [["baseline", "nosuch"], ["derive", "nosuch"], ["report", "--judge", "nosuch"]],
)
def test_an_unknown_judge_names_the_known_ones(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "unknown judge 'nosuch'; known: geval, pairwise, product_identity, relevance" in err


def test_a_tiny_p_value_prints_as_below_the_limit() -> None:
    tiny = mcnemar_one_sided([True] * 30, [False] * 30)
    assert tiny.p_value < 0.0001
    assert p_value(McNemar(30, 0, 30, tiny.p_value).p_value) == "< 0.0001"
    assert p_value(McNemar(17, 3, 46, 0.002577).p_value) == "0.0026"


def test_finale_dry_run_stays_out_of_the_committed_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["finale", "--dry-run", "--config", str(SHIPPED)]) == 0
    assert (tmp_path / ".judges-tmp" / "finale-dry-run" / "promotion.json").is_file()
    assert not (tmp_path / "reports").exists()
    assert "wrote .judges-tmp/finale-dry-run/promotion.json" in capsys.readouterr().out


def test_gitignore_keeps_virtual_environments_out() -> None:
    lines = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert ".venv/" in lines and ".judges-tmp/" in lines


@pytest.mark.parametrize(
    ("argv", "dest", "value"),
    [
        (["report", "--report-dir", "out"], "reports", Path("out")),
        (["baseline", "relevance", "--report-dir", "out"], "reports", Path("out")),
        (["plan", "relevance", "--judge-model", "openai:gpt-4o"], "model", "openai:gpt-4o"),
        (["init", "tone", "--judge-base-url", "http://h/v1"], "base_url", "http://h/v1"),
        (["corpus", "judge", "c", "--cassette-dir", "cas"], "cassettes", Path("cas")),
    ],
)
def test_every_command_takes_the_pytest_spelling_of_its_options(
    argv: list[str], dest: str, value: object
) -> None:
    assert getattr(build_parser().parse_args(argv), dest) == value


@pytest.mark.parametrize("command", ["corpus", "plan", "import"])
def test_a_command_imports_its_own_module_alone(command: str) -> None:
    """`python -m judges corpus ...` declares the corpus command only: the other commands'
    modules (the SDKs, the report builder, the planting review) stay unimported."""
    import subprocess
    import sys

    probe = (
        "import sys; from judges.cli.main import build_parser, MODULE_COMMANDS; "
        f"parser = build_parser({command!r}); "
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('judges.cli.'))))"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    module = {"corpus": "corpus", "plan": "power", "import": "importer"}[command]
    assert f"judges.cli.{module}" in found
    others = {"judges.cli.plant", "judges.cli.finale", "judges.cli.init", "judges.cli.leaderboard"}
    assert not others & set(found), f"{command} imported {sorted(others & set(found))}"


def test_the_full_help_still_lists_every_command() -> None:
    from judges.cli.main import MODULE_COMMANDS

    assert set(_subcommands(build_parser())) >= set(MODULE_COMMANDS) | {"derive", "report"}
    for command in MODULE_COMMANDS:
        assert command in _subcommands(build_parser(command))
