"""The row-wise rank correlations against scipy, one call per row (the reference), on random
cases with ties, constant rows, NaN and a few columns."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.stats

from judges.stats.estimates.rank_correlation import rowwise_kendall_tau_b, rowwise_spearman


def _random_rows(rng: np.random.Generator, rows: int, columns: int) -> np.ndarray:
    """Scores on a coarse scale (many ties) or continuous, some rows constant, some NaN."""
    coarse = rng.random() < 0.5
    x = (
        rng.integers(0, 4, (rows, columns)).astype(float)
        if coarse
        else rng.normal(size=(rows, columns))
    )
    x[rng.random(rows) < 0.1] = 2.0  # constant rows
    nan_rows = rng.random(rows) < 0.1
    x[nan_rows, rng.integers(0, columns)] = np.nan
    return x


def _by_scipy(function, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.stats.ConstantInputWarning)
        return np.array([float(function(a, b).statistic) for a, b in zip(x, y, strict=True)])


@pytest.mark.parametrize(
    ("batched", "reference"),
    [(rowwise_spearman, scipy.stats.spearmanr), (rowwise_kendall_tau_b, scipy.stats.kendalltau)],
    ids=["spearman", "kendall"],
)
def test_each_row_is_scipys_value_for_that_row(batched, reference) -> None:
    rng = np.random.default_rng(11)
    for _ in range(60):
        rows, columns = int(rng.integers(1, 40)), int(rng.integers(2, 25))
        x, y = _random_rows(rng, rows, columns), _random_rows(rng, rows, columns)
        y[: rows // 2] = x[: rows // 2] + rng.normal(0, 0.5, (rows // 2, columns))  # related
        found, expected = batched(x, y), _by_scipy(reference, x, y)
        assert np.array_equal(np.isnan(found), np.isnan(expected))
        np.testing.assert_allclose(found, expected, rtol=1e-12, atol=1e-12)


def test_kendall_is_the_same_when_the_rows_come_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=(50, 12)), rng.integers(0, 3, (50, 12)).astype(float)
    whole = rowwise_kendall_tau_b(x, y)
    monkeypatch.setattr("judges.stats.estimates.rank_correlation._PAIR_CELLS_PER_CHUNK", 100)
    np.testing.assert_array_equal(rowwise_kendall_tau_b(x, y), whole)


def test_one_column_or_no_rows_has_no_correlation_and_shapes_must_agree() -> None:
    assert math.isnan(rowwise_spearman(np.ones((1, 1)), np.ones((1, 1)))[0])
    assert rowwise_kendall_tau_b(np.empty((0, 5)), np.empty((0, 5))).shape == (0,)
    with pytest.raises(ValueError, match="one shape"):
        rowwise_spearman(np.ones((2, 3)), np.ones((2, 4)))
