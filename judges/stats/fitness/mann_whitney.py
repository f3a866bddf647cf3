"""Both one-sided Mann-Whitney U permutation p-values from one null distribution.

scipy's `mannwhitneyu(method=PermutationMethod(...))` permutes the pooled sample and ranks
every permutation again, once per side asked; a set's chance tests ask both sides of every
facet. The pooled sample's ranks do not change under permutation, so each draw's U is a sum
of fixed ranks. The draws are scipy's own (every split when there are at most as many as the
resamples asked, else the same generator's permutations in the same order) and the p-values
follow scipy's rule, so the figures are scipy's: tests/test_fitness.py holds them to it.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import scipy.stats

__all__ = ["mann_whitney_p"]


def mann_whitney_p(
    x: np.ndarray, y: np.ndarray, n_resamples: int, seed: int
) -> tuple[float, float]:
    """P(U >= observed) and P(U <= observed) under permutation, U being x's statistic (the
    count of pairs where x is higher, ties half): "x greater" and "x less" one-sided."""
    pooled = np.concatenate([x, y]).astype(float)
    nx, n = int(x.size), int(pooled.size)
    ranks = scipy.stats.rankdata(pooled)
    offset = nx * (nx + 1) / 2
    observed = float(ranks[:nx].sum()) - offset
    if n_resamples >= math.comb(n, nx):  # exact: every split of the pooled sample
        taken = np.array(list(itertools.combinations(range(n), nx)), dtype=np.intp)
        adjustment = 0
    else:  # the observed split counts as one draw (Phipson and Smyth, 2010)
        draws = np.tile(np.arange(n), (n_resamples, 1))
        taken = np.random.default_rng(seed).permuted(draws, axis=1)[:, :nx]
        adjustment = 1
    null = ranks[taken].sum(axis=1) - offset
    gamma = abs(np.finfo(float).eps * 100 * observed)  # scipy's tolerance for equal values
    total = null.size + adjustment
    greater = (np.count_nonzero(null >= observed - gamma) + adjustment) / total
    less = (np.count_nonzero(null <= observed + gamma) + adjustment) / total
    return min(greater, 1.0), min(less, 1.0)
