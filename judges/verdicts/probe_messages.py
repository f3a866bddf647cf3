"""The bias probes in words: a failing probe item's message, each probe's standing against
its noise floor, the gates' names, and the section's note on what is counted.

The statistics (`judges.stats.reliability.probes`) return outcomes, rates and tests; this
module writes what the reports, the gates and a probe item's assertion say of them, and
the pytest layer quotes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from judges.core.checks import describe_verdict
from judges.core.results import JudgementRow
from judges.sets.probe_kinds import BIASES, PROBE_KINDS, bias_of
from judges.stats.estimates.floors import Gate, RateCeiling
from judges.stats.estimates.intervals import wilson
from judges.stats.reliability.probes import Outcome, ProbeEffect, Standing


def _and(names: Sequence[str]) -> str:
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


def _counted(probes: Sequence[str]) -> str:
    """What the gate counts, per kind of bias, with the report's probe kinds counted that
    way (a kind the report holds no rows of is not named)."""
    return ", ".join(
        f"{bias.counted} for {_and(kinds)}{bias.detail}"
        for bias in BIASES
        if (kinds := [k.name for k in PROBE_KINDS.values() if k.bias is bias and k.name in probes])
    )


def explained(probes: Sequence[str]) -> str:
    """The section's note: how each of the report's probes is compared and counted."""
    return (
        "Each probe item is judged at the main run's seed and compared with the verdict on its "
        f"unperturbed item. *Biased* is what the gate counts: {_counted(probes)}. The "
        "noise floor is the same count for an independent redraw of the unperturbed item (run "
        "`probe-noise`), paired per item; McNemar's exact test says whether the probe exceeds "
        "it."
    )


def against_noise(effect: ProbeEffect) -> str:
    """The "vs noise" column: the probe's gated rate against a redraw's, with McNemar's p."""
    if effect.standing is Standing.ABSOLUTE:
        return "absolute check (a non-answer must score lowest)"
    if effect.standing is Standing.NO_FLOOR or effect.test is None:
        return "no noise floor to compare (no redraw rows)"
    p = f"two-sided McNemar exact p = {effect.test.p_value:.3g}"
    if effect.standing is Standing.BELOW_NOISE:
        return f"below noise: a redraw moves the verdict more than the probe ({p})"
    if effect.standing is Standing.WITHIN_NOISE:
        return f"no effect beyond noise ({p})"
    return f"bias beyond noise: +{effect.excess:.2f} ({p})"


def _beyond_ceiling(gate: RateCeiling) -> str:
    if gate.passed is None:
        return ""
    side = "above" if gate.passed is False else "not above"
    return f"; {side} the ceiling beyond chance (one-sided binomial p = {gate.p_value:.3g})"


def flip_gates(
    effects: Sequence[ProbeEffect], thresholds: dict[str, float], alpha: float = 0.05
) -> list[Gate]:
    """`max_flip.<probe>` on each probe's biased rate, named with its rate, its standing and
    its test against the ceiling; a gate without data never passes. A probe has a handful
    of items, so the ceiling fails only when the rate is above it beyond chance (RateCeiling):
    a good judge's 3 of 8 over a 0.35 ceiling is noise, an injection-obeying judge's 3 of 3
    is not."""
    gates: list[Gate] = []
    for effect in effects:
        noise = f"; noise floor {effect.noise}" if effect.noise else ""
        what = f"{bias_of(effect.probe).rate}{noise}; {against_noise(effect)}"
        gate = RateCeiling("", effect.biased, thresholds.get(effect.probe), False, alpha)
        name = f"max_flip.{effect.probe} ({what}{_beyond_ceiling(gate)})"
        gates.append(replace(gate, name=name))
    missing = sorted(set(thresholds) - {e.probe for e in effects})
    for probe in missing:
        gates.append(RateCeiling(f"max_flip.{probe} (no probe items)", wilson(0, 0),
                                 thresholds[probe], False, alpha))  # fmt: skip
    return gates


def describe_outcome(result: Outcome, row: JudgementRow, clean: JudgementRow) -> str:
    """The assertion message of a probe item: what was probed, both verdicts, the rule."""
    where = f"{row.judge} prompt {row.prompt_version} on {row.model}"
    head = f"bias probe {result.probe} of {row.item_id} ({row.category}), {where}"
    if result.error:
        return f"{head}: {result.error}"
    kind = PROBE_KINDS.get(result.probe)
    rule = kind.shown_rule if kind is not None else bias_of(result.probe).rule
    rule = rule.format(expect=" and ".join(str(e) for e in row.expect))
    before, after = shown_verdict(clean), shown_verdict(row)
    return f"{head}: {rule}\n  unperturbed: {before}\n  probed:      {after}"


def shown_verdict(row: JudgementRow) -> str:
    """A verdict as a probe's message shows it: its fields, then each criterion's label."""
    labels = [
        f"{j.get('criterion')}={j.get('relevance')}"
        for j in (row.verdict or {}).get("judgements", ())
    ]
    return describe_verdict(row) + (f"; labels: {', '.join(labels)}" if labels else "")
