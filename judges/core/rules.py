"""Deterministic rules that live in code, not in prompts.

Pure functions only: hypothesis hammers them in `regression_tests/test_properties.py`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping

# asta-bench's label codes. "Highly Relevant" (2) exists there but its output schema
# rejects the label; here the reply schema simply never offers it.
RELEVANCE_POINTS: dict[str, int] = {
    "Perfectly Relevant": 3,
    "Somewhat Relevant": 1,
    "Not Relevant": 0,
}

# Upper bounds of levels 0, 1 and 2 on the weighted document score; above the last is level 3.
LEVEL_THRESHOLDS: tuple[float, float, float] = (0.25, 0.67, 0.99)

IDENTITY_MISMATCH_CAP = 1


class CriteriaCollision(ValueError):
    """Two required criterion names become the same name once normalised."""


def normalise_criterion_name(name: str) -> str:
    """The name as a person reads it: two names that look the same on screen are one name.

    NFKC (composed accents, full-width and compatibility forms), format characters dropped
    (Unicode category Cf: zero-width space, BOM, soft hyphen, joiners), case folded, `_`
    and runs of white space read as one space. Hyphens stay: `self-attention` and
    `self attention` are two names.
    """
    text = unicodedata.normalize("NFKC", name)
    text = "".join(char for char in text if unicodedata.category(char) != "Cf")
    # Case folding can leave a string that NFKC would change again (e.g. compatibility forms).
    text = unicodedata.normalize("NFKC", text.casefold())
    return " ".join(text.replace("_", " ").split())


def check_distinct_criteria(names: Iterable[str]) -> None:
    """Refuse criteria whose names collide after normalisation: matching would be ambiguous."""
    seen: dict[str, str] = {}
    for name in names:
        key = normalise_criterion_name(name)
        if key in seen:
            raise CriteriaCollision(
                f"criteria {seen[key]!r} and {name!r} are the same name once Unicode forms, "
                f"invisible characters, case, '_' and white space are ignored ({key!r}); rename "
                "one of them"
            )
        seen[key] = name


def match_criteria(
    required: Iterable[str], judged: Iterable[str]
) -> tuple[dict[str, str], list[str], list[str]]:
    """Pair each required name with the judged name that means it.

    Returns (required -> judged name, required names the judge did not return, judged names
    that match no required criterion). When the judge repeats a criterion the first one wins.
    """
    by_key: dict[str, str] = {}
    for name in judged:
        by_key.setdefault(normalise_criterion_name(name), name)
    required = list(required)
    required_keys = {normalise_criterion_name(name) for name in required}
    matched = {r: by_key[k] for r in required if (k := normalise_criterion_name(r)) in by_key}
    missing = [r for r in required if r not in matched]
    extra = [name for key, name in by_key.items() if key not in required_keys]
    return matched, missing, extra


def weighted_score(weights: Mapping[str, float], points: Mapping[str, int]) -> float:
    """S = min(1, sum w * r / 3), both mappings keyed by the required criterion names."""
    return min(1.0, sum(weights[name] * points[name] / 3 for name in weights))


def score_to_level(score: float) -> int:
    """Map a weighted score to asta-bench's 0-3 level."""
    for level, upper in enumerate(LEVEL_THRESHOLDS):
        if score <= upper:
            return level
    return len(LEVEL_THRESHOLDS)


def cap_factual_accuracy(factual_accuracy: int, product_identity_match: bool | None) -> int:
    """A false identity flag caps factual accuracy; `None` (pre-0.3) never does."""
    if product_identity_match is False:
        return min(factual_accuracy, IDENTITY_MISMATCH_CAP)
    return factual_accuracy
