"""Assertion messages that say what was expected, what the judge said and why."""

from __future__ import annotations

import json

from judges.core.results import JudgementRow

_SHOWN = (
    "factual_accuracy", "factual_accuracy_as_judged", "completeness", "causal_reasoning",
    "core_total", "product_identity_match", "reference_product", "answer_product",
    "faithfulness", "coverage", "coherence", "fluency", "score", "level",
    "winner_original", "winner_swapped", "missing", "extra",
)  # fmt: skip


_NOT_SHOWN = frozenset({"rationale", "rationales", "raw", "judge_prompt_version"})


def describe_verdict(row: JudgementRow) -> str:
    verdict = row.verdict or {}
    shown = {key: verdict[key] for key in _SHOWN if verdict.get(key) is not None}
    return ", ".join(
        f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in shown.items()
    )


def describe_returned(row: JudgementRow) -> str:
    """What a failure message shows: the built-in judges' fields, or, for a verdict with
    none of them (a project's own judge), the fields its items expect on, then its numbers,
    flags and short strings."""
    shown = describe_verdict(row)
    if shown:
        return shown
    verdict = row.verdict or {}
    keys = [e.field.split(".")[0] for e in row.expect]
    keys += [k for k, v in verdict.items() if isinstance(v, bool | int | float) or _short(v)]
    values = {
        key: verdict[key]
        for key in dict.fromkeys(keys)
        if key not in _NOT_SHOWN and verdict.get(key) is not None
    }
    shown = ", ".join(
        f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in values.items()
    )
    # A field the item expects on that the verdict lacks: a callable that dropped the item.
    absent = [e.field for e in row.expect if not _present(verdict, e.field)]
    if absent:
        lacking = f"no {', '.join(dict.fromkeys(absent))} in the verdict"
        shown = f"{shown}; {lacking}" if shown else f"{lacking} {_brief(verdict)}"
    return shown


def _present(verdict: dict[str, object], path: str) -> bool:
    found: object = verdict
    for part in path.split("."):
        if not isinstance(found, dict) or part not in found:
            return False
        found = found[part]
    return True


def _brief(verdict: dict[str, object]) -> str:
    text = json.dumps(verdict, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def _short(value: object) -> bool:
    return isinstance(value, str) and len(value) <= 80


def failure_message(row: JudgementRow) -> str:
    expected = " and ".join(str(e) for e in row.expect)
    control = ", control" if row.control and row.category != "control" else ""
    head = f"{row.item_id} ({row.category}{control})"
    where = f"{row.judge} prompt {row.prompt_version} on {row.model}"
    if row.status != "ok":
        tried = "; ".join(
            f"attempt {a.attempt + 1}{f' {a.facet}' if a.facet else ''}: {a.error_kind}"
            for a in row.attempts
            if a.error
        )
        return f"{head}: the judgement failed ({row.status}) under {where}: {row.error}" + (
            f"\n  attempts: {tried}" if tried else ""
        )
    verdict = row.verdict or {}
    rationale = verdict.get("rationale") or verdict.get("rationales") or ""
    return (
        f"{head}: expected {expected}; {where} returned {describe_returned(row)}\n"
        f"  rationale: {json.dumps(rationale, ensure_ascii=False)[:400]}"
    )


def assert_expected(row: JudgementRow) -> None:
    """Fail with a readable message unless the verdict meets every expectation."""
    __tracebackhide__ = True
    if row.status != "ok" or not row.met:
        raise AssertionError(failure_message(row))


def assert_accounted(rows: list[JudgementRow], expected: int) -> None:
    """Every repeat left a row: a verdict, or an error that says what failed.

    Failed judgements of a reliability run are data (its error rate is gated); what must
    never happen is a repeat that left nothing, or an error row with no explanation.
    """
    __tracebackhide__ = True
    if len(rows) != expected:
        raise AssertionError(f"expected {expected} result rows, got {len(rows)}")
    unexplained = [row for row in rows if row.status != "ok" and not row.error]
    if unexplained or any(row.status == "ok" and row.verdict is None for row in rows):
        raise AssertionError("a result row has neither a verdict nor an error message")
