"""The corrected pass rate's words: report.md's lines, report.json's entry and the output of
`python -m judges estimate`, from the estimate `judges.verdicts.estimate` computes."""

from __future__ import annotations

from typing import Any

from judges.verdicts.estimate import PassRateEstimate

__all__ = ["estimate_dict", "estimate_lines", "estimate_warnings"]


def estimate_lines(estimate: PassRateEstimate) -> list[str]:
    rule = " and ".join(str(c) for c in estimate.rule)
    left = ", ".join(f"{n} {why}" for why, n in sorted(estimate.outputs_left_out.items()))
    failed = estimate.labelled_left_out
    r = estimate.rate
    return [
        f"{estimate.judge} prompt {estimate.version} on {estimate.model}; pass = {rule}",
        f"raw pass rate on the outputs: {r.raw}" + (f" (left out: {left})" if left else ""),
        f"TPR (controls passed): {r.tpr}; TNR (planted defects failed): {r.tnr}"
        + (f"; {failed} failed planted rows left out" if failed else ""),
        f"corrected pass rate (Rogan-Gladen): {r.value:.3f} [{r.low:.3f}, {r.high:.3f}], "
        f"{r.confidence:.0%} bootstrap over outputs, TPR and TNR ({r.resamples} draws, "
        f"{r.dropped} left out with TPR + TNR <= 1)",
        *estimate_warnings(estimate),
    ]


def estimate_warnings(estimate: PassRateEstimate) -> list[str]:
    share = estimate.dropped_share
    if share <= 0.05:
        return []
    return [
        f"warning: {share:.0%} of the bootstrap draws had TPR + TNR <= 1: the judge barely "
        "beats a coin on the planted set, so the corrected rate and its interval say "
        "little; improve the judge or label more items before trusting it"
    ]


def estimate_dict(estimate: PassRateEstimate) -> dict[str, Any]:
    return {
        "judge": estimate.judge,
        "version": estimate.version,
        "model": estimate.model,
        "pass_if": [str(c) for c in estimate.rule],
        **estimate.rate.as_dict(),
        "outputs_left_out": dict(sorted(estimate.outputs_left_out.items())),
        "labelled_left_out": estimate.labelled_left_out,
        "warnings": estimate_warnings(estimate),
    }
