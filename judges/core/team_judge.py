"""A team's own judge, called as it is: a function, sync or async, or an object with
`__call__`, named in `judge.toml` as `callable = "pkg.module:function"`.

The harness makes none of its requests. It calls the callable with an item's inputs, as
keyword arguments (each parameter takes the input of its own name, or the one `arguments`
maps it to), inside the item's cassette: every HTTP request the team's client sends is
recorded there on `--record` and answered from it on replay (`judges.calls.cassettes`), so
an offline run executes the team's code unchanged. What the callable returns is the
verdict: a pydantic model or a dataclass (its fields), a mapping, or a number, a bool or a
string (the verdict `{"value": ...}`); planted expectations, dimensions and labels read it
by field name or dotted path.

Its prompt version is the team's own: `version` in `judge.toml`, or the callable module's
`JUDGE_PROMPT_VERSION` (`version_attribute`). A request that changed under an unchanged
version misses its cassette, and the miss names what changed (`judges.calls.cassettes`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import importlib
import inspect
import json
import threading
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from judges.calls.backends import is_timeout, is_transient, replay_keys

T = TypeVar("T")
_ANY_KEYWORD = (inspect.Parameter.VAR_KEYWORD,)
_POSITIONAL_ONLY = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL)


class TeamJudgeError(ValueError):
    """The callable cannot be found, read or called with an item's inputs."""


@dataclass(frozen=True)
class Arguments:
    """An item's inputs bound to the callable's parameters (what `parse_inputs` returns for a
    callable judge): `values` as the item gives them (JSON: they identify the judgement),
    `passed` as the callable takes them (converted to its annotated types)."""

    values: dict[str, Any]
    passed: dict[str, Any] = dataclasses.field(default_factory=dict)

    def prompt_fields(self) -> dict[str, str]:
        """The arguments as text: a callable judge has no prompt file to fill."""
        return {name: str(value) for name, value in self.values.items()}


@dataclass(frozen=True)
class TeamJudge:
    """The callable a `judge.toml` names, its version and how items bind to it."""

    ref: str
    function: Callable[..., Any]
    version: str
    arguments: Mapping[str, str]

    @classmethod
    def load(
        cls,
        ref: str,
        version: str | None,
        version_attribute: str,
        arguments: Mapping[str, str],
        need_version: bool = True,
    ) -> TeamJudge:
        """The callable `ref` names, checked; without `need_version` (a scaffold), a module
        that declares no version gives the version "" instead of an error."""
        module_name, _, attribute = ref.partition(":")
        if not module_name or not attribute:
            raise TeamJudgeError(
                f"callable {ref!r} is not 'pkg.module:function' (a module, a colon, a name)"
            )
        try:
            # A replay sets no key, and some modules build their client at import.
            with replay_keys():
                module = importlib.import_module(module_name)
        except Exception as error:  # any import-time failure of the team's module
            raise TeamJudgeError(
                f"callable {ref!r}: module {module_name!r} cannot be imported "
                f"({type(error).__name__}: {error}); is its folder on `pythonpath`?"
            ) from None
        found: Any = module
        for part in attribute.split("."):
            if not hasattr(found, part):
                raise TeamJudgeError(f"callable {ref!r}: {module_name} has no {attribute!r}")
            found = getattr(found, part)
        if not callable(found):
            raise TeamJudgeError(f"callable {ref!r} is a {type(found).__name__}, not callable")
        if version is None:
            declared = getattr(module, version_attribute, None)
            if declared is None and not need_version:
                declared = ""
            elif not isinstance(declared, str) or not _is_version(declared):
                raise TeamJudgeError(
                    f'callable {ref!r}: no prompt version; set `version = "1.0"` in judge.toml '
                    f'or {version_attribute} = "1.0" in {module_name} (found {declared!r})'
                )
            version = declared
        judge = cls(ref, found, version, dict(arguments))
        judge._check_arguments()
        return judge

    @property
    def signature(self) -> inspect.Signature:
        return inspect.signature(self.function)

    def _check_arguments(self) -> None:
        parameters = self.signature.parameters
        positional = [p.name for p in parameters.values() if p.kind in _POSITIONAL_ONLY]
        if positional:
            raise TeamJudgeError(
                f"callable {self.ref!r} takes {positional} by position only; the harness "
                "passes an item's inputs by name: wrap it in a function with named parameters"
            )
        takes_any = any(p.kind in _ANY_KEYWORD for p in parameters.values())
        unknown = sorted(name for name in self.arguments if name not in parameters)
        if unknown and not takes_any:
            raise TeamJudgeError(
                f"`arguments` names {unknown}, which are not parameters of {self.ref!r} "
                f"({', '.join(parameters)})"
            )

    def bind(self, inputs: Mapping[str, Any]) -> Arguments:
        """Each parameter its input; an input no parameter takes (unless the callable takes
        `**kwargs`), or a required parameter no input gives, is an error: nothing is
        dropped or guessed."""
        parameters = self.signature.parameters
        named = {n: p for n, p in parameters.items() if p.kind not in _ANY_KEYWORD}
        source = {name: self.arguments.get(name, name) for name in named}
        source |= dict(self.arguments)
        values = {name: inputs[key] for name, key in source.items() if key in inputs}
        missing = [
            f"{name} (input {source[name]!r})"
            for name, parameter in named.items()
            if parameter.default is inspect.Parameter.empty and name not in values
        ]
        if missing:
            raise TeamJudgeError(
                f"{self.ref} needs {', '.join(missing)}; the item gives {sorted(inputs)}: "
                "add the input, or map the parameter in judge.toml [arguments]"
            )
        unused = sorted(set(inputs) - set(source.values()))
        if unused and len(named) == len(parameters):
            raise TeamJudgeError(
                f"the inputs {unused} go to no parameter of {self.ref} "
                f"({', '.join(parameters)}): remove them, or map them in judge.toml [arguments]"
            )
        values |= {name: inputs[name] for name in unused}
        return Arguments(values, self._converted(values))

    def _converted(self, values: dict[str, Any]) -> dict[str, Any]:
        """Each value whose parameter is annotated with a pydantic model or a dataclass (or a
        container of them: `Sequence[Document]`) validated into that type by pydantic, as
        the callable expects it; a value that does not fit names the parameter."""
        hints = self._parameter_hints()
        passed = dict(values)
        for name, value in values.items():
            hint = hints.get(name)
            if hint is None or not _holds_a_model(hint):
                continue
            try:
                passed[name] = TypeAdapter(hint).validate_python(value)
            except ValidationError as error:
                shown = "; ".join(
                    f"{'.'.join(map(str, e['loc'])) or 'the value'}: {e['msg']}"
                    for e in error.errors()[:3]
                )
                raise TeamJudgeError(
                    f"the input for parameter {name!r} of {self.ref} is not a "
                    f"{_type_name(hint)} ({shown}): give it in that shape"
                ) from None
        return passed

    def _parameter_hints(self) -> dict[str, Any]:
        """The callable's resolved annotations, its return's included (none when they
        cannot be resolved)."""
        target = self.function
        if not inspect.isfunction(target) and not inspect.ismethod(target):
            target = type(target).__call__
        try:
            return typing.get_type_hints(target)
        except Exception:  # annotations the harness cannot resolve: passed as given
            return {}

    @property
    def verdict_model(self) -> type[BaseModel] | None:
        """The pydantic model the callable's return annotation names, if any: planted
        expectations are then checked against its fields before any call."""
        returned = self._parameter_hints().get("return")
        if isinstance(returned, type) and issubclass(returned, BaseModel):
            return returned
        return None

    def call(self, arguments: Arguments) -> Any:
        """Call it once; an async callable (or one returning an awaitable) is run to its end."""
        returned = self.function(**(arguments.passed or arguments.values))
        if inspect.isawaitable(returned):
            return asyncio.run(_awaited(returned))
        return returned


