"""An accepted recording is pinned, cassettes included, in a repository made by `judges init`.

Each case once went through without a word (issue 46, "Accepted recordings"): a hand-edited
cassette of the accepted baseline; a pinned prompt edited, its hash in accepted.toml updated
and its cassettes re-recorded elsewhere and copied in; accepted.toml emptied before a
`--record`; gates.toml's baseline line deleted; a version acceptance refused made the
baseline by hand; a recorded (not accepted) prompt edited in place and re-recorded.

One repository is built per module (init, 28 grown items, 1.0 and the worse 1.1 recorded
and replayed, 1.0 accepted) and copied into each test's own folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

from judges.core.results import read_jsonl
from judges.core.spec import load_catalog

from ._support import FakeJudge, Received
from ._walkthrough import INNER_OPTIONS, MODEL, command, judged_reply, right_verdict, scaffold_items

JUDGE = "support_reply"
SLUG = MODEL.replace(":", "-")
POLICY = (
    "Refunds: an unused item in its original packaging can be returned within 30 days of "
    "delivery for a refund to the original payment method. Shipping costs are not refunded."
)
MISSED = 7  # the window defect every version misses: 1.0's one accepted miss
# The grown items' ids follow the scaffold's own (SR-001 ... SR-195); the judge is right on
# every scaffold item (their answer key), so the grown ones alone tell the versions apart.
GROWN_FROM = len(scaffold_items())
SCAFFOLD_KEY = {item["inputs"]["reply"]: right_verdict(item) for item in scaffold_items()}


def _item(number: int) -> dict:
    """Odd numbers: a defect stating a 90-day window (the policy says 30); even: a control."""
    control = number % 2 == 0
    days = 30 if control else 90
    reply = (
        f"Yes: unused items in their original packaging can be returned within {days} days "
        f"of delivery (case {number}), refunded to your original payment method."
    )
    expect = [{"field": "accuracy", "op": "<=", "value": 1}]
    if control:
        expect = [
            {"field": "accuracy", "op": ">=", "value": 2},
            {"field": "helpfulness", "op": ">=", "value": 2},
        ]
    return {
        "id": f"SR-{GROWN_FROM + number:03d}",
        "slug": f"{'control' if control else 'window'}-{number:02d}",
        "judge": JUDGE,
        "category": "control" if control else "wrong_window",
        "control": control,
        "inputs": {"policy": POLICY, "question": "Can I return it?", "reply": reply},
        "expect": expect,
        "provenance": {"source": "hand", "note": "grown for the pins"},
    }


def judge(received: Received) -> str:
    """Reads the reply for a wrong window, but misses case 7; a prompt marked "(sloppy)"
    misses cases 9, 13, ... 33 too: significantly worse than 1.0."""
    prompt = received.body["messages"][-1]["content"]
    known = SCAFFOLD_KEY.get(judged_reply(received))
    if known is not None:
        return json.dumps({**known, "rationale": "read"})
    reply = prompt.split("## Support reply", 1)[1].split("## Your task", 1)[0]
    found = re.search(r"\(case (\d+)\)", reply)
    case = int(found[1]) if found else 0
    missed = case == MISSED or ("(sloppy)" in prompt and case % 4 == 1)
    accuracy = 0 if "90 days" in reply and not missed else 3
    helpfulness = 0 if ("loyalty" in reply or "FAQ" in reply) else 3
    return json.dumps({"accuracy": accuracy, "helpfulness": helpfulness, "rationale": "read"})


def record(pytester: pytest.Pytester, fake_judge: FakeJudge, *args: str) -> pytest.RunResult:
    live = ["--record", "--judge-model", MODEL, "--judge-base-url", fake_judge.url]
    return pytester.runpytest_inprocess(*INNER_OPTIONS, *live, *args)


def replay(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess(*INNER_OPTIONS, *args)


def said(result: pytest.RunResult) -> str:
    return result.stdout.str() + result.stderr.str()


@pytest.fixture
def project(
    repository: Path,
    pytester: pytest.Pytester,
    fake_judge: FakeJudge,
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    """The module's repository, copied here: built by the first test that asks for it."""
    fake_judge.content = judge
    built = tmp_path_factory.getbasetemp() / f"accepted-pins-{fake_judge.url.rsplit(':', 1)[1]}"
    if not built.is_dir():
        _build(repository, pytester, fake_judge)
        shutil.copytree(repository, built, ignore=shutil.ignore_patterns(".judges-tmp"))
    else:
        shutil.copytree(built, repository, dirs_exist_ok=True)
    load_catalog.cache_clear()  # in-process runs share the loaded judges
    return repository


