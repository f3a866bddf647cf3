"""Turn a judge's reply text into a validated reply model, or a typed parse error.

Real judges wrap JSON in prose or code fences, stop at `max_tokens`, send strings for
integers, scores out of range, missing fields and labels outside the allowed set. Each of
those is a `ReplyError` subclass with a message that says what was wrong; the runner retries
a bounded number of times and then writes an explicit error row.

Validation is strict (pydantic strict mode): an integer is a JSON integer, a boolean a JSON
boolean, so `"3"`, `2.0`, `1e0`, `true` are not scores and `"yes"`, `1` are not flags. A
judge that opts in to lenient parsing (`coerce = true` in its judge.toml) gets pydantic's
lax conversions instead, and every conversion is returned so that it lands on the row.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

R = TypeVar("R", bound=BaseModel)

# A verdict is a few hundred bytes, a few levels deep. Beyond these bounds a reply is hostile
# or broken: it is refused before parsing (json.loads recurses, and would raise
# RecursionError out of the runner, leaving no row).
MAX_REPLY_CHARS = 2_000_000
MAX_JSON_DEPTH = 64

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def reply_as(
    replies: Mapping[str | None, tuple[BaseModel, str]], facet: str | None, model: type[R]
) -> R:
    """A facet's parsed reply, as the class its judge's `reply_model` returned for it: what a
    verdict module's `build_verdict` reads its fields from."""
    reply = replies[facet][0]
    if not isinstance(reply, model):
        raise TypeError(f"reply of {facet!r} is a {type(reply).__name__}, not {model.__name__}")
    return reply


class ReplyError(ValueError):
    """The judge replied, but not with a usable verdict."""

    kind = "unparseable"


class NoJSON(ReplyError):
    """No JSON object anywhere in the reply."""

    kind = "no_json"


class TruncatedJSON(ReplyError):
    """The reply stopped (finish reason `length`) before its JSON object closed."""

    kind = "truncated"


class TooLarge(ReplyError):
    """The reply is longer than any verdict can be."""

    kind = "too_large"


class TooDeep(ReplyError):
    """The reply nests arrays or objects deeper than any verdict does."""

    kind = "too_deep"


class InvalidReply(ReplyError):
    """JSON was found but does not fit the reply schema."""

    kind = "invalid"

    def __init__(self, message: str, problems: list[str]) -> None:
        super().__init__(message)
        self.problems = problems


def _balanced_objects(text: str) -> list[str]:
    """Every top-level `{...}` span, honouring strings and escapes."""
    spans, depth, start, in_string, escaped = [], 0, -1, False, False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = depth > 0
        elif char == "{":
            if depth == 0:
                start = index
            depth += 1
        elif char == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : index + 1])
    return spans


def _max_depth(text: str) -> int:
    """How deep brackets nest outside strings (unbalanced closers are ignored)."""
    deepest, depth, in_string, escaped = 0, 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}" and depth > 0:
            depth -= 1
    return deepest


def check_bounds(text: str) -> None:
    """Refuse a reply too large or too deeply nested to be a verdict."""
    if len(text) > MAX_REPLY_CHARS:
        raise TooLarge(
            f"reply is {len(text):,} characters, over the {MAX_REPLY_CHARS:,} a verdict may have"
        )
    depth = _max_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise TooDeep(f"reply nests {depth} levels deep, over the {MAX_JSON_DEPTH} allowed")


def extract_json(text: str, *, truncated: bool = False) -> dict[str, Any]:
    """The first JSON object in `text`: bare, inside a code fence, or inside prose."""
    check_bounds(text)
    stripped = text.strip()
    candidates = [stripped, *(m.group(1).strip() for m in _FENCE.finditer(text))]
    candidates += _balanced_objects(text)
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    if truncated or ("{" in text and not _balanced_objects(text)):
        raise TruncatedJSON(
            f"reply ends before its JSON object closes ({len(text)} characters"
            f"{', finish reason length' if truncated else ''}); raise max_tokens or shorten the "
            "rationale"
        )
    raise NoJSON(f"no JSON object in the reply: {_preview(text)}")


def parse_reply(text: str, reply_model: type[R], *, truncated: bool = False) -> R:
    """Validate the reply text against `reply_model`, strictly."""
    data = extract_json(text, truncated=truncated)
    try:
        return reply_model.model_validate(data, strict=True)
    except ValidationError as error:
        raise _invalid(reply_model, error) from None


def parse_reply_coercing(
    text: str, reply_model: type[R], *, truncated: bool = False
) -> tuple[R, list[str]]:
    """Validate leniently; also return each conversion, e.g. `factual_accuracy: '3' -> 3`.

    The strict errors of a reply that lax validation accepts are exactly its conversions.
    """
    data = extract_json(text, truncated=truncated)
    try:
        return reply_model.model_validate(data, strict=True), []
    except ValidationError as strict_error:
        try:
            reply = reply_model.model_validate(data)
        except ValidationError as error:
            raise _invalid(reply_model, error) from None
        coerced = [
            f"{_where(e['loc'])}: {e.get('input')!r} -> {_value_at(reply, e['loc'])!r}"
            for e in strict_error.errors(include_url=False)
        ]
        return reply, coerced


def _invalid(reply_model: type[BaseModel], error: ValidationError) -> InvalidReply:
    problems = [_describe(e) for e in error.errors(include_url=False)]
    return InvalidReply(
        f"reply does not fit {reply_model.__name__}: " + "; ".join(problems), problems
    )


def _where(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "<reply>"


def _value_at(value: Any, loc: tuple[Any, ...]) -> Any:
    for part in loc:
        value = value[part] if isinstance(part, int) else getattr(value, part)
    return value


def _describe(error: Any) -> str:
    where = _where(error["loc"])
    kinds = {
        "missing": "missing field",
        "literal_error": "label outside the allowed set",
        "less_than_equal": "out of range",
        "greater_than_equal": "out of range",
        "int_parsing": "wrong type",
        "int_type": "wrong type",
        "bool_parsing": "wrong type",
        "bool_type": "wrong type",
        "string_type": "wrong type",
        "list_type": "wrong type",
        "int_from_float": "wrong type",
        "float_type": "wrong type",
        "literal_error_strict": "label outside the allowed set",
    }
    label = kinds.get(error["type"], error["type"])
    return f"{where}: {label} ({error['msg']}; got {_preview(repr(error.get('input')), 40)})"


def _preview(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
