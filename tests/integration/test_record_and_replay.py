"""`--record` against a live (fake) judge writes scrubbed cassettes that replay offline."""

from __future__ import annotations

import re

import pytest

from judges.pytest_plugin.scheduling import case_group

from ._support import (
    EXTRA_ITEM,
    FAKE_KEY,
    ITEMS,
    JUDGE,
    WORKERS,
    FakeJudge,
    JudgesProject,
    cassette_name,
    load_cassette,
    versions,
)

SECRETS = (FAKE_KEY, "org-SECRET", "req_abc123", "set-cookie", "authorization", "Bearer")


def workers_by_version(output: str) -> dict[str, set[str]]:
    """The xdist workers that ran each prompt version's tests, from `-v` output."""
    found: dict[str, set[str]] = {}
    lines = re.findall(r"^\[(gw\d+)\] \[\s*\d+%\] [A-Z]+ \S+\[(\S+)\]\s*$", output, flags=re.M)
    prefixes = sorted((f"{JUDGE}-{v}" for v in versions()), key=len, reverse=True)
    for worker, params in lines:
        group = case_group(f"t.py::t[{params}]", prefixes)
        found.setdefault(group.removeprefix(f"{JUDGE}-"), set()).add(worker)
    return found


def expected_cassettes(project: JudgesProject, items: list[dict]) -> list:
    return sorted(
        project.cassette_dir(version) / cassette_name(item)
        for version in versions()
        for item in items
    )


@pytest.mark.parametrize("workers", WORKERS)
def test_recorded_cassettes_replay_offline_with_identical_verdicts(
    project: JudgesProject, fake_judge: FakeJudge, workers: str
) -> None:
    planted = len(versions()) * len(ITEMS)

    recorded = project.run(workers=workers, record="all")

    recorded.assert_outcomes(passed=planted, skipped=len(versions()))
    assert recorded.ret == pytest.ExitCode.OK
    recorded.stdout.fnmatch_lines(
        [
            f"{planted} judgements: {planted} ok",
            f"live spend local:smollm2-135m: {planted} calls, *",
            "*set-level gates are evaluated on replay: run pytest again without --record*",
        ]
    )
    assert project.cassettes() == expected_cassettes(project, ITEMS)
    assert len(fake_judge.calls) == planted
    for call in fake_judge.calls:
        # LocalBackend: llama.cpp's json_object form with the reply schema as a grammar.
        assert call.body["response_format"]["type"] == "json_object"
        assert call.body["response_format"]["schema"]["type"] == "object"
    live_rows = project.results()
    assert len(live_rows) == planted
    assert all(row["status"] == "ok" and row["met"] for row in live_rows.values())

    replayed = project.run("-v", workers=workers)

    replayed.assert_outcomes(passed=planted, skipped=len(versions()))
    assert replayed.ret == pytest.ExitCode.OK
    if workers != "0":
        # Each version's item tests and gate test share one worker, and so its replays.
        ran_on = workers_by_version(replayed.stdout.str())
        assert set(ran_on) == set(versions())
        assert all(len(workers) == 1 for workers in ran_on.values()), ran_on
    assert len(fake_judge.calls) == planted, "a replay reached the judge"
    assert project.results() == live_rows


def test_cassettes_keep_no_secret_while_the_server_saw_the_key(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    result = project.run(record="all")

    assert result.ret == pytest.ExitCode.OK
    # The key was sent: the scrubbing below proves a filter, not a missing key.
    assert fake_judge.calls
    for call in fake_judge.calls:
        sent = {name.lower(): value for name, value in call.headers.items()}  # any SDK's case
        assert sent.get("authorization") == f"Bearer {FAKE_KEY}"
    for path in project.cassettes():
        text = path.read_text(encoding="utf-8")
        for secret in SECRETS:
            assert secret.lower() not in text.lower(), f"{secret!r} reached {path}"
        for interaction in load_cassette(path)["interactions"]:
            assert set(interaction["request"]["headers"]) <= {"content-type"}
            assert set(interaction["response"]["headers"]) <= {"content-type"}
    assert project.files_containing(FAKE_KEY) == []
    assert project.files_containing("org-SECRET") == []


def test_record_missing_records_only_new_items(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    first = project.run(record="all")
    assert first.ret == pytest.ExitCode.OK
    before = {path: path.read_bytes() for path in project.cassettes()}
    calls_before = len(fake_judge.calls)
    project.write_items([*ITEMS, EXTRA_ITEM])

    result = project.run(record="missing")

    planted = len(versions()) * (len(ITEMS) + 1)
    result.assert_outcomes(passed=planted, skipped=len(versions()))
    assert result.ret == pytest.ExitCode.OK
    new_calls = fake_judge.calls[calls_before:]
    assert len(new_calls) == len(versions())
    assert {call.item_id for call in new_calls} == {EXTRA_ITEM["id"]}
    assert project.cassettes() == expected_cassettes(project, [*ITEMS, EXTRA_ITEM])
    assert {path: path.read_bytes() for path in before} == before, "an old cassette changed"

    replayed = project.run()

    replayed.assert_outcomes(passed=planted, skipped=len(versions()))
    assert len(fake_judge.calls) == calls_before + len(versions())


def test_a_retried_call_records_only_its_success(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    version, item = versions()[0], ITEMS[0]
    fake_judge.fail_next = 1

    recorded = project.run("-k", f"{version}-{item['id']}", record="all")

    recorded.assert_outcomes(passed=1)
    assert len(fake_judge.calls) == 2  # the 500, then the SDK's retry
    (cassette,) = project.cassettes()
    (interaction,) = load_cassette(cassette)["interactions"]
    assert interaction["response"]["status"]["code"] == 200

    replayed = project.run("-k", f"{version}-{item['id']}")

    replayed.assert_outcomes(passed=1)
    assert len(fake_judge.calls) == 2
