"""Checks on the input files that run before the first judge call.

Each problem here would otherwise show late (a TypeError after a paid call), silently (a
typo that becomes a judge miss, an accepted miss that never applies, a prompt that never
shows the judge the answer) or green (a gate passed on nothing). Each message names the
file, the line when there is one, what is wrong and what would be right.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from judges.calls.backends import BackendError, ModelRef
from judges.core.results import Expectation
from judges.core.spec import JudgeSpec, SpecError

# Anything in double braces, however spelled: `{{ Answer }}` is a placeholder gone wrong.
_ANY_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}")
_ORDERING = ("<", "<=", ">", ">=")


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# --------------------------------------------------------------------------- expectations


def _field_types(model: type[BaseModel]) -> dict[str, tuple[Any, Any]]:
    """Each verdict field (computed ones too) -> (its type, its type with its bounds)."""
    types: dict[str, tuple[Any, Any]] = {
        name: (
            info.annotation,
            Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation,
        )
        for name, info in model.model_fields.items()
    }
    for name, computed in model.model_computed_fields.items():
        types[name] = (computed.return_type, computed.return_type)
    return types


def _fits(annotation: Any, value: Any) -> str | None:
    try:
        TypeAdapter(annotation).validate_python(value, strict=True)
    except ValidationError as error:
        return error.errors(include_url=False)[0]["msg"]
    return None


def expectation_problem(expectation: Expectation, verdict_model: type[BaseModel]) -> str | None:
    """What is wrong with one `expect` entry for this verdict model, with the fix; or None."""
    types = _field_types(verdict_model)
    head = expectation.field.split(".")[0]
    if head not in types:
        return (
            f"field {expectation.field!r} is not a field of {verdict_model.__name__}; "
            f"valid fields: {', '.join(sorted(types))}"
        )
    (plain, annotation), value = types[head], expectation.value
    if "." in expectation.field:
        return None  # inside a mapping field: its keys are not typed
    shown = f"{expectation.field} {expectation.op} {value!r}"
    if expectation.op == "in":
        if not isinstance(value, list) or not value:
            return f"{shown}: 'in' takes a non-empty list of values, e.g. [0, 1]"
        problems = [(v, _fits(annotation, v)) for v in value]
        bad = [f"{v!r} ({why})" for v, why in problems if why]
        return f"{shown}: {'; '.join(bad)}" if bad else None
    if expectation.op in _ORDERING:
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        if not numeric or (_fits(plain, 0) and _fits(plain, 0.0)):
            return (
                f"{shown}: '{expectation.op}' compares numbers; give a number for a numeric field"
            )
        return None
    why = _fits(annotation, value)
    return f"{shown}: never holds, the value does not fit the field ({why})" if why else None


# --------------------------------------------------------------------------- prompts


def check_prompt_placeholders(spec: JudgeSpec, fields: Iterable[str]) -> None:
    """Every placeholder is one of the item's fields, and every field is shown to the judge."""
    fields = sorted(fields)
    for version, prompt in spec.prompts.items():
        for facet, template in prompt.templates.items():
            path = prompt.paths[facet]
            for match in _ANY_PLACEHOLDER.finditer(template):
                name = match.group(1).strip()
                if name not in fields:
                    raise SpecError(
                        f"{path}:{_line_of(template, match.start())}: placeholder "
                        f"{match.group(0)!r} is not an input of {spec.name!r}; placeholders are "
                        + ", ".join(f"{{{{{f}}}}}" for f in fields)
                    )
            used = {m.group(1).strip() for m in _ANY_PLACEHOLDER.finditer(template)}
            unused = [f for f in fields if f not in used]
            if unused:
                raise SpecError(
                    f"{path}: prompt {version} never shows the judge "
                    + ", ".join(f"{{{{{f}}}}}" for f in unused)
                    + "; add each where the judge should read it"
                )


# --------------------------------------------------------------------------- model tables


def _table_line(text: str, model: str, version: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if model in line and version in line and line.lstrip().startswith("["):
            return number
    for number, line in enumerate(text.splitlines(), start=1):
        if model in line:
            return number
    return None


def check_table_keys(
    path: Path, keys: Iterable[tuple[str, str]], spec: JudgeSpec, known_models: Iterable[str]
) -> None:
    """Each `["model"."version"]` table names a judge model and a prompt version that exist."""
    known = sorted(set(known_models))
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    for model, version in keys:
        line = _table_line(text, model, version)
        where = f"{path}:{line}" if line else str(path)
        try:
            ModelRef.parse(model)
        except BackendError as error:
            raise SpecError(f'{where}: ["{model}"."{version}"]: {error}') from None
        if model not in known:
            raise SpecError(
                f'{where}: ["{model}"."{version}"]: no judge model {model!r} is selected or '
                f"recorded for {spec.name!r}; known models: {', '.join(known)} (or pass "
                f"--judge-model {model})"
            )
        if version not in spec.prompts and not spec.retired(version):
            raise SpecError(
                f'{where}: ["{model}"."{version}"]: {spec.name!r} has no prompt version '
                f"{version!r}; versions: {', '.join(spec.versions)}"
            )


# --------------------------------------------------------------------------- cassettes


# The first `"model":"..."` of a cassette is its first request's model (vcrpy stores the
# request before the response, and the SDKs write the model near the body's start).
_RECORDED_MODEL = re.compile(rb'"model":\s*"([^"\\]+)"')


def cassette_problem(path: Path, model: str | None = None) -> str | None:
    """A cassette that cannot be one, or was recorded for another model than the folder it
    is in, told from its first bytes (no YAML parse: cheap)."""
    with path.open("rb") as stream:
        head = stream.read(4096)
    if not head.strip():
        return (
            f"cassette {path} is empty ({len(head)} bytes): the recording never finished; "
            "delete it and re-record"
        )
    first = next(
        (line.strip() for line in head.splitlines() if line.strip() and not line.startswith(b"#")),
        b"",
    )
    if first.startswith((b"-", b"[")):
        return (
            f"cassette {path} is a YAML list, not a vcrpy cassette (a mapping with "
            "'interactions'); restore it from git or re-record"
        )
    found = _RECORDED_MODEL.search(head)
    if model is not None and found and found.group(1).decode("utf-8", "replace") != model:
        return (
            f"cassette {path} was recorded for model {found.group(1).decode('utf-8', 'replace')}"
            f", not {model}: it is in the folder of {model} by mistake; move it to its "
            "model's folder, or re-record it with --record"
        )
    return None
