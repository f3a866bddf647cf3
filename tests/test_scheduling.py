"""Which xdist work unit a test joins: its judge and prompt version, or itself."""

from __future__ import annotations

import pytest

from judges.pytest_plugin.scheduling import case_group

GROUPS = ["product_identity-0.3.1", "product_identity-0.3", "geval-1.0"]  # longest first
PLANTED = "t/test_planted.py::test_planted_item"
GATES = "t/test_gates.py::test_detection_gates"


@pytest.mark.parametrize(
    ("nodeid", "group"),
    [
        (f"{PLANTED}[product_identity-0.3-PE-07-cousin]", "product_identity-0.3"),
        (f"{PLANTED}[product_identity-0.3.1-PE-07-cousin]", "product_identity-0.3.1"),
        (f"{GATES}[product_identity-0.3.1]", "product_identity-0.3.1"),
        (f"{GATES}[geval-1.0-local-smollm2-135m]", "geval-1.0"),
    ],
)
def test_a_judged_test_joins_its_judge_and_version(nodeid: str, group: str) -> None:
    assert case_group(nodeid, GROUPS) == group


@pytest.mark.parametrize(
    "nodeid",
    [
        f"{GATES}[geval-1.01]",
        "t/test_finale.py::test_finale_replays_offline",
        "t/test_properties.py::test_cap[0.5-true]",
    ],
)
def test_any_other_test_is_its_own_unit(nodeid: str) -> None:
    assert case_group(nodeid, GROUPS) == nodeid