class CallableTimeout(Exception):
    """A callable gave no verdict within its time; `thread` still runs it, abandoned."""

    def __init__(self, seconds: float, thread: threading.Thread) -> None:
        super().__init__(f"no verdict within {seconds:g} s")
        self.seconds, self.thread = seconds, thread


def within(work: Callable[[], T], seconds: float, name: str) -> T:
    """`work()` run in a thread of its own and waited for at most `seconds`; past that,
    `CallableTimeout` (Python cannot stop a thread: it runs on, a daemon, until it ends).
    An exception of `work` is raised here."""
    done: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(work())
        except BaseException as error:  # handed to the waiting thread, whatever it is
            failed.append(error)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise CallableTimeout(seconds, thread)
    if failed:
        raise failed[0]
    return done[0]


def _holds_a_model(hint: Any) -> bool:
    """Whether an annotation is, or holds, a pydantic model or a dataclass: a JSON input must
    be converted before the callable can read its attributes."""
    if isinstance(hint, type) and (issubclass(hint, BaseModel) or dataclasses.is_dataclass(hint)):
        return True
    return any(_holds_a_model(arg) for arg in typing.get_args(hint))


def _type_name(hint: Any) -> str:
    return hint.__name__ if isinstance(hint, type) else str(hint).replace("typing.", "")


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def _is_version(text: str) -> bool:
    parts = text.split(".")
    return all(part.isdigit() for part in parts) and len(text) <= 32


def as_verdict(returned: Any) -> dict[str, Any]:
    """What the callable returned, as a verdict: a JSON object of its fields."""
    if isinstance(returned, BaseModel):
        found: Any = returned.model_dump(mode="json")
    elif dataclasses.is_dataclass(returned) and not isinstance(returned, type):
        found = dataclasses.asdict(returned)
    elif isinstance(returned, Mapping):
        found = dict(returned)
    elif isinstance(returned, bool | int | float | str):
        found = {"value": returned}
    else:
        raise TeamJudgeError(
            f"returned a {type(returned).__name__}; a judge callable returns a pydantic model, "
            "a dataclass, a dict, a number, a bool or a string"
        )
    try:
        text = json.dumps(found, allow_nan=False, default=_refuse)
    except ValueError as error:
        raise TeamJudgeError(f"returned a verdict that is not JSON ({error})") from None
    verdict: dict[str, Any] = json.loads(text)
    return verdict


def _refuse(value: Any) -> Any:
    raise ValueError(f"{type(value).__name__} {value!r} is not a JSON value")


def judgement_hash(ref: str, version: str, arguments: Arguments) -> str:
    """What identifies one judgement of a callable judge (its rows' `prompt_hash`): the code
    it runs, its version and the item's arguments."""
    shown = json.dumps(arguments.values, sort_keys=True, default=str)
    return hashlib.sha256(f"{ref}\0{version}\0{shown}".encode()).hexdigest()[:16]


def failure_status(error: BaseException) -> Literal["transport", "error"]:
    """The row status of an exception from the team's code: the network's (`transport`)
    or the code's own (`error`)."""
    return "transport" if is_transient(error) or is_timeout(error) else "error"
