r"""An unchanged good judge, re-recorded on each built-in set, reads PASS: issue 33's remeasure.

Per built-in judge (the four the adversarial tests cover), a temporary project with its
committed planted set and suite and N byte-identical copies of one built-in prompt
(`_good_remeasure.py`): a fake judge on 127.0.0.1, right on 90% of its calls, each drawn on
its own and seeded, is recorded through `pytest --record` on every run the set enrols (main,
retest, noise, panel, SME, bias probes, reading list: they follow the judge). `python -m
judges baseline <judge> --accept 1.0` must accept the first copy (exit 0; it accepts each
copy's own misses and probe failures too, as for every recorded version); the others replay
offline against it, and each report's first word is read.

By default N = 2: the whole path, and copy 1 reads PASS under its seed with no test of its
replay failing (the report and the suite must agree: a probe that `baseline` left without a
ceiling, because one would reach 1.0, once failed test_probe_gates while its report read
PASS). With JUDGES_FULL_REMEASURE=1, N = 21, the issue's measure: at most
3 of the 20 re-records read anything but PASS, each one printed with its report's reasons,
and the re-records whose replay fails a test, whatever they read (run with -rP to see the
figures; docs/gates-and-verdicts.md quotes them). The full run also prints, as a
diagnostic, the same re-records gated by the accepted copy's own table: `baseline --accept`
gives every later recorded copy floors suggested from its own run, which it meets by
construction, while a version recorded after the acceptance inherits 1.0's:

    JUDGES_FULL_REMEASURE=1 python -m pytest -p no:xdist -rP \
        tests/integration/test_good_judge_remeasure.py

The battery (issue 45): the same path under other error models (`ErrorModel`: errors stuck
to items, on one field, drifting one step, concentrated on controls or on defects), each at
the same mean rate, and a steady judge, wrong on the same subjects every time. Copy 1.0 is
recorded, the later copies are written and recorded after it, 1.0 is accepted and gates
them with its table alone. A good judge (10%) must read PASS on at least 18 of 20
re-records; a judge that got worse (25% from copy 1.1 on, its errors falling the same way)
must read FAIL or NOT FIT on at least 8 of 10. By default one quick case per model (a judge
each) and two worse cases; in full, every model on every judge. The same on the `judges
init` scaffold, set up as a new user does (`scaffold_battery`): one good and one worse case
by default, every model in full.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import scipy.stats

from ._good_remeasure import (
    SCAFFOLD,
    TEMPLATES,
    Copy,
    ErrorModel,
    Remeasure,
    remeasure,
    remeasure_battery,
    scaffold_battery,
)
from ._support import FakeJudge, JudgesProject

FULL = os.environ.get("JUDGES_FULL_REMEASURE") == "1"
COPIES = 21 if FULL else 2
MAX_NOT_PASS = 3  # of 20 re-records (issue 33's "Done when")


class SuiteRed(Exception):
    """A re-record's report reads PASS while a test of its replay fails (the run is red)."""


def _summary(copies: list[Copy]) -> tuple[list[Copy], str]:
    """The re-records that read anything but PASS, and their count with its interval."""
    alarms = [copy for copy in copies if copy.word != "PASS"]
    n, k = len(copies), len(alarms)
    ci = scipy.stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
    return alarms, f"{k}/{n} re-records not PASS [{ci.low:.0%}, {ci.high:.0%}] (95% Wilson)"


def _red(copies: list[Copy]) -> tuple[list[Copy], str]:
    """The re-records whose replay fails a test, whatever their report reads."""
    red = [copy for copy in copies if copy.failed]
    named = "; ".join(f"{copy.version} {copy.word}: {', '.join(copy.tests)}" for copy in red)
    return red, f"{len(red)}/{len(copies)} re-records with a failed test ({named or 'none'})"


JUDGES = list(TEMPLATES)


