"""`judges baseline --accept`'s policy (judges.verdicts.acceptance): its checks in order."""

from __future__ import annotations

from judges.core.results import JudgementRow
from judges.stats.fitness.chance import ChanceTest, Fitness
from judges.verdicts.acceptance import Acceptance, Refusal, acceptance
from judges.verdicts.verdict import ModelVerdict
from judges.verdicts.vocabulary import NOT_FIT, PASS, UNDECIDED

MODEL = "local:m"


def chance_test(fit: bool, testable: bool = True) -> ChanceTest:
    """Planted detection, better than chance (p = 0.001) or at chance (p = 0.5)."""
    p = 0.001 if fit else 0.5
    return ChanceTest(
        "planted detection", "detection - control FP", 0.4, 0.2, 0.6, 0.0, p, 0.9, 40,
        testable=testable,
    )  # fmt: skip


def checks(verdict: ModelVerdict, reason: str | None = None) -> Acceptance:
    return acceptance("1.0", [verdict], [], None, reason, dict)


def test_a_version_no_chance_test_can_decide_is_undecided_and_refused() -> None:
    small = ModelVerdict(model=MODEL, fitness=Fitness((chance_test(True, testable=False),)))
    assert small.undecided and small.fit  # nothing failed, nothing could fail
    assert small.verdict_word() == UNDECIDED != PASS
    found = checks(small)
    assert found.undecided == (MODEL,)
    assert found.refusal(accept_regression=False, reset_floors=False) is Refusal.UNDECIDED
    # Told why, it is accepted, and the reason is written per table.
    assert found.refusal(False, False, accept_undecided=True) is None
    assert found.undecided_reasons("pilot set") == {(MODEL, "1.0"): "pilot set"}


def test_a_decided_fit_version_is_accepted_and_not_fit_is_refused_first() -> None:
    fit = ModelVerdict(model=MODEL, fitness=Fitness((chance_test(True),)))
    assert fit.verdict_word() == PASS and checks(fit).refusal(False, False) is None
    unfit = ModelVerdict(model=MODEL, fitness=Fitness((chance_test(False),)))
    assert unfit.verdict_word() == NOT_FIT
    assert checks(unfit).refusal(False, False, accept_undecided=True) is Refusal.NOT_FIT


def row(item: str, control: bool, status: str = "ok", met: bool = False) -> JudgementRow:
    return JudgementRow(
        judge="j", prompt_version="1.0", prompt_hash="h", model=MODEL, item_id=item,
        category="control" if control else "defect", control=control, status=status,  # type: ignore[arg-type]
        met=met,
    )  # fmt: skip


def test_misses_acceptance_would_bury_are_refused_last_each_with_its_reason() -> None:
    rows = [row("C-01", True), row("C-02", True, met=True), row("D-01", False),
            row("D-02", False, status="error"), row("C-03", True, status="transport")]  # fmt: skip
    fit = ModelVerdict(model=MODEL, fitness=Fitness((chance_test(True),)))
    found = acceptance("1.0", [fit], rows, None, None, dict)
    # A control marked down and the items without a verdict; a missed defect is not buried.
    assert [r.item_id for r in found.buried_controls[MODEL]] == ["C-01"]
    assert [r.item_id for r in found.no_verdict[MODEL]] == ["C-03", "D-02"]
    assert found.refusal(False, False) is Refusal.MISSES
    assert found.refusal(False, False, accept_control_miss=True) is Refusal.MISSES
    assert found.refusal(False, False, False, True, True) is None
    assert found.miss_reasons("model drift", "server errors") == {
        (MODEL, "1.0"): {"C-01": "model drift", "C-03": "server errors", "D-02": "server errors"}
    }
    # NOT FIT refuses first; accepted NOT FIT, its control misses are accepted with it.
    unfit = ModelVerdict(model=MODEL, fitness=Fitness((chance_test(False),)))
    assert acceptance("1.0", [unfit], rows, None, None, dict).refusal(False, False) is (
        Refusal.NOT_FIT
    )
    kept = acceptance("1.0", [unfit], rows[:3], None, "a pilot", dict)
    assert not kept.buried_controls and kept.refusal(False, False) is None
    assert kept.miss_reasons("", "")[(MODEL, "1.0")] == {"C-01": "accepted NOT FIT: a pilot"}
