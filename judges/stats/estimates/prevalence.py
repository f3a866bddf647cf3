"""A judge's pass rate on unlabelled outputs, corrected for the judge's own errors.

A judge that passes a bad answer now and then, or fails a good one, reports a raw pass rate
that is off by its error rates. With the true positive rate (TPR: good answers it passes)
and true negative rate (TNR: bad answers it fails) measured on labelled items, the
Rogan-Gladen estimator recovers the true rate:

    theta = (raw + TNR - 1) / (TPR + TNR - 1), clipped to [0, 1].

The interval is a percentile bootstrap that redraws all three counts (the outputs' passes,
the labelled positives the judge passed, the labelled negatives it failed), so it carries
the uncertainty of TPR and TNR as well as the outputs' sampling. A judge with
TPR + TNR <= 1 is no better than a coin: no correction exists, and none is given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from judges.stats.estimates.intervals import Rate, wilson
from judges.stats.estimates.resample import NAN, check_confidence, percentile_interval

__all__ = ["CorrectedRate", "corrected_pass_rate", "rogan_gladen"]


def rogan_gladen(raw: np.ndarray | float, tpr: np.ndarray | float, tnr: np.ndarray | float) -> Any:
    """The corrected rate, clipped to [0, 1]; nan where TPR + TNR <= 1."""
    raw_a, tpr_a, tnr_a = np.asarray(raw), np.asarray(tpr), np.asarray(tnr)
    denominator = tpr_a + tnr_a - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.clip((raw_a + tnr_a - 1.0) / denominator, 0.0, 1.0)
    out = np.where(denominator > 0, theta, np.nan)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class CorrectedRate:
    """The raw and the corrected pass rate, with what the correction rests on."""

    raw: Rate  # the judge's passes among the unlabelled outputs
    tpr: Rate  # labelled good items the judge passed
    tnr: Rate  # labelled bad items the judge failed
    value: float
    low: float
    high: float
    confidence: float
    resamples: int  # bootstrap draws used (draws with TPR + TNR <= 1 are left out)
    dropped: int  # draws left out

    def as_dict(self) -> dict[str, Any]:
        def r(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 4)

        return {
            "raw": self.raw.as_dict(),
            "tpr": self.tpr.as_dict(),
            "tnr": self.tnr.as_dict(),
            "corrected": {"value": r(self.value), "low": r(self.low), "high": r(self.high)},
            "confidence": self.confidence,
            "resamples": self.resamples,
            "dropped_resamples": self.dropped,
        }


def corrected_pass_rate(
    passed: int,
    n: int,
    tpr: tuple[int, int],
    tnr: tuple[int, int],
    *,
    confidence: float = 0.95,
    n_resamples: int = 20_000,
    seed: int = 0,
    resample_outputs: bool = True,
) -> CorrectedRate:
    """Rogan-Gladen pass rate of `passed` of `n` outputs, with its bootstrap interval.

    `tpr` and `tnr` are (count, of) on the labelled items. `resample_outputs=False` holds
    the raw rate fixed, as judgy 0.1.0 does (only for cross-checking).
    """
    check_confidence(confidence)
    for name, (k, m) in (("outputs", (passed, n)), ("tpr", tpr), ("tnr", tnr)):
        if m <= 0 or not 0 <= k <= m:
            raise ValueError(f"{name}: need 0 <= count <= n and n > 0, got {k} of {m}")
    raw, sens, spec = wilson(passed, n), wilson(*tpr), wilson(*tnr)
    if sens.rate + spec.rate <= 1.0:
        raise ValueError(
            f"TPR + TNR = {sens.rate + spec.rate:.3f} <= 1: the judge is no better than a coin "
            "on the labelled items, so no correction exists"
        )
    value = rogan_gladen(raw.rate, sens.rate, spec.rate)
    rng = np.random.default_rng(seed)
    # Resampling a 0/1 sample with replacement draws its count from Bin(n, observed rate).
    raws = rng.binomial(n, passed / n, n_resamples) / n if resample_outputs else raw.rate
    tprs = rng.binomial(tpr[1], sens.rate, n_resamples) / tpr[1]
    tnrs = rng.binomial(tnr[1], spec.rate, n_resamples) / tnr[1]
    draws = rogan_gladen(np.broadcast_to(raws, (n_resamples,)), tprs, tnrs)
    kept = draws[~np.isnan(draws)]
    low, high = percentile_interval(kept, confidence) if kept.size else (NAN, NAN)
    return CorrectedRate(
        raw, sens, spec, value, low, high, confidence, int(kept.size), n_resamples - kept.size
    )
