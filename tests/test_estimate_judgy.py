"""The corrected pass rate against judgy 0.1.0 (the dev extra) on random cases.

judgy runs its own percentile bootstrap in a Python loop, from numpy's global generator.
"""

from __future__ import annotations

import numpy as np
import pytest

from judges.stats.estimates.prevalence import corrected_pass_rate

judgy = pytest.importorskip("judgy", reason="judgy is in the dev extra: pip install -e '.[dev]'")


def _case(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n_pos, n_neg, n_out = (int(x) for x in rng.integers([40, 40, 100], [200, 200, 2000]))
    tpr, tnr, theta = rng.uniform(0.7, 0.98), rng.uniform(0.65, 0.98), rng.uniform(0.1, 0.9)
    labels = np.r_[np.ones(n_pos, int), np.zeros(n_neg, int)]
    preds = np.r_[rng.random(n_pos) < tpr, rng.random(n_neg) >= tnr].astype(int)
    truth = rng.random(n_out) < theta
    outputs = np.where(truth, rng.random(n_out) < tpr, rng.random(n_out) >= tnr).astype(int)
    return labels, preds, outputs


@pytest.mark.parametrize("seed", range(4))
def test_corrected_rate_matches_judgy_on_random_cases(seed: int) -> None:
    labels, preds, outputs = _case(np.random.default_rng(seed))
    np.random.seed(seed)  # judgy draws from numpy's global generator
    theta, low, high = judgy.estimate_success_rate(labels, preds, outputs, 8000)
    n_pos = int(labels.sum())
    tp, tn = int(preds[:n_pos].sum()), int((preds[n_pos:] == 0).sum())
    args = (int(outputs.sum()), outputs.size, (tp, n_pos), (tn, labels.size - n_pos))
    # judgy holds the raw rate fixed: so does the cross-check; the estimate itself does not.
    fixed = corrected_pass_rate(*args, resample_outputs=False, seed=seed)
    assert fixed.value == pytest.approx(theta, abs=1e-12)
    # Two bootstraps (judgy's redraws the label mix, this one keeps it): close, not equal.
    assert fixed.low == pytest.approx(low, abs=0.025)
    assert fixed.high == pytest.approx(high, abs=0.025)
    full = corrected_pass_rate(*args, seed=seed)
    assert full.value == fixed.value
    assert full.high - full.low >= fixed.high - fixed.low - 0.005  # outputs add uncertainty
