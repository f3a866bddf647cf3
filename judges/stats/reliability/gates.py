"""Judge reliability: noise floor, test-retest, panel cross-check and SME calibration.

Pure functions over result rows. A row that failed (status != "ok") is counted, never dropped:
each statistic is computed over the items where every verdict it needs exists, and the result
says how many items were left out and why. Each analysis lives in its own module (noise, panel,
calibration); this one gates their results and is the public face that names them all.
"""

from __future__ import annotations

from collections.abc import Mapping

from judges.sets.sme import SmeLabel
from judges.stats.estimates.floors import Gate
from judges.stats.estimates.pairing import Stat
from judges.stats.reliability.calibration import (
    DEFAULT_DERIVED,
    SmeCalibration,
    SmeDisagreement,
    sme_calibration,
)
from judges.stats.reliability.noise import (
    NoiseDimension,
    NoiseFloor,
    RetestDimension,
    TestRetest,
    noise_floor,
    test_retest,
)
from judges.stats.reliability.panel import Panel, PanelItem, panel_agreement

__all__ = [
    "DEFAULT_DERIVED",
    "NoiseDimension",
    "NoiseFloor",
    "Panel",
    "PanelItem",
    "Reliability",
    "RetestDimension",
    "SmeCalibration",
    "SmeDisagreement",
    "SmeLabel",
    "TestRetest",
    "evaluate_reliability",
    "gate_statistics",
    "noise_floor",
    "panel_agreement",
    "sme_calibration",
    "test_retest",
]

# --------------------------------------------------------------------------- gates


Reliability = NoiseFloor | TestRetest | Panel | SmeCalibration
_SECTIONS: dict[str, type] = {
    "noise_floor": NoiseFloor,
    "test_retest": TestRetest,
    "panel": Panel,
    "sme": SmeCalibration,
}


def gate_statistics(result: Reliability) -> dict[str, tuple[Stat, bool]]:
    """Every threshold key a result supports: key -> (statistic, at_least)."""
    out: dict[str, tuple[Stat, bool]] = {}
    if isinstance(result, NoiseFloor):
        for dim, noise in result.dimensions.items():
            out[f"min_exact_match.{dim}"] = (noise.exact_match, True)
            out[f"max_sd.{dim}"] = (noise.mean_sd, False)
        if result.flag_stability is not None:
            out["min_flag_stability"] = (result.flag_stability, True)
    elif isinstance(result, TestRetest):
        for dim, retest in result.dimensions.items():
            out[f"min_exact_match.{dim}"] = (retest.exact_match, True)
            out[f"max_mean_abs_delta.{dim}"] = (retest.mean_abs_delta, False)
            if retest.kappa is not None:
                out[f"min_kappa.{dim}"] = (retest.kappa, True)
        if result.flag_stability is not None:
            out["min_flag_stability"] = (result.flag_stability, True)
    elif isinstance(result, Panel):
        out["min_adjacent_agreement"] = (result.agreement, True)
        out["max_contested_rate"] = (result.contested_rate, False)
    else:
        out["min_spearman"] = (result.spearman, True)
        if result.kappa is not None:
            out["min_kappa"] = (result.kappa, True)
    return out


def evaluate_reliability(
    section_name: str, result: Reliability, thresholds: Mapping[str, float]
) -> list[Gate]:
    """One gate per threshold (e.g. `"min_exact_match.core_total" = 0.4`), in key order.

    Each gates on the point estimate of its statistic.
    """
    expected = _SECTIONS.get(section_name)
    if expected is None:
        raise ValueError(
            f"unknown reliability section {section_name!r}; allowed: {', '.join(_SECTIONS)}"
        )
    if not isinstance(result, expected):
        raise ValueError(
            f"section {section_name!r} takes a {expected.__name__}, got {type(result).__name__}"
        )
    allowed = gate_statistics(result)
    gates: list[Gate] = []
    for key in sorted(thresholds):
        threshold = thresholds[key]
        if key not in allowed:
            hint = ""
            if key.startswith("min_kappa") or key == "min_flag_stability":
                hint = " (kappa needs integer scores; flag stability needs a flag)"
            raise ValueError(
                f"{section_name}: unknown threshold key {key!r}{hint}; allowed: "
                f"{', '.join(sorted(allowed))}"
            )
        if isinstance(threshold, bool) or not isinstance(threshold, int | float):
            raise ValueError(
                f"{section_name}: threshold {key!r} must be a number, got {threshold!r}"
            )
        stat, at_least = allowed[key]
        gates.append(Gate(f"{section_name}.{key}", stat, float(threshold), at_least))
    return gates