def _build(repository: Path, pytester: pytest.Pytester, fake_judge: FakeJudge) -> None:
    code, out = command(["init", JUDGE, "--model", MODEL])
    assert code == 0, out
    items = repository / "planted_sets" / JUDGE / "items.jsonl"
    with items.open("a", encoding="utf-8") as stream:
        stream.writelines(json.dumps(_item(n)) + "\n" for n in range(7, 35))
    prompt = repository / "judge_prompts" / JUDGE / "1.0.md"
    sloppy = prompt.read_text(encoding="utf-8") + "\n(sloppy)\n"
    (prompt.parent / "1.1.md").write_text(sloppy, encoding="utf-8")
    load_catalog.cache_clear()
    record(pytester, fake_judge)  # fails: its misses are not accepted yet
    replay(pytester)  # writes both versions' reports
    code, out = command(["baseline", JUDGE, "--accept", "1.0"])
    assert code == 0, out
    replay(pytester, "--snapshot-update")  # the verdict tables' snapshots (1.1 fails gates)


def set_file(project: Path, name: str) -> Path:
    return project / "planted_sets" / JUDGE / name


def cassette(project: Path, version: str, number: int, root: str = "cassettes") -> Path:
    item = _item(number)
    return project / root / JUDGE / version / SLUG / f"{item['id']}-{item['slug']}.yaml"


def without_table(text: str, model: str, version: str) -> str:
    """A TOML file's text without its ["model"."version"] table."""
    header = f'["{model}"."{version}"]'
    if header not in text:
        return text
    before, after = text.split(header, 1)
    rest = after.split("\n[", 1)
    return before + ("[" + rest[1] if len(rest) > 1 else "")


def test_a_hand_edited_cassette_of_the_accepted_baseline_fails_the_replay(
    project: Path, pytester: pytest.Pytester
) -> None:
    """A verdict flipped by hand (the miss made a catch), its accepted miss deleted and the
    reports regenerated: the replay refuses the cassette, naming it and the way to
    re-record the baseline on purpose."""
    path = cassette(project, "1.0", MISSED)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for interaction in data["interactions"]:
        body = interaction["response"]["body"]
        body["string"] = body["string"].replace('\\"accuracy\\": 3', '\\"accuracy\\": 0')
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    expectations = set_file(project, "expectations.toml")
    text = expectations.read_text(encoding="utf-8")
    before, table = text.split(f'["{MODEL}"."1.0"]', 1)
    missed = _item(MISSED)["id"]
    table = re.sub(rf"(?m)^{missed} = .*\n", "", table, count=1)
    expectations.write_text(before + f'["{MODEL}"."1.0"]' + table, encoding="utf-8")

    replay(pytester, "--snapshot-update")  # the reports and verdict tables regenerated

    result = replay(pytester, "-k", f"{JUDGE}-1.0", "--check-reports")

    assert result.ret != 0
    assert f"{path}: a cassette of the accepted baseline {JUDGE} prompt 1.0" in said(result)
    assert "--rerecord-baseline" in said(result)


