"""A cassette whose request no longer matches fails only its own tests, and re-records."""

from __future__ import annotations

import re

import pytest

from judges.core.spec import load_catalog
from judges.sets.pins import load_pins, write_pins

from ._support import (
    ITEMS,
    JUDGE,
    MODEL,
    FakeJudge,
    JudgesProject,
    nodeid,
    rerecord_lines,
    rerecords,
    versions,
)

STALE = ITEMS[1]


def failed_nodeids(output: str) -> set[str]:
    return set(re.findall(r"^FAILED (\S+)", output, flags=re.M))


def test_changed_inputs_fail_that_item_until_it_is_rerecorded(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    assert project.run(record="all").ret == pytest.ExitCode.OK
    changed = dict(STALE, inputs={**STALE["inputs"], "answer": STALE["inputs"]["answer"] + " !"})
    project.write_items([changed if item is STALE else item for item in ITEMS])

    stale = project.run()

    planted_failures = {nodeid(version, STALE) for version in versions()}
    gates = {f"regression_tests/test_gates.py::test_detection_gates[product_identity-{v}]"
             for v in versions()}  # fmt: skip
    # The set-level gates replay every item, the stale one included.
    assert failed_nodeids(stale.stdout.str()) == planted_failures | gates
    stale.assert_outcomes(passed=len(versions()) * (len(ITEMS) - 1), failed=2 * len(versions()))
    assert stale.ret == pytest.ExitCode.TESTS_FAILED, stale.stderr.str()
    for version in versions():
        stale.stdout.fnmatch_lines(
            [
                f"*no recorded judgement for product_identity prompt {version} on "
                f"local:smollm2-135m (item {STALE['id']}, run main): cassette cassettes/"
                f"product_identity/{version}/local-smollm2-135m/{STALE['id']}-{STALE['slug']}"
                ".yaml does not match the request: the prompt file, the item's inputs or the "
                "sampling settings changed since it was recorded (in the request, "
                'messages?1?.content: recorded *"closes below the strike.\\n*, now '
                '*"closes below the strike. !\\n*).',
            ]
        )
        assert rerecords(stale.stdout.str(), nodeid(version, STALE))
    # Each printed command names the model and the server the cassette was recorded with:
    # this replay was started without either.
    commands = rerecord_lines(stale.stdout.str())
    assert commands and all(
        f"--judge-model local:smollm2-135m --judge-base-url {fake_judge.url} " in command
        for command in commands
    ), commands
    calls = len(fake_judge.calls)

    rerecord = project.run("-k", STALE["id"], record="all")

    rerecord.assert_outcomes(passed=len(versions()))
    assert {call.item_id for call in fake_judge.calls[calls:]} == {STALE["id"]}
    assert len(fake_judge.calls) == calls + len(versions())

    green = project.run()

    green.assert_outcomes(passed=len(versions()) * len(ITEMS), skipped=len(versions()))
    assert green.ret == pytest.ExitCode.OK


def test_a_corrupt_cassette_names_its_file_and_the_rerecord_command(project: JudgesProject) -> None:
    assert project.run("-k", STALE["id"], record="all").ret == pytest.ExitCode.OK
    version = versions()[-1]
    cassette = project.cassette_dir(version) / f"{STALE['id']}-{STALE['slug']}.yaml"
    text = cassette.read_text(encoding="utf-8")
    # What a botched merge leaves behind.
    cassette.write_text(f"<<<<<<< HEAD\n{text}=======\n{text}>>>>>>> theirs\n", encoding="utf-8")

    result = project.run("-k", f"test_planted_item and {STALE['id']}")

    result.assert_outcomes(passed=len(versions()) - 1, failed=1)
    result.stdout.fnmatch_lines([f"*{STALE['id']}-{STALE['slug']}.yaml*"])
    assert rerecords(result.stdout.str(), nodeid(version, STALE))


def test_record_keeps_an_accepted_baselines_cassettes_unless_asked_by_name(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    assert project.run(record="all").ret == pytest.ExitCode.OK
    accepted = versions()[-1]
    # Accepted as `judges baseline --accept` would: named in gates.toml, pinned with its
    # cassettes in accepted.toml.
    project.write_set_file("gates.toml", f'["{MODEL}"."{accepted}"]\nbaseline = "{accepted}"\n')
    spec, cassettes = load_catalog()[JUDGE], project.root / "cassettes"
    write_pins(project.set_dir, spec, [(MODEL, accepted)], "2026-12-02", cassettes)
    cassette = project.cassette_dir(accepted) / f"{STALE['id']}-{STALE['slug']}.yaml"
    before = cassette.read_bytes()
    calls = len(fake_judge.calls)

    again = project.run(record="all")

    assert again.ret == pytest.ExitCode.OK
    # Every other version is re-recorded; the accepted baseline is not touched.
    assert len(fake_judge.calls) - calls == (len(versions()) - 1) * len(ITEMS)
    assert cassette.read_bytes() == before
    again.stdout.fnmatch_lines([
        f"kept {len(ITEMS)} cassette(s) of the accepted baseline {JUDGE} prompt {accepted} on "
        f"{MODEL}: --record never replaces an accepted baseline*--rerecord-baseline*",
    ])  # fmt: skip

    # A stale cassette of the baseline says to restore it, not to re-record it.
    changed = dict(STALE, inputs={**STALE["inputs"], "answer": STALE["inputs"]["answer"] + " !"})
    project.write_items([changed if item is STALE else item for item in ITEMS])
    stale = project.run("-k", f"test_planted_item and {accepted}-{STALE['id']}")
    assert stale.ret == pytest.ExitCode.TESTS_FAILED, stale.stderr.str()
    stale.stdout.fnmatch_lines([f"*Prompt {accepted} is the accepted baseline on {MODEL}*"])
    assert "Re-record it with" not in stale.stdout.str()
    project.write_items(ITEMS)

    calls = len(fake_judge.calls)
    fake_judge.scores["PE-02"] = 0  # the new recording: still caught, another verdict
    on_purpose = project.run("--rerecord-baseline", f"-k={JUDGE}-{accepted}-", record="all")

    assert on_purpose.ret == pytest.ExitCode.OK, on_purpose.stderr.str()
    assert len(fake_judge.calls) - calls == len(ITEMS)
    replaced = f"re-recorded {len(ITEMS)} cassette(s) of the accepted baseline {JUDGE} prompt"
    on_purpose.stdout.fnmatch_lines([f"{replaced} {accepted} on {MODEL} (--rerecord-baseline)*"])
    # What changed, against the previous recording, said once and kept on the pin.
    changed = (
        "with --rerecord-baseline: detection 2/2 -> 2/2 on the same items (0 caught->missed, "
        "0 missed->caught, one-sided McNemar mid-p = 1.0000); 1 of 3 main-run verdicts changed"
    )
    on_purpose.stdout.fnmatch_lines(
        [f"accepted baseline {JUDGE} prompt {accepted} on {MODEL} re-recorded *-*-* {changed}"]
    )
    pin = load_pins(project.set_dir)[(MODEL, accepted)]
    assert re.fullmatch(rf"\d{{4}}-\d{{2}}-\d{{2}} {re.escape(changed)}", pin.rerecorded)
    report = (project.root / "reports" / JUDGE / accepted / "report.md").read_text()
    assert f"re-recorded {pin.rerecorded}" in report
    # The next session with the same recording leaves the pin's note alone.
    project.run(f"-k={JUDGE}-{accepted}-")
    assert load_pins(project.set_dir)[(MODEL, accepted)].rerecorded == pin.rerecorded
