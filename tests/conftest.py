"""Fixtures that several test modules share; helpers that are not fixtures live in private
`tests/_*.py` modules, and no test module imports another.

Also the split of the self-test in two (docs/performance.md): tests marked `proof` (every
test under tests/integration/, which builds a project and records it through a fake judge,
and the coverage and false-alarm simulations) take minutes, so the README's test command leaves
them out unless `-m` is given or they are named on the command line; `python -m pytest -n
auto -m proof` runs them, and .ci/run runs both commands.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judges.cli.init import scaffold
from judges.core.spec import load_catalog, load_judge
from tests._report_demo import CATEGORIES, MODEL

PROOF = "proof"
PROOF_COMMAND = "python -m pytest -n auto -m proof"
# The tests that reach the provider SDKs (backends, cassettes, batches, a team's callable):
# the README's fourth command runs them with every dependency at its lowest allowed version.
SDK = "sdk"
SDK_FILES = frozenset({
    "test_backends.py", "test_backend_registry.py", "test_vcr_scrub.py", "test_batch_plan.py",
    "test_team_judge.py", "test_record_and_replay.py", "test_batch_record.py",
    "test_callable_judge.py", "test_callable_walkthrough.py", "test_callable_timeout.py",
    "test_corpus_callable.py",
})  # fmt: skip
INTEGRATION = Path(__file__).resolve().parent / "integration"
_LEFT_OUT = pytest.StashKey[int]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{PROOF}: minutes of recording or simulation, left out of `python -m pytest -n auto` "
        f"unless named or selected; `{PROOF_COMMAND}` runs them (both run in CI)",
    )
    config.addinivalue_line(
        "markers", f"{SDK}: reaches the provider SDKs; run at the lowest dependency versions in CI"
    )


def _named(config: pytest.Config) -> list[Path]:
    """The paths the command line names below the suite's roots (not the suite itself)."""
    roots = {config.rootpath, *(config.rootpath / path for path in config.getini("testpaths"))}
    named = [Path(arg.split("::", 1)[0]) for arg in config.args]
    resolved = [(config.invocation_params.dir / path).resolve() for path in named]
    return [path for path in resolved if path not in roots]


@pytest.hookimpl(tryfirst=True)  # before `-m` is read
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if INTEGRATION in item.path.parents:
            item.add_marker(PROOF)
        if item.path.name in SDK_FILES:
            item.add_marker(SDK)
    if config.option.markexpr:
        return  # `-m` chooses
    named = _named(config)
    left_out = [
        item
        for item in items
        if item.get_closest_marker(PROOF)
        and not any(path == item.path or path in item.path.parents for path in named)
    ]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        kept = set(map(id, left_out))
        items[:] = [item for item in items if id(item) not in kept]
        config.stash[_LEFT_OUT] = len(left_out)


@pytest.hookimpl(trylast=True)  # after the judges section: the last line before the count
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    config = terminalreporter.config
    if config.option.markexpr or _named(config):
        return
    if hasattr(config, "workerinput"):
        return
    # Under xdist the controller collects nothing; the workers deselected the same items.
    left_out = config.stash.get(_LEFT_OUT, None)
    counted = f"{left_out} " if left_out else ""
    terminalreporter.write_line(
        f"{counted}proof tests (tests/integration/, the simulations) left out: "
        f"`{PROOF_COMMAND}` runs them; CI runs both"
    )


@pytest.fixture
def demo(tmp_path: Path) -> dict[str, Any]:
    """A judge `demo` with versions 1.0 and 1.1, its planted set, gates and accepted misses."""
    prompts = tmp_path / "prompts" / "demo"
    prompts.mkdir(parents=True)
    (prompts / "judge.toml").write_text(
        'name = "demo"\nmodule = "judges.builtin.product_identity"\n'
        f'baseline_model = "{MODEL}"\n'
        'dimensions = ["factual_accuracy", "completeness", "causal_reasoning", "core_total"]\n'
        'flag = "product_identity_match"\n'
    )
    for version in ("1.0", "1.1"):
        (prompts / f"{version}.md").write_text("Judge {{answer}} against {{reference}}.\n")
    planted = tmp_path / "planted_sets" / "demo"
    planted.mkdir(parents=True)
    items = [
        {
            "id": item,
            "slug": f"item-{item[-1]}",
            "judge": "demo",
            "category": category,
            "control": category == "control",
            "inputs": {"question": "q?", "reference": "r.", "answer": "a."},
            "expect": [{"field": "factual_accuracy", "op": "<=", "value": 1}],
            "provenance": {"source": "hand"},
        }
        for item, category in CATEGORIES.items()
    ]
    (planted / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    (planted / "gates.toml").write_text(
        f'["{MODEL}"."1.1"]\nmin_detection = {{ cousin = 0.5, fabrication = 0.9 }}\n'
        "max_control_false_positive = 0.2\nmax_error_rate = 0.5\n"
    )
    (planted / "expectations.toml").write_text(
        f'["{MODEL}"."1.1"]\nPE-01 = "loses the cousin case to the longer preamble"\n'
    )
    spec = load_judge(prompts)
    return {
        "root": tmp_path,
        "reports": tmp_path / "reports",
        "planted": tmp_path / "planted_sets",
        "catalog": {"demo": spec},
    }


def _forget_project_modules() -> None:
    load_catalog.cache_clear()
    for name in [m for m in sys.modules if m.split(".")[0] == "judge_verdicts"]:
        del sys.modules[name]


@pytest.fixture
def support_reply_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """`judges init support_reply` (its 195 example items) in tmp_path, the current project;
    its verdict module is forgotten before and after, so each test imports its own."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    _forget_project_modules()
    scaffold(tmp_path, "support_reply", "local:smollm2-135m")
    yield tmp_path
    _forget_project_modules()
