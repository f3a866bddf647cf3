"""The harness's command-line options and ini keys: their names, types and defaults.

Imported by the entry point (`judges.pytest_plugin.plugin`) in every pytest run, so it
imports pytest alone; every module that names an option in a message imports the name
from here.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

OPTION_RECORD = "--record"
OPTION_RERECORD_BASELINE = "--rerecord-baseline"
OPTION_MODEL = "--judge-model"
OPTION_BASE_URL = "--judge-base-url"
OPTION_COST_CAP = "--cost-cap"
OPTION_PRICES = "--judge-prices"
OPTION_CASSETTES = "--cassette-dir"
OPTION_REPORTS = "--report-dir"
OPTION_TIMEOUT = "--judge-timeout"
OPTION_CHECK_REPORTS = "--check-reports"
OPTION_REPEATS = "--noise-repeats"
OPTION_CONCURRENCY = "--judge-concurrency"
OPTION_BATCH = "--batch"
OPTION_RESUME = "--resume"
OPTION_BATCH_POLL = "--batch-poll"
CHECK = "judges_check_reports"

INI_PROMPTS = "judges_prompts"
INI_PLANTED_SETS = "judges_planted_sets"
DEFAULT_PLANTED_SETS = "planted_sets"
# A judge request's timeout when --judge-timeout is not given; the harness's runner reads
# the same value (a test keeps the two equal, so that this module imports nothing of it).
DEFAULT_TIMEOUT_S = 120.0

# The record phase's hooks, by the name `-p no:judges.pytest_plugin.record` blocks.
RECORD_PHASE = "judges.pytest_plugin.record"

# dest -> default of every option declared here: a value other than its default means the
# run asked for the harness.
_DEFAULTS: dict[str, Any] = {}


def _model(text: str) -> Any:
    from judges.calls.backends import BackendError, ModelRef  # only when the option is given

    try:
        return ModelRef.parse(text)
    except BackendError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _seconds(text: str) -> float:
    value = float(text) if text.replace(".", "", 1).isdigit() else 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return value


def _usd(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError("the cost cap is a non-negative amount of USD")
    return value


def _count(text: str) -> int:
    value = int(text) if text.isdigit() else 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of calls of 1 or more")
    return value


def _add(group: pytest.OptionGroup, name: str, **kwargs: Any) -> None:
    _DEFAULTS[kwargs["dest"]] = kwargs.get("default")
    group.addoption(name, **kwargs)


def add_options(parser: pytest.Parser) -> None:
    """Every option and ini key of the harness, declared in every pytest run."""
    group = parser.getgroup("judges", "judge reliability (record/replay of judge calls)")
    _add_judge_options(group)
    _add_folder_options(group)
    parser.addini(INI_PROMPTS, "folder of judge definitions (default: the built-in ones)")
    parser.addini(INI_PLANTED_SETS, f"folder of planted sets (default: {DEFAULT_PLANTED_SETS})")
    _add_run_options(group)
    _add_record_phase_options(group)


def _add_judge_options(group: pytest.OptionGroup) -> None:
    """Which judge is called live, through which server, at what price."""
    _add(
        group,
        OPTION_RECORD,
        dest="judges_record",
        nargs="?",
        const="all",
        default="none",
        choices=["all", "missing"],
        help="make live judge calls and write cassettes: all selected tests (default), or "
        "'missing' ones only. Without it every judge call replays offline.",
    )
    _add(
        group,
        OPTION_RERECORD_BASELINE,
        dest="judges_rerecord_baseline",
        action="store_true",
        default=False,
        help="with --record: also replace the cassettes of accepted baselines (pinned in "
        "planted_sets/<judge>/accepted.toml), which --record otherwise keeps.",
    )
    _add(
        group,
        OPTION_MODEL,
        dest="judges_models",
        metavar="BACKEND:MODEL",
        action="append",
        type=_model,
        default=[],
        help="judge model as backend:model (local:smollm2-135m, openai:gpt-4o-2024-11-20, "
        "anthropic:claude-sonnet-4-6); repeatable. Default: each judge's baseline model.",
    )
    _add(
        group,
        OPTION_BASE_URL,
        dest="judges_base_url",
        metavar="URL",
        default=None,
        help="OpenAI-compatible base URL of a running server (Ollama, vLLM, llama-server) "
        "instead of the embedded local judge.",
    )
    _add(
        group,
        OPTION_COST_CAP,
        dest="judges_cost_cap",
        metavar="USD",
        type=_usd,
        default=None,
        help="stop live judge calls once this many USD are spent; the rest end as cost_cap.",
    )
    _add(
        group,
        OPTION_PRICES,
        dest="judges_prices",
        metavar="FILE",
        action="append",
        type=Path,
        default=[],
        help="extra price table (TOML, USD per million tokens) over judges/calls/prices.toml.",
    )


def _add_folder_options(group: pytest.OptionGroup) -> None:
    """Where cassettes are read and reports written."""
    _add(
        group,
        OPTION_CASSETTES,
        dest="judges_cassettes",
        metavar="DIR",
        type=Path,
        default=None,
        help="where cassettes are read and written (default: <rootdir>/cassettes).",
    )
    _add(
        group,
        OPTION_REPORTS,
        dest="judges_reports",
        metavar="DIR",
        type=Path,
        default=None,
        help="where reports are written (default: <rootdir>/reports).",
    )


def _add_run_options(group: pytest.OptionGroup) -> None:
    """How each judgement runs and what the run checks."""
    _add(
        group,
        OPTION_TIMEOUT,
        dest="judges_timeout",
        metavar="SECONDS",
        type=_seconds,
        default=DEFAULT_TIMEOUT_S,
        help=f"seconds a judge request may take (default {DEFAULT_TIMEOUT_S:g}); a judgement, "
        "retries included, may take 3 times that. A timeout becomes a transport error row.",
    )
    _add(
        group,
        OPTION_CHECK_REPORTS,
        dest=CHECK,
        action="store_true",
        default=False,
        help="write no report; fail naming each committed report file this run would change.",
    )
    _add(
        group,
        OPTION_REPEATS,
        dest="judges_noise_repeats",
        metavar="N",
        type=int,
        default=None,
        help="repeats per item for noise-floor tests (default: the planted set's set.toml).",
    )


def _add_record_phase_options(group: pytest.OptionGroup) -> None:
    """How a live run sends its calls (`judges.pytest_plugin.record`)."""
    _add(
        group,
        OPTION_CONCURRENCY,
        dest="judges_concurrency",
        metavar="N",
        type=_count,
        default=None,
        help="with --record, live judge calls in flight at once before the tests run "
        "(default 8 for hosted models, 1 for a local server: raise it to its slot count).",
    )
    _add(
        group,
        OPTION_BATCH,
        dest="judges_batch",
        action="store_true",
        default=False,
        help="with --record, send the judge calls through the providers' batch APIs (OpenAI, "
        "Anthropic): about half the price, no rate limits, done within 24 h. Polls until "
        "done; Ctrl-C keeps the batches (see --resume).",
    )
    _add(
        group,
        OPTION_RESUME,
        dest="judges_resume",
        action="store_true",
        default=False,
        help="with --record --batch, go on with the batch recording left in the cassette "
        "folder: poll its batches again, and submit again only its failed requests.",
    )
    _add(
        group,
        OPTION_BATCH_POLL,
        dest="judges_batch_poll",
        metavar="SECONDS",
        type=float,
        default=None,
        help="with --batch, seconds between two polls of the open batches (default 60).",
    )


def uses_harness(config: pytest.Config) -> bool:
    """Whether this run is a judges run: a planted-set folder at the root (or named by the
    ini key), a judge folder named by the ini key, or a judges option on the command line."""
    if any(config.getoption(dest) != default for dest, default in _DEFAULTS.items()):
        return True
    if config.getini(INI_PROMPTS) or config.getini(INI_PLANTED_SETS):
        return True
    return (Path(config.rootpath) / DEFAULT_PLANTED_SETS).is_dir()
