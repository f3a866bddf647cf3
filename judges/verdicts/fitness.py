"""A verdict's fitness: the chance tests of one judge, version and model, and whether
gates.toml keeps it though NOT FIT."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from judges.core.results import JudgementRow
from judges.sets.planted import Gates
from judges.stats.estimates.intervals import Estimate
from judges.stats.fitness.chance import Fitness
from judges.stats.fitness.judge import judge_fitness, pairwise_test_name
from judges.stats.reliability.calibration import SmeCalibration
from judges.stats.reliability.noise import TestRetest
from judges.verdicts.inputs import Sources

__all__ = ["accepted_not_fit", "model_fitness", "retest_from_fitness", "sme_from_fitness"]


def model_fitness(
    rows: Sequence[JudgementRow],
    version: str,
    sources: Sources,
    dimensions: Sequence[str],
    flag: str | None,
    notes: list[str],
) -> Fitness | None:
    """The chance tests, for a judge with a planted set and main-run rows."""
    facts = sources.facts(version)
    if facts is None or not any(row.run == "main" for row in rows):
        return None
    try:
        scales = sources.spec.score_scales(version) if sources.spec is not None else {}
        return judge_fitness(rows, facts, dimensions=dimensions, flag=flag, scales=scales)
    except ValueError as error:  # e.g. a label file naming an item twice
        notes.append(f"fitness not computed: {error}")
        return None


def accepted_not_fit(fitness: Fitness | None, gates: Gates | None) -> str:
    """Why gates.toml keeps this judge though NOT FIT, or "" when it does not.

    Its table's accept_not_fit; for a pairwise judge that is NOT FIT, also pairwise_accepted
    when it names every set the judge is at chance on.
    """
    if gates is None:
        return ""
    if gates.accept_not_fit:
        return gates.accept_not_fit
    at_chance = [t.name for t in fitness.failing] if fitness is not None else []
    accepted = {pairwise_test_name(c): why for c, why in gates.pairwise_accepted.items()}
    if not at_chance or any(name not in accepted for name in at_chance):
        return ""
    return "; ".join(f"{name}: {accepted[name]}" for name in at_chance)


def sme_from_fitness(sme: SmeCalibration, fitness: Fitness | None) -> SmeCalibration:
    """The SME section with the chance tests' Spearman and kappa: one statistic, one value.

    Both are computed on the same pairs, but each drew its own bootstrap, so their intervals
    differed ([-0.77, -0.00] in the fitness table, [-0.78, -0.02] in the SME section). The
    chance test's figure decides the verdict, so it is the one every section shows.
    """
    if fitness is None:
        return sme
    tests = {test.name: test for test in fitness.tests}

    def from_test(name: str) -> Estimate | None:
        """The chance test's figure, when it was computed on the section's pairs."""
        test = tests.get(f"{name}: {sme.dimension}")
        if test is None or test.n != sme.n_pairs:
            return None
        return Estimate(test.value, test.low, test.high, test.n)

    spearman = from_test("SME Spearman")
    kappa = from_test("SME kappa") if sme.kappa is not None else None
    return replace(
        sme,
        spearman=sme.spearman if spearman is None else spearman,
        kappa=sme.kappa if kappa is None else kappa,
    )


def retest_from_fitness(retest: TestRetest, fitness: Fitness | None) -> TestRetest:
    """The test-retest section with the chance tests' kappa per dimension, as for SME: a
    constant judge's kappa is undefined in both, never 0.00 in one and undefined in the
    other."""
    if fitness is None:
        return retest
    tests = {test.name: test for test in fitness.tests}
    dimensions = {}
    for dim, figures in retest.dimensions.items():
        test = tests.get(f"test-retest: {dim}")
        if test is not None and figures.kappa is not None and test.n == figures.kappa.n:
            figures = replace(figures, kappa=Estimate(test.value, test.low, test.high, test.n))
        dimensions[dim] = figures
    return replace(retest, dimensions=dimensions)