@pytest.mark.parametrize("judge", JUDGES)
def test_rerecords_of_a_good_judge_read_pass(
    judge: str, project: JudgesProject, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = time.monotonic()
    found = remeasure(project, monkeypatch, judge, COPIES, inherited=FULL)
    code, said = found.accepted
    assert code == 0, said  # the good judge's first copy is accepted as the baseline
    assert found.wrong > 0  # the judge erred: not the replays of a perfect one
    alarms, counted = _summary(found.copies)
    print(
        f"{judge}: {counted}; copy 1.0 accepted (exit {code}); {found.wrong} of {found.calls} "
        f"draws wrong; {time.monotonic() - started:.0f} s"
    )
    for copy in alarms:
        print("\n".join(copy.lines()))
    red, listed = _red(found.copies)
    print(f"{judge}: {listed}")
    if found.inherited is not None:  # a diagnostic: the floors `baseline` suggested for 1.0
        shown, counted = _summary(found.inherited)
        print(f"{judge}, every copy gated by 1.0's table: {counted}; {_red(found.inherited)[1]}")
        for copy in shown:
            print("\n".join(copy.lines()))
    if FULL:
        assert len(alarms) <= MAX_NOT_PASS, [copy.lines() for copy in alarms]
        return
    assert not alarms, [copy.lines() for copy in alarms]
    if red:  # the report and the suite must agree
        raise SuiteRed(listed)


# -- the battery of error models (issue 45) -----------------------------------------------

BATTERY = [model for model in ErrorModel if model is not ErrorModel.INDEPENDENT]
# Quick: each model on one judge, so every model and every judge runs in the proof command
# (`-m proof`); JUDGES_FULL_REMEASURE=1: every model on every judge, 20 good and 10 worse copies.
QUICK = {
    ErrorModel.ITEM_STICKY: "product_identity",
    ErrorModel.ONE_FIELD: "geval",
    ErrorModel.DRIFT: "relevance",
    ErrorModel.ON_CONTROLS: "product_identity",
    ErrorModel.ON_DEFECTS: "pairwise",
    ErrorModel.STEADY: "relevance",
}
MAX_NOT_PASS_BATTERY = 2  # of 20: a good judge reads PASS in at least 18 (issue 45)
MIN_CAUGHT = 8  # of 10: a worse judge reads FAIL or NOT FIT in at least 8 (issue 45)
CAUGHT = ("FAIL", "NOT FIT")
WORSE = 0.25  # the worse judge's error rate


def _battery() -> list[tuple[ErrorModel, str]]:
    if FULL:
        return [(model, judge) for model in BATTERY for judge in JUDGES]
    return list(QUICK.items())


@pytest.mark.parametrize(("model", "judge"), _battery(), ids=lambda v: str(v))
def test_a_good_judge_reads_pass_under_every_error_model(
    model: ErrorModel,
    judge: str,
    project: JudgesProject,
    fake_judge: FakeJudge,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The later copies are gated by the accepted copy's table (floors and baseline), as a
    new prompt version is."""
    _check_good(remeasure_battery(project, monkeypatch, judge, COPIES, model), judge, model)


def _check_good(found: Remeasure, judge: str, model: ErrorModel) -> None:
    code, said = found.accepted
    assert code == 0, said
    assert found.wrong > 0
    alarms, counted = _summary(found.copies)
    print(f"{judge} under {model}: {counted}; {found.wrong} of {found.calls} draws wrong")
    for copy in alarms:
        print("\n".join(copy.lines()))
    limit = MAX_NOT_PASS_BATTERY if FULL else 0
    assert len(alarms) <= limit, [copy.lines() for copy in alarms]


WORSE_COPIES = 11 if FULL else 2  # the accepted copy, then 10 (quick: 1) at 25% error
# Quick: two models on two judges; JUDGES_FULL_REMEASURE=1: every model on every judge.
QUICK_WORSE = [(ErrorModel.INDEPENDENT, "product_identity"), (ErrorModel.DRIFT, "relevance")]


def _worse_battery() -> list[tuple[ErrorModel, str]]:
    if FULL:
        return [(model, judge) for model in ErrorModel for judge in JUDGES]
    return QUICK_WORSE


@pytest.mark.parametrize(("model", "judge"), _worse_battery(), ids=lambda v: str(v))
def test_a_worse_judge_reads_fail_under_every_error_model(
    model: ErrorModel,
    judge: str,
    project: JudgesProject,
    fake_judge: FakeJudge,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The accepted copy errs on 10% of its calls; every later copy on 25%, its errors
    falling the same way: each must read FAIL or NOT FIT, by what got worse."""
    found = remeasure_battery(project, monkeypatch, judge, WORSE_COPIES, model, error_after=WORSE)
    _check_worse(found, judge, model)


def _check_worse(found: Remeasure, judge: str, model: ErrorModel) -> None:
    code, said = found.accepted
    assert code == 0, said
    missed = [copy for copy in found.copies if copy.word not in CAUGHT]
    n, k = len(found.copies), len(found.copies) - len(missed)
    ci = scipy.stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
    interval = f"[{ci.low:.0%}, {ci.high:.0%}] (95% Wilson)"
    print(f"{judge} under {model}, worse: {k}/{n} read FAIL or NOT FIT {interval}")
    for copy in found.copies:
        print("\n".join(copy.lines()))
    assert k >= (MIN_CAUGHT if FULL else n), [copy.lines() for copy in missed]


# The `judges init` scaffold (195 items, a retest, 2 noise items), as a new user gets it.
# Quick: one model each way; JUDGES_FULL_REMEASURE=1: every model, held to the same 8 of 10
# (8-10 of 10 caught in full, where its 35 defects at 55 items caught 0-4; the table is in
# docs/gates-and-verdicts.md). A category of 50 defects still often sees only a drop of
# more than 15 points: where a quick copy is not caught, the report must say that the set
# cannot see such a drop and how to learn the items it needs.
# The built-in sets' independent case is test_rerecords_of_a_good_judge_read_pass; the
# scaffold has no other, so its full battery runs every model.
SCAFFOLD_GOOD = list(ErrorModel) if FULL else [ErrorModel.ONE_FIELD]
SCAFFOLD_WORSE = list(ErrorModel) if FULL else [ErrorModel.ITEM_STICKY]
TOO_SMALL = ("cannot detect a 15-point drop", "`python -m judges plan` says how many items")


@pytest.mark.parametrize("model", SCAFFOLD_GOOD, ids=str)
def test_a_good_judge_reads_pass_on_the_init_scaffold_under_every_error_model(
    model: ErrorModel, repository: Path, pytester: pytest.Pytester, fake_judge: FakeJudge
) -> None:
    _check_good(scaffold_battery(pytester, fake_judge, COPIES, model), SCAFFOLD, model)


@pytest.mark.parametrize("model", SCAFFOLD_WORSE, ids=str)
def test_a_worse_judge_on_the_init_scaffold_is_caught_or_its_report_says_the_set_is_too_small(
    model: ErrorModel, repository: Path, pytester: pytest.Pytester, fake_judge: FakeJudge
) -> None:
    found = scaffold_battery(pytester, fake_judge, WORSE_COPIES, model, error_after=WORSE)
    if FULL:
        _check_worse(found, SCAFFOLD, model)
        return
    code, said = found.accepted
    assert code == 0, said
    for copy in found.copies:
        if copy.word in CAUGHT:
            continue
        report = pytester.path / "reports" / SCAFFOLD / copy.version / "report.md"
        text = report.read_text(encoding="utf-8")
        assert all(words in text for words in TOO_SMALL), copy.lines()
