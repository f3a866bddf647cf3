"""Replay without cassettes: every judged test fails and says how to re-record; no network."""

from __future__ import annotations

import shutil

import pytest

from ._support import (
    ITEMS,
    JUDGE,
    MODEL,
    TEST_GATES,
    TEST_PLANTED,
    WORKERS,
    FakeJudge,
    JudgesProject,
    nodeid,
    rerecord_argv,
    rerecord_lines,
    rerecords,
    versions,
)

SOCKET_TEST = """
import socket
import urllib.request

import pytest

from judges.calls.network import NetworkBlocked

PORT = {port}


def test_socket_connect_is_blocked():
    with pytest.raises(NetworkBlocked, match="offline run"):
        socket.create_connection(("127.0.0.1", PORT), timeout=5)


def test_http_client_is_blocked():
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{{PORT}}/v1/models", timeout=5)
"""


def test_missing_cassettes_fail_with_the_rerecord_command(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    result = project.run()

    planted = len(versions()) * len(ITEMS)
    # Each set-level gate test replays the whole set, so it misses too.
    result.assert_outcomes(failed=planted + len(versions()))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    output = result.stdout.str()
    for version in versions():
        for item in ITEMS:
            cassette = (
                f"cassettes/{JUDGE}/{version}/local-smollm2-135m/{item['id']}-{item['slug']}.yaml"
            )
            assert (
                f"no recorded judgement for {JUDGE} prompt {version} on {MODEL} "
                f"(item {item['id']}, run main): cassette {cassette} does not exist."
            ) in output
            assert rerecords(output, nodeid(version, item))
    assert fake_judge.received == []
    assert not (project.root / "cassettes").exists() or project.cassettes() == []


@pytest.mark.parametrize("workers", WORKERS)
def test_replay_blocks_the_network(
    project: JudgesProject, fake_judge: FakeJudge, workers: str
) -> None:
    port = fake_judge.url.split(":")[2].split("/")[0]
    project.pytester.makepyfile(
        **{"regression_tests/test_socket_blocked": SOCKET_TEST.format(port=port)}
    )

    result = project.run("regression_tests/test_socket_blocked.py", workers=workers)

    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.OK
    assert fake_judge.received == []


def test_the_printed_rerecord_command_records_that_test(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    missing = project.run("-k", "PE-01")
    command = rerecord_lines(missing.stdout.str())[0]

    # The command as printed; the base URL only points the local judge at the fake server.
    rerecord = project.run(*rerecord_argv(command), "--judge-base-url", fake_judge.url)

    assert rerecord.ret == pytest.ExitCode.OK, rerecord.stderr.str()
    rerecord.assert_outcomes(passed=1)
    assert len(fake_judge.calls) == 1


def test_gate_rerecord_command_names_the_projects_own_planted_test(project: JudgesProject) -> None:
    shutil.rmtree(project.root / "regression_tests")
    project.pytester.makepyfile(
        **{"judge_checks/test_planted": TEST_PLANTED, "judge_checks/test_gates": TEST_GATES}
    )

    result = project.run("judge_checks", "-k", "test_detection_gates")

    result.assert_outcomes(failed=len(versions()))
    commands = rerecord_lines(result.stdout.str())
    assert len(commands) == len(versions())
    for command in commands:
        assert rerecord_argv(command)[-1].startswith("judge_checks/test_planted.py::"), command
