"""Simulated runs through the regression gates' own tests: false-fail rate and power.

Two recordings of one judge on the same items are two draws per item. The model:

- 0/1 scores (detection): each item's catch probability p_i ~ Beta(2, 1) (mean 2/3; two
  runs disagree on about a third of the items, as the recorded retests do); a drop of d
  thins the new run's catches to p_i (1 - d / (2/3)), a mean drop of d.
- 1-5 scores: each item's level mu_i ~ Uniform(1, 5); a judgement is mu_i plus normal noise
  (sd 0.7), rounded and clipped to 1-5; a drop of d (a share of the 4-point range) lowers
  the new run's mu_i by 4 d.

Every run of a cell goes through the decision the gate makes (the mid-p McNemar count test
of the detection gate, the exact sign-flip lattice test of the score gate), vectorised over
runs. The power check draws from the model `judges.stats.estimates.power` assumes for McNemar.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from judges.stats.estimates.intervals import Rate, wilson
from judges.stats.estimates.paired_tests import binomial_midp_batch, sign_flip_lower_batch

__all__ = [
    "BETA",
    "NOISE_SD",
    "Cell",
    "detection_gate_fails",
    "discordant_draws",
    "paired_draws",
    "score_gate_fails",
    "simulate",
]

BETA = (2.0, 1.0)  # per-item catch probability of the 0/1 model
NOISE_SD = 0.7  # per-judgement noise of the 1-5 model, in points
GATES = ("detection", "score")


@dataclass(frozen=True)
class Cell:
    """How often a gate failed simulated runs of one design."""

    gate: str  # "detection" (McNemar mid-p) or "score" (sign-flip mid-p)
    scores: str  # "0/1" or "1-5"
    n: int
    drop: float  # the true drop (0: no change, so every failure is a false fail)
    fails: Rate

    def row(self) -> str:
        r = self.fails
        return (
            f"| {self.gate} | {self.scores} | {self.n} | {self.drop:.2f} | "
            f"{r.rate:.3f} [{r.low:.3f}, {r.high:.3f}] | {r.n} |"
        )


def paired_draws(
    scores: str, n: int, drop: float, reps: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(reps, n) baseline and new-run scores of the model above."""
    if scores == "0/1":
        p = rng.beta(*BETA, size=(reps, n))
        mean = BETA[0] / (BETA[0] + BETA[1])
        base = rng.random((reps, n)) < p
        new = rng.random((reps, n)) < p * (1.0 - drop / mean)
        return base.astype(np.int64), new.astype(np.int64)
    if scores == "1-5":
        mu = rng.uniform(1.0, 5.0, size=(reps, n))

        def judged(level: np.ndarray) -> np.ndarray:
            noisy = level + rng.normal(0.0, NOISE_SD, size=level.shape)
            return np.clip(np.rint(noisy), 1, 5).astype(np.int64)

        return judged(mu), judged(mu - 4.0 * drop)
    raise ValueError(f"scores must be '0/1' or '1-5', got {scores!r}")


def discordant_draws(
    n: int, discordance: float, drop: float, reps: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """0/1 pairs of the power model: flips both ways at discordance / 2, plus `drop` more
    caught -> missed."""
    u = rng.random((reps, n))
    worse = u < discordance / 2 + drop
    better = (u >= discordance / 2 + drop) & (u < discordance + drop)
    base = worse.astype(np.int64)
    new = better.astype(np.int64)
    return base, new


def score_gate_fails(base: np.ndarray, new: np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """The score gate on integer scores (higher is better), one decision per run (row)."""
    below, equal = sign_flip_lower_batch(new - base)
    return (below + equal / 2.0) < alpha


def detection_gate_fails(base: np.ndarray, new: np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """The detection gate on 0/1 outcomes (1 = caught), one decision per run (row)."""
    worse = ((base == 1) & (new == 0)).sum(axis=1)
    better = ((base == 0) & (new == 1)).sum(axis=1)
    return binomial_midp_batch(worse, worse + better) < alpha


def simulate(
    scores: str,
    sizes: Sequence[int],
    drops: Sequence[float],
    reps: int = 1500,
    seed: int = 0,
    alpha: float = 0.05,
) -> list[Cell]:
    """Every gate that applies to `scores`, at each n and drop; Wilson intervals."""
    rng = np.random.default_rng(seed)
    cells: list[Cell] = []
    for n in sizes:
        for drop in drops:
            base, new = paired_draws(scores, n, drop, reps, rng)
            decisions = {"score": score_gate_fails(base, new, alpha)}
            if scores == "0/1":
                decisions["detection"] = detection_gate_fails(base, new, alpha)
            for gate in GATES:
                if gate in decisions:
                    fails = decisions[gate]
                    cells.append(Cell(gate, scores, n, drop, wilson(int(fails.sum()), reps)))
    return cells
