"""Bias probes: padding, dummy answers, injected instructions, authority claims, order.

One test per probe item (recorded with --record, replayed otherwise) checks the probe
against the verdict on its unperturbed item; one test per probed item records an
independent redraw of it (the noise floor); one test per judge version gates each
probe's biased flip rate (`max_flip.<probe>` in gates.toml). Accepted probe failures
(probe_expectations.toml) are strict xfails. The tests are the generic suite's
(`judges.pytest_plugin.suite`), as in any project.
"""

from judges.pytest_plugin.suite import (  # noqa: F401
    test_probe_gates,
    test_probe_item,
    test_probe_noise_item,
)
