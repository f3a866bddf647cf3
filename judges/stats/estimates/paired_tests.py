"""One-sided paired tests of "the new run is worse", calibrated at small n.

Under no change the baseline and the new judgement of an item are two draws of the same
judge, so the pair is exchangeable: flipping the sign of an item's difference is equally
likely. The sign-flip (paired permutation) distribution of the summed difference is exact
at any n; on 0/1 values it is McNemar's exact test. Its p-value is reported as a mid-p
(P(T < t) + P(T = t) / 2): the plain exact p of a discrete statistic fails far fewer than
alpha of unchanged runs at n = 20 (1.7% simulated), the mid-p stays near alpha (Fagerland,
Lydersen and Laake, BMC Med Res Methodol 2013, for McNemar).

Integer (or half, quarter ... integer) differences get the exact distribution by FFT over
the lattice; other values a seeded Monte Carlo of sign flips.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.stats

__all__ = [
    "SignFlip",
    "binomial_midp",
    "binomial_midp_batch",
    "lattice_unit",
    "sign_flip_lower",
    "sign_flip_lower_batch",
    "smallest_midp",
]

# Units tried to put differences on an integer lattice (scores, half points, quarters ...).
_UNITS = (1.0, 0.5, 0.25, 0.2, 0.1, 0.05, 0.01)
_MAX_LATTICE = 200_000  # lattice points beyond which Monte Carlo is cheaper
_MC_RESAMPLES = 20_000


@dataclass(frozen=True)
class SignFlip:
    """Lower tail of the summed paired difference under sign flips."""

    below: float  # P(T < t)
    equal: float  # P(T = t)
    exact: bool  # False: Monte Carlo estimate

    @property
    def midp(self) -> float:
        return min(max(self.below + self.equal / 2.0, 0.0), 1.0)

    @property
    def p_value(self) -> float:
        """The conventional exact p, P(T <= t)."""
        return min(max(self.below + self.equal, 0.0), 1.0)


def smallest_midp(changed: int) -> float:
    """The smallest one-sided mid-p a sign-flip (or McNemar) test can give on `changed`
    non-zero paired differences: all of them the bad way, probability 2^-changed, half of it
    counted; 1.0 where nothing changed (no evidence, as the tests themselves say)."""
    if changed < 0:
        raise ValueError(f"need changed >= 0, got {changed}")
    return 1.0 if changed == 0 else 0.5 ** (changed + 1)


def binomial_midp(worse: int, discordant: int) -> float:
    """Mid-p of McNemar's one-sided test: P(X > worse) + P(X = worse) / 2, X ~ Bin(D, 1/2).

    No discordant pair is no evidence of change: 1.0.
    """
    if not 0 <= worse <= discordant:
        raise ValueError(f"need 0 <= worse <= discordant, got {worse}, {discordant}")
    return float(binomial_midp_batch(np.array([worse]), np.array([discordant]))[0])


def binomial_midp_batch(worse: np.ndarray, discordant: np.ndarray) -> np.ndarray:
    """`binomial_midp` of many (worse, discordant) counts at once."""
    above = scipy.stats.binom.sf(worse, discordant, 0.5)
    at = scipy.stats.binom.pmf(worse, discordant, 0.5)
    return np.where(discordant == 0, 1.0, np.clip(above + at / 2.0, 0.0, 1.0))


def lattice_unit(diffs: np.ndarray) -> float | None:
    """The largest unit of _UNITS that makes every difference an integer, if any."""
    for unit in _UNITS:
        scaled = diffs / unit
        if np.allclose(scaled, np.rint(scaled), rtol=0.0, atol=1e-9):
            return unit
    return None


def sign_flip_lower_batch(steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact P(T < t) and P(T = t) for each row of an (R, n) array of integer differences.

    T = sum of s_i * |d_i| with independent fair signs s_i; t is the observed sum. The
    distribution is the product of the items' generating functions (z^-k + z^k) / 2,
    evaluated at roots of unity and brought back by one inverse FFT per row.
    """
    arr = np.asarray(steps)
    if arr.ndim != 2:
        raise ValueError(f"steps must be two-dimensional, got shape {arr.shape}")
    ints = np.rint(arr).astype(np.int64)
    mags = np.abs(ints)
    span = int(mags.sum(axis=1).max(initial=0))
    size = 2 * span + 1
    # Counts of items per magnitude: the generating function needs only those.
    kmax = int(mags.max(initial=0))
    counts = np.stack([(mags == k).sum(axis=1) for k in range(1, kmax + 1)], axis=1)
    omega = np.exp(-2j * np.pi * np.arange(size) / size)
    spectrum = np.ones((arr.shape[0], size), dtype=complex)
    for k in range(1, kmax + 1):
        factor = (omega ** (-k) + omega**k) / 2.0  # one item of magnitude k
        spectrum *= factor[None, :] ** counts[:, k - 1][:, None]
    pmf = np.clip(np.fft.ifft(spectrum, axis=1).real, 0.0, None)
    # Index j holds T = j (mod size); T ranges over [-span, span].
    pmf = np.roll(pmf, span, axis=1)  # now index j holds T = j - span
    observed = ints.sum(axis=1) + span
    cumulative = np.cumsum(pmf, axis=1)
    rows = np.arange(arr.shape[0])
    equal = pmf[rows, observed]
    below = cumulative[rows, observed] - equal
    return below, equal


def sign_flip_lower(
    diffs: Sequence[float] | np.ndarray, *, n_resamples: int = _MC_RESAMPLES, seed: int = 0
) -> SignFlip:
    """How often sign flips give a summed difference below the observed one (lower tail)."""
    d = np.asarray(diffs, dtype=float)
    if d.ndim != 1:
        raise ValueError(f"differences must be one-dimensional, got shape {d.shape}")
    if np.isnan(d).any():
        raise ValueError("differences contain nan; drop failed judgements explicitly first")
    d = d[d != 0]  # a zero difference is the same under either sign
    if d.size == 0:
        return SignFlip(0.0, 1.0, True)
    unit = lattice_unit(d)
    if unit is not None and 2 * np.abs(d / unit).sum() + 1 <= _MAX_LATTICE:
        below_rows, equal_rows = sign_flip_lower_batch((d / unit)[None, :])
        return SignFlip(float(below_rows[0]), float(equal_rows[0]), True)
    rng = np.random.default_rng(seed)
    observed = d.sum()
    below = equal = 0
    # Blocks bound memory at large n; the signs of one block form one (block, n) matrix.
    for start in range(0, n_resamples, 2000):
        block = min(2000, n_resamples - start)
        signs = rng.integers(0, 2, size=(block, d.size), dtype=np.int8) * 2 - 1
        sums = signs @ d
        tied = np.isclose(sums, observed, rtol=0.0, atol=1e-9 * max(1.0, abs(observed)))
        equal += int(tied.sum())
        below += int((~tied & (sums < observed)).sum())
    return SignFlip(below / n_resamples, equal / n_resamples, False)