def test_a_pinned_prompt_rehashed_by_hand_with_cassettes_copied_in_fails_the_replay(
    project: Path, pytester: pytest.Pytester, fake_judge: FakeJudge
) -> None:
    prompt = project / "judge_prompts" / JUDGE / "1.0.md"
    old = hashlib.sha256(prompt.read_bytes()).hexdigest()
    prompt.write_text(prompt.read_text(encoding="utf-8") + "\nBe strict.\n", encoding="utf-8")
    new = hashlib.sha256(prompt.read_bytes()).hexdigest()
    pins = set_file(project, "accepted.toml")
    pins.write_text(pins.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    load_catalog.cache_clear()
    elsewhere = record(pytester, fake_judge, "--cassette-dir", "elsewhere", "-k", f"{JUDGE}-1.0")
    assert elsewhere.ret == 0, said(elsewhere)[-2000:]
    shutil.copytree(
        project / "elsewhere" / JUDGE / "1.0", project / "cassettes" / JUDGE / "1.0",
        dirs_exist_ok=True,
    )  # fmt: skip

    result = replay(pytester, "-k", f"{JUDGE}-1.0")

    assert result.ret != 0
    assert f"of the accepted baseline {JUDGE} prompt 1.0 on {MODEL} changed" in said(result)


def test_an_emptied_accepted_toml_stops_a_recording_before_any_call(
    project: Path, pytester: pytest.Pytester, fake_judge: FakeJudge
) -> None:
    set_file(project, "accepted.toml").write_text("", encoding="utf-8")
    before = cassette(project, "1.0", 8).read_bytes()

    result = record(pytester, fake_judge, "-k", f"{JUDGE}-1.0")

    assert result.ret != 0 and not fake_judge.calls
    assert cassette(project, "1.0", 8).read_bytes() == before
    out = said(result)
    assert f'names baseline = "1.0", but {set_file(project, "accepted.toml")}' in out
    assert f"python -m judges baseline {JUDGE} --accept 1.0" in out


def test_a_pinned_baseline_missing_from_gates_toml_is_named(
    project: Path, pytester: pytest.Pytester
) -> None:
    gates = set_file(project, "gates.toml")
    text = gates.read_text(encoding="utf-8")
    gates.write_text(text.replace('baseline = "1.0"\n', ""), encoding="utf-8")

    result = replay(pytester, "-k", f"{JUDGE}-1.0")

    assert result.ret != 0
    out = said(result)
    assert f"{set_file(project, 'accepted.toml')}:" in out
    assert f"is pinned as an accepted baseline, but {gates} names no baseline" in out


def test_a_refused_version_made_the_baseline_by_hand_fails_the_run(
    project: Path, pytester: pytest.Pytester
) -> None:
    code, out = command(["baseline", JUDGE, "--accept", "1.1"])
    assert code == 1 and "significantly worse than the accepted baseline" in out
    # By hand: gates.toml, accepted.toml (its hashes computed as acceptance would) and the
    # accepted misses of 1.1.
    gates = set_file(project, "gates.toml")
    text = without_table(gates.read_text(encoding="utf-8"), MODEL, "1.1")
    gates.write_text(text + f'\n["{MODEL}"."1.1"]\nbaseline = "1.1"\n', encoding="utf-8")
    _forge_pin(project, "1.1")
    rows = read_jsonl(project / "reports" / JUDGE / "1.1" / "results.jsonl")
    missed = sorted({r.item_id for r in rows if r.run == "main" and not r.met})
    expectations = set_file(project, "expectations.toml")
    text = without_table(expectations.read_text(encoding="utf-8"), MODEL, "1.1")
    table = "".join(f'{item} = "missed"\n' for item in missed)
    expectations.write_text(f'{text}\n["{MODEL}"."1.1"]\n{table}', encoding="utf-8")

    result = replay(pytester, "-k", f"{JUDGE}-1.1")

    assert result.ret != 0
    assert "prompt 1.0 main run (the accepted baseline before it)" in said(result)
    report = (project / "reports" / JUDGE / "1.1" / "report.md").read_text(encoding="utf-8")
    assert "prompt 1.1 is the baseline in gates.toml but acceptance refuses it" in report


def _forge_pin(project: Path, version: str) -> None:
    """An accepted.toml table and manifest lines for `version`, as a careful hand would."""
    root = project / "cassettes"
    files = {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted((root / JUDGE / version / SLUG).glob("**/*.yaml"))
    }
    listing = "".join(f"{digest}  {name}\n" for name, digest in sorted(files.items()))
    digest = hashlib.sha256(listing.encode("utf-8")).hexdigest()
    prompt = hashlib.sha256((project / "judge_prompts" / JUDGE / f"{version}.md").read_bytes())
    pins = set_file(project, "accepted.toml")
    with pins.open("a", encoding="utf-8") as stream:
        stream.write(
            f'\n["{MODEL}"."{version}"]\npinned = "2026-12-02"\n'
            f'prompts = {{ "{version}.md" = "{prompt.hexdigest()}" }}\n'
            f'cassettes = {{ files = {len(files)}, sha256 = "{digest}" }}\n'
        )
    with set_file(project, "accepted-cassettes.sha256").open("a", encoding="utf-8") as stream:
        stream.write(listing)


def test_a_recorded_prompt_edited_in_place_is_never_re_recorded(
    project: Path, pytester: pytest.Pytester, fake_judge: FakeJudge
) -> None:
    """1.1 is published and recorded, not accepted: an edit in place stops a re-record."""
    prompt = project / "judge_prompts" / JUDGE / "1.1.md"
    prompt.write_text(prompt.read_text(encoding="utf-8") + "\nBe strict.\n", encoding="utf-8")
    load_catalog.cache_clear()
    before = cassette(project, "1.1", 8).read_bytes()

    result = record(pytester, fake_judge, "-k", f"{JUDGE}-1.1")

    assert result.ret != 0 and not fake_judge.calls
    assert cassette(project, "1.1", 8).read_bytes() == before
    out = said(result)
    assert f"{prompt}: prompt 1.1 of {JUDGE} was recorded" in out
    assert "Published prompts are never edited: add 1.2.md" in out


def test_a_recording_into_another_cassette_dir_replaces_nothing_accepted(
    project: Path, pytester: pytest.Pytester, fake_judge: FakeJudge
) -> None:
    """The pins guard the project's own cassettes/: a live recording of the accepted
    version into a scratch --cassette-dir (a smoke test, a second opinion) replays from
    there, with no word of a changed accepted recording."""
    elsewhere = str(project / "scratch-cassettes")
    selected = f"{JUDGE}-1.0-{_item(MISSED)['id']}-"
    # Another draw: the same verdict in other words, so the bytes differ from the pinned.
    fake_judge.content = lambda received: judge(received).replace('"read"', '"read again"')
    recorded = record(pytester, fake_judge, "--cassette-dir", elsewhere, "-k", selected)
    replayed = replay(pytester, "--cassette-dir", elsewhere, "-k", selected)
    assert "changed since it was accepted" not in said(replayed), said(replayed)
    assert replayed.ret == recorded.ret == pytest.ExitCode.OK, said(replayed)


def _forge(path: Path, old: str, new: str) -> None:
    """Replace `old` by `new` in every recorded reply of one cassette, as a hand would."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for interaction in data["interactions"]:
        body = interaction["response"]["body"]
        assert old in body["string"], body["string"]
        body["string"] = body["string"].replace(old, new)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")


def test_accepting_again_never_re_pins_a_forged_cassette_without_a_reason(
    project: Path, pytester: pytest.Pytester
) -> None:
    """A hand-edited accepted cassette, then `baseline --accept` again: refused, each file
    named, nothing written; with `--repin "why"` the files are named as re-pinned and the
    reason is written beside the pins, after which the replay no longer refuses them."""
    forged = [cassette(project, "1.0", 8), cassette(project, "1.0", 10)]
    for path in forged:
        _forge(path, '\\"rationale\\": \\"read\\"', '\\"rationale\\": \\"read it\\"')
    pins = set_file(project, "accepted.toml")
    before = {name: set_file(project, name).read_bytes() for name in ("accepted.toml",
              "accepted-cassettes.sha256", "gates.toml", "expectations.toml")}  # fmt: skip

    refused = replay(pytester, "-k", f"{JUDGE}-1.0")  # the session names the same fixes
    assert f'python -m judges baseline {JUDGE} --accept 1.0 --repin "<why>"' in said(refused)

    code, out = command(["baseline", JUDGE, "--accept", "1.0"])

    assert code == 1, out
    assert all(f"{path} differs (prompt 1.0 on {MODEL})" in out for path in forged), out
    assert '--accept 1.0 --repin "<why>"' in out and "Nothing written" in out
    assert before == {name: set_file(project, name).read_bytes() for name in before}

    code, out = command(["baseline", JUDGE, "--accept", "1.0", "--repin", "rationales reworded"])

    assert code == 0, out
    assert all(f"re-pinned: {path}" in out for path in forged), out
    written = pins.read_text(encoding="utf-8")
    assert re.search(r'repinned = "\d{4}-\d\d-\d\d: rationales reworded \(2 cassette', written)
    replayed = replay(pytester, "-k", f"{JUDGE}-1.0")
    assert "changed since it was accepted" not in said(replayed), said(replayed)[-3000:]


def test_a_stale_accepted_miss_of_the_baseline_points_to_acceptance_not_a_hand_edit(
    project: Path, pytester: pytest.Pytester
) -> None:
    """The accepted miss made a catch in the cassette and re-pinned on purpose: the strict
    XPASS names the acceptance that rewrites the misses (and checks the pins), never
    "delete line N", and that command runs as printed."""
    path = cassette(project, "1.0", MISSED)
    _forge(path, '\\"accuracy\\": 3', '\\"accuracy\\": 0')
    code, out = command(["baseline", JUDGE, "--accept", "1.0", "--repin", "caught after all"])
    assert code == 0, out
    selected = f"{JUDGE}-1.0-{_item(MISSED)['id']}-"

    result = replay(pytester, "-k", selected)

    out = said(result)
    assert "[XPASS(strict)] now met" in out, out[-3000:]
    assert "delete line" not in out
    hint = f"python -m judges baseline {JUDGE} --accept 1.0"
    assert f"Accept it again (`{hint}`)" in out
    code, out = command(hint.split()[3:])
    assert code == 0, out
    assert replay(pytester, "-k", selected).ret == pytest.ExitCode.OK


DELETED = "You grade the support reply above."


@pytest.mark.parametrize("mode", ["--record", "--record=all"])
def test_a_line_deleted_from_a_recorded_prompt_is_refused_like_one_added(
    project: Path, pytester: pytest.Pytester, fake_judge: FakeJudge, mode: str
) -> None:
    """1.1 is recorded, not accepted: deleting an instruction is an edit like appending one,
    refused before any call with the same message, `--record=all` included."""
    prompt = project / "judge_prompts" / JUDGE / "1.1.md"
    text = prompt.read_text(encoding="utf-8")
    assert DELETED in text
    prompt.write_text(text.replace(DELETED + "\n", ""), encoding="utf-8")
    load_catalog.cache_clear()
    before = {path: path.read_bytes() for path in (project / "cassettes").glob("**/*.yaml")}

    live = [mode, "--judge-model", MODEL, "--judge-base-url", fake_judge.url]
    result = pytester.runpytest_inprocess(*INNER_OPTIONS, *live, "-k", f"{JUDGE}-1.1")

    assert result.ret != 0 and not fake_judge.calls
    assert before == {path: path.read_bytes() for path in (project / "cassettes").glob("**/*.yaml")}
    out = said(result)
    folder = project / "cassettes" / JUDGE / "1.1" / SLUG
    assert (
        f"{prompt}: prompt 1.1 of {JUDGE} was recorded ({folder}) "
        f"and has been edited since: its recording sent {DELETED!r}, which the file no longer "
        "holds. Published prompts are never edited: add 1.2.md"
    ) in " ".join(out.split())


def test_acceptance_and_recording_exclude_each_other(
    project: Path, pytester: pytest.Pytester, fake_judge: FakeJudge,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """`baseline --accept` while a recording holds the cassette folder is refused, nothing
    written; and a recording that starts while an acceptance pins is refused before any
    call, naming the acceptance."""
    from judges.calls.cassettes import lock_recording
    from judges.pytest_plugin import live
    from judges.sets import pins as pins_module

    cassettes = project / "cassettes"
    gates = set_file(project, "gates.toml").read_bytes()
    pinned = set_file(project, "accepted.toml").read_bytes()
    held = lock_recording(cassettes, "pytest --record")  # what a recording session holds
    try:
        code, out = command(["baseline", JUDGE, "--accept", "1.0"])
    finally:
        held.release()
    assert code == 2, out
    assert f"another session (pid {os.getpid()} (pytest --record)) is recording into" in out
    assert set_file(project, "gates.toml").read_bytes() == gates
    assert set_file(project, "accepted.toml").read_bytes() == pinned

    # While acceptance writes its pins, a recording session starts (its own lock step).
    refused: list[str] = []
    write_pins = pins_module.write_pins

    def pinning(*args: object, **kwargs: object) -> Path:
        try:
            live.lock_cassettes(cassettes, "--cassette-dir").release()
        except live.LiveSetupError as error:
            refused.append(str(error))
        return write_pins(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pins_module, "write_pins", pinning)
    code, out = command(["baseline", JUDGE, "--accept", "1.0"])

    assert code == 0, out
    assert len(refused) == 1, refused
    assert (
        f"(python -m judges baseline {JUDGE} --accept)) is recording into or pinning"
        in (refused[0])
    )
    recorded = record(pytester, fake_judge, "-k", f"{JUDGE}-1.0")  # released: it may start
    assert "is recording into or pinning" not in said(recorded)


def coin_judge(received: Received) -> str:
    """1.2's prompt says "(flag all)": every reply marked down, controls too (at chance)."""
    prompt = received.body["messages"][-1]["content"]
    if "(flag all)" in prompt:
        return json.dumps({"accuracy": 0, "helpfulness": 0, "rationale": "flagged"})
    return judge(received)


def test_acceptance_reasons_deleted_by_hand_fail_a_project_without_the_fitness_test(
    project: Path, pytester: pytest.Pytester, fake_judge: FakeJudge
) -> None:
    """1.2 flags everything: NOT FIT and worse than 1.0, accepted knowingly with both
    reasons. Both reasons deleted from gates.toml, a project whose tests are the planted
    items alone (no fitness or gate test) still fails its replay, naming the file, the table
    and each missing reason."""
    prompt = project / "judge_prompts" / JUDGE / "1.0.md"
    flagging = prompt.read_text(encoding="utf-8") + "\n(flag all)\n"
    (prompt.parent / "1.2.md").write_text(flagging, encoding="utf-8")
    load_catalog.cache_clear()
    fake_judge.content = coin_judge
    record(pytester, fake_judge, "-k", f"{JUDGE}-1.2")
    replay(pytester, "-k", f"{JUDGE}-1.2")
    code, out = command(
        ["baseline", JUDGE, "--accept", "1.2", "--reset-floors", "--accept-not-fit",
         "kept for the demo", "--accept-regression", "worse on purpose"]
    )  # fmt: skip
    assert code == 0, out
    gates = set_file(project, "gates.toml")
    text = gates.read_text(encoding="utf-8")
    for line in (
        'accept_not_fit = "kept for the demo"\n',
        'accept_regression = "worse on purpose"\n',
    ):
        assert line in text
        text = text.replace(line, "")
    gates.write_text(text, encoding="utf-8")
    # The project's suite: its planted items alone, no fitness or gate test.
    suite = project / "judge_tests" / "test_judges.py"
    suite.write_text("from judges.pytest_plugin.suite import test_planted_item  # noqa: F401\n")

    result = replay(pytester, "-k", f"{JUDGE}-1.2")

    out = " ".join(said(result).split())
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out[-3000:]
    table = f'{gates}: ["{MODEL}"."1.2"] is the accepted baseline (pinned) but'
    assert f"{table} NOT FIT and has no accept_not_fit" in out, out[-3000:]
    assert (
        f"{table} significantly worse than the baseline before it and has no accept_regression"
        in out
    )
    assert '--accept 1.2 --accept-not-fit "<why>"' in out
