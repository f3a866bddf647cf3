"""Rough edges of live runs: SIGTERM, re-record commands, gates that cannot be evaluated."""

from __future__ import annotations

import json
import shutil

import pytest

from judges.core.spec import load_catalog
from judges.sets.pins import write_pins

from ._support import (
    GATES,
    ITEMS,
    JUDGE,
    MODEL,
    FakeJudge,
    JudgesProject,
    rerecord_argv,
    rerecord_lines,
    versions,
)

SIGTERM_TEST = """
import os
import signal


def test_zz_terminated():
    os.kill(os.getpid(), signal.SIGTERM)
"""

UNEVALUATED_TEST = """
from judges.stats.estimates.floors import Gate
from judges.stats.estimates.intervals import wilson


def test_gate_without_rows(gate_set, judge_runner):
    # Every call of the run failed: the statistic has no usable row.
    gate = Gate("noise_floor.min_exact_match.core_total", wilson(0, 0), 0.5, True)
    judge_runner.check_gates(gate_set, "noise_floor", [gate])
"""


def test_sigterm_writes_the_rows_and_reports_of_what_finished(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    project.pytester.makepyfile(**{"regression_tests/test_zz_sigterm": SIGTERM_TEST})

    # In a process of its own: the signal ends that pytest, not this one.
    result = project.run(record="all", inprocess=False)

    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
    assert "stopped by SIGTERM" in result.stdout.str()
    planted = len(versions()) * len(ITEMS)
    assert len(fake_judge.calls) == planted
    rows = project.results()
    assert len(rows) == planted  # every finished judgement reached results.jsonl
    for version in versions():
        assert (project.root / "reports" / "product_identity" / version / "report.md").is_file()


def test_rerecord_command_repeats_the_sessions_judge_options(project: JudgesProject) -> None:
    result = project.run("--judge-model", MODEL, "--cassette-dir", "elsewhere", "-k", "PE-01")

    commands = rerecord_lines(result.stdout.str())
    assert commands, result.stdout.str()
    for command in commands:
        argv = rerecord_argv(command)
        assert argv[argv.index("--judge-model") + 1] == MODEL, command
        assert argv[argv.index("--cassette-dir") + 1] == "elsewhere", command
        assert "--judge-base-url" not in argv  # not given: the embedded judge records


def _gate_tables(project: JudgesProject) -> None:
    tables = "".join(f'["{MODEL}"."{v}"]\nmax_error_rate = 0.0\n\n' for v in versions())
    project.write_set_file("gates.toml", tables)
    project.pytester.makepyfile(**{"regression_tests/test_unevaluated": UNEVALUATED_TEST})


def test_a_gate_without_usable_rows_decides_nothing(project: JudgesProject) -> None:
    # No data is no evidence either way: never a pass (a coin flip would pass), never a
    # failure (a failed call fails its own item's test); skipped, saying why.
    _gate_tables(project)

    result = project.run("regression_tests/test_unevaluated.py")

    result.assert_outcomes(skipped=len(versions()))
    result.stdout.fnmatch_lines(["*1 noise_floor gate(s) not evaluated, no data*"])


def test_a_gate_without_usable_rows_is_skipped_on_a_chosen_subset(
    project: JudgesProject,
) -> None:
    _gate_tables(project)
    latest = versions()[-1]

    result = project.run("regression_tests/test_unevaluated.py", "-k", latest)

    result.assert_outcomes(skipped=1, deselected=len(versions()) - 1)
    result.stdout.fnmatch_lines(
        [
            "*set-level test(s) skipped their gates: product_identity prompt "
            f"{latest} on *: 1 noise_floor gate(s) not evaluated, no data*"
        ]
    )


SNAPSHOT_TESTS = """
import json
import shutil

import pytest


@pytest.mark.parametrize("n", [1, 2])
def test_table(n, snapshot):
    assert {"n": n} == snapshot
"""


def test_snapshot_update_on_part_of_a_snapshot_module_is_refused(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_snap=SNAPSHOT_TESTS)
    # A judges project: in any other, the plugin leaves pytest and syrupy alone.
    pytester.mkdir("planted_sets")
    update = ("--snapshot-update", "-p", "no:cacheprovider", "-p", "no:benchmark")
    assert pytester.runpytest_inprocess(*update).ret == 0
    stored = sorted(p.name for p in (pytester.path / "__snapshots__").iterdir())

    partial = pytester.runpytest_inprocess(*update, "-k", "1")

    assert partial.ret == pytest.ExitCode.USAGE_ERROR
    partial.stderr.fnmatch_lines(
        ["*--snapshot-update on part of test_snap.py would delete the snapshots*whole selection*"]
    )
    assert sorted(p.name for p in (pytester.path / "__snapshots__").iterdir()) == stored
    assert "test_table[1]" in (pytester.path / "__snapshots__" / stored[0]).read_text()
    assert "test_table[2]" in (pytester.path / "__snapshots__" / stored[0]).read_text()
    whole = pytester.runpytest_inprocess(*update)
    assert whole.ret == pytest.ExitCode.OK


def test_a_version_without_recordings_gets_one_summary_line_and_command(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    assert project.run(record="all").ret == pytest.ExitCode.OK
    newest = versions()[-1]
    shutil.rmtree(project.cassette_dir(newest))  # as if the version were just added

    result = project.run()

    lines = [
        line for line in result.stdout.lines if "has no recordings yet; record it with:" in line
    ]
    # The command names the model and the server the other versions were recorded with,
    # so it runs as printed.
    assert lines == [
        f"product_identity prompt {newest} on {MODEL} has no recordings yet; record it with:  "
        f"pytest --record=all --judge-model {MODEL} --judge-base-url {fake_judge.url} "
        f"-k product_identity-{newest}-"
    ]
    command = lines[0].split("record it with:  ")[1]
    recorded = project.run(*rerecord_argv(command))
    assert recorded.ret == pytest.ExitCode.OK
    assert "has no recordings yet" not in project.run().stdout.str()


def _pin(project: JudgesProject, version: str) -> None:
    """A baseline gates.toml names is pinned in accepted.toml (before its first recording:
    no cassette to pin yet), as the session's preflight requires."""
    spec = load_catalog()[JUDGE]
    write_pins(project.set_dir, spec, [(MODEL, version)], "2026-12-02", project.root / "cassettes")


def test_a_version_without_a_gates_table_is_gated_by_the_one_before(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    """A new prompt version is not left ungated: it inherits the floors and the baseline."""
    first, latest = versions()[0], versions()[-1]
    cousin = next(item for item in ITEMS if item["category"] == "cousin")
    project.write_set_file(
        "gates.toml",
        f'["{MODEL}"."{first}"]\nbaseline = "{first}"\nmin_detection = {{ cousin = 0.5 }}\n',
    )
    _pin(project, first)
    fake_judge.scores[cousin["id"]] = 3  # the judge misses the cousin defect
    project.run(record="all")

    result = project.run(GATES, "-k", latest)

    result.assert_outcomes(failed=1, deselected=len(versions()) - 1)
    output = result.stdout.str()
    assert f"product_identity prompt {latest} on {MODEL}: 1 detection gate(s) failed" in output
    table = f'gates.toml ["{MODEL}"."{first}"] (inherited: prompt {latest} has no table of its own)'
    assert table in output
    assert "FAILED detection[cousin]: 0/1 = 0.00" in output


def test_regression_gates_in_reports_read_the_recorded_baseline_whatever_the_report_dir(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    """`--report-dir` elsewhere: the report's regression gates still compare the baseline's
    recorded run, as the gate tests did, not a missing or stale copy in the report folder."""
    first, latest = versions()[0], versions()[-1]
    project.write_set_file("gates.toml", f'["{MODEL}"."{first}"]\nbaseline = "{first}"\n')
    _pin(project, first)
    assert project.run(record="all").ret == pytest.ExitCode.OK
    elsewhere = project.root / "elsewhere"

    project.run("-k", latest, "--report-dir", str(elsewhere))

    assert not (elsewhere / JUDGE / first).exists()  # only the selected version is reported
    report = json.loads((elsewhere / JUDGE / latest / "report.json").read_text())
    at_home = json.loads((project.root / "reports" / JUDGE / latest / "report.json").read_text())
    (model,) = report["models"]
    (home,) = at_home["models"]
    assert model["regressions"], "the baseline's recorded run was not found"
    assert model["regressions"] == home["regressions"]


def test_a_gate_test_with_nothing_to_decide_is_skipped_not_passed(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    """A table without a threshold and without a baseline checks nothing: a pass would say
    the judge was gated when it was not."""
    first = versions()[0]
    project.write_set_file("gates.toml", f'["{MODEL}"."{first}"]\nnote = "thresholds to come"\n')
    assert project.run(record="all").ret == pytest.ExitCode.OK

    result = project.run(GATES, "-k", first, "-rs")

    result.assert_outcomes(skipped=1, deselected=len(versions()) - 1)
    result.stdout.fnmatch_lines([
        f"*product_identity prompt {first} on {MODEL}: no detection gate decided anything (no "
        "threshold in *gates.toml*, no regression against a baseline): detection?cousin?: *",
    ])  # fmt: skip
    # A threshold makes it decide.
    project.write_set_file("gates.toml", f'["{MODEL}"."{first}"]\nmax_error_rate = 0.5\n')
    project.run(GATES, "-k", first).assert_outcomes(passed=1, deselected=len(versions()) - 1)
