"""Accepted misses (expectations.toml), detection gates (gates.toml), malformed items."""

from __future__ import annotations

import re

import pytest

from ._support import ITEMS, MODEL, FakeJudge, JudgesProject, versions

MISSED = ITEMS[2]  # a sign flip the fake judge will miss
REASON = "the fake judge misses this sign flip"


def accepted_misses(item_id: str, reason: str) -> str:
    return "".join(f'["{MODEL}"."{v}"]\n"{item_id}" = "{reason}"\n\n' for v in versions())


def test_accepted_miss_is_xfail_and_a_fix_is_a_strict_xpass(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    project.write_set_file("expectations.toml", accepted_misses(MISSED["id"], REASON))
    fake_judge.scores[MISSED["id"]] = 3
    assert project.run(record="all").ret == pytest.ExitCode.OK

    missed = project.run()

    n = len(versions())
    missed.assert_outcomes(passed=n * (len(ITEMS) - 1), xfailed=n, skipped=n)
    assert missed.ret == pytest.ExitCode.OK
    missed.stdout.fnmatch_lines([f"XFAIL *{MISSED['id']}*{REASON}"])

    fake_judge.scores[MISSED["id"]] = 1  # the judge now catches it
    rerecord = project.run("-k", MISSED["id"], record="all")

    rerecord.assert_outcomes(failed=n)
    assert rerecord.ret == pytest.ExitCode.TESTS_FAILED
    output = rerecord.stdout.str()
    for index, version in enumerate(versions()):
        # "now met", the new values, and the line of expectations.toml that is stale.
        assert (
            f"[XPASS(strict)] now met: {MISSED['id']} (product_identity prompt {version} on "
            f"{MODEL}) expected factual_accuracy <= 1; returned factual_accuracy=1"
        ) in output
        assert f"delete line {3 * index + 2} of {project.set_dir / 'expectations.toml'}" in output
    # No version here is a pinned baseline: the line is the fix. (`baseline` without
    # --accept writes nothing, so it is not offered as one.)
    assert "to rewrite expectations.toml" not in output

    fixed = project.run()

    fixed.assert_outcomes(passed=n * (len(ITEMS) - 1), failed=n, skipped=n)
    assert fixed.ret == pytest.ExitCode.TESTS_FAILED
    fixed.stdout.fnmatch_lines([f"*[[]XPASS(strict)[]] now met: {MISSED['id']}*"])


def test_detection_gate_below_threshold_fails_with_rate_and_interval(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    cousin = ITEMS[1]
    fake_judge.scores[cousin["id"]] = 3
    project.write_set_file("expectations.toml", accepted_misses(cousin["id"], "cousin missed"))
    latest = versions()[-1]
    project.write_set_file(
        "gates.toml",
        f'["{MODEL}"."{latest}"]\nmin_detection = {{ cousin = 0.9, sign_flip = 0.5 }}\n'
        "max_control_false_positive = 0.4\n",  # a floor at or below it would be a usage error
    )
    assert project.run(record="all").ret == pytest.ExitCode.OK

    result = project.run()

    n = len(versions())
    result.assert_outcomes(passed=n * 2, xfailed=n, skipped=n - 1, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    output = result.stdout.str()
    assert re.search(
        rf"^FAILED regression_tests/test_gates.py::test_detection_gates\[product_identity-"
        rf"{re.escape(latest)}\]",
        output,
        flags=re.M,
    )
    result.stdout.fnmatch_lines(
        [
            f"*product_identity prompt {latest} on {MODEL}: 1 detection gate(s) failed "
            f"(thresholds in *planted_sets/product_identity/gates.toml [[]*{latest}*[]])",
            "*FAILED detection[[]cousin[]]: 0/1 = 0.00 [[]0.00, 0.*[]] n=1 (gate >= 0.90)",
            "*passed detection[[]sign_flip[]]: 1/1 = 1.00 [[]0.*, 1.00[]] n=1 (gate >= 0.50)",
        ]
    )


def test_malformed_items_line_names_file_line_and_field(project: JudgesProject) -> None:
    broken = dict(ITEMS[1], slug="Not A Slug")
    project.write_items([ITEMS[0], broken, ITEMS[2]])

    result = project.run()

    # A usage error before any test runs.
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert f"{project.items_path}:2: field 'slug': String should match" in output
