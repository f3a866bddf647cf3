"""Bias probes: padding, dummy answers, injected instructions, authority claims, order.

One test per probe item (recorded with --record, replayed otherwise) checks the probe
against the verdict on its unperturbed item; one test per probed item records an
independent redraw of it (the noise floor); one test per judge version gates each
probe's biased flip rate (`max_flip.<probe>` in gates.toml). Accepted probe failures
(probe_expectations.toml) are strict xfails.
"""

from judges.core.checks import assert_accounted
from judges.stats import probes as probe_stats


def test_probe_item(probe_case, judge_runner, judges_session):
    row = judge_runner.judge_probe(probe_case)
    clean = judge_runner.replay_clean(probe_case)
    spec = judges_session.catalog[probe_case.case.judge]
    fields = [*spec.config.dimensions, *([spec.config.flag] if spec.config.flag else [])]
    score = judges_session.probe_sets[probe_case.case.judge].score
    probe_stats.assert_unbiased(probe_stats.outcome(probe_case.probe, row, clean, fields, score),
                                row, clean)  # fmt: skip


def test_probe_noise_item(probe_noise_case, judge_runner):
    assert_accounted([judge_runner.judge_probe_noise(probe_noise_case)], 1)


def test_probe_gates(probe_set, judge_runner, judges_session):
    judge_runner.check_probe_gates(probe_set, judge_runner.probe_effects(probe_set))
