"""Judges as data: a `judge.toml`, versioned prompt files and a verdict module, or a
`judge.toml` naming the team's own judge callable (`judges.core.team_judge`).

Layout of one judge (nothing else in the harness names it):

    judges/prompts/<judge>/judge.toml          name, verdict module, facets, sampling
    judges/prompts/<judge>/<version>.md        one call per judgement
    judges/prompts/<judge>/<version>/<facet>.md  one call per facet (e.g. per dimension)

A judge given as a callable (`callable = "pkg.module:function"`) has its `judge.toml` only:
its prompt is the team's code, and its one version the team's own (`version`, or the
callable module's `JUDGE_PROMPT_VERSION`).

The verdict module provides `Inputs` (a pydantic model with `prompt_fields()`),
`reply_model(prompt_version, facet)` and `build_verdict(replies, inputs, prompt_version)`;
optionally `request_schema(prompt_version, facet, inputs)` to narrow the JSON schema sent
with one request (e.g. to the item's own criterion names); it also receives `shape=` when
`judge.toml` declares the version's reply shape in `[reply_shapes]`.
"""

from __future__ import annotations

import hashlib
import importlib
import re
import tomllib
import typing
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, Protocol

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from judges.calls.backends import ModelRef
from judges.core.label_paths import check_path
from judges.core.team_judge import TeamJudge, TeamJudgeError

PROMPTS_ROOT = Path(__file__).parent.parent / "prompts"
# A judge's name and a prompt version name cassette and report folders (and test ids): each
# is bounded, so no path the harness builds from them outgrows what a file system holds.
MAX_JUDGE_NAME = 64
MAX_VERSION = 32
PLACEHOLDER = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")


class SpecError(ValueError):
    """A judge specification or prompt file is unusable."""


class Sampling(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int = Field(default=512, gt=0)
    seed: int | None = None
    # One seed per item (derived from `seed` and the item id) instead of one per run. With a
    # single seed, every item of a run draws the same random numbers, so a run's verdicts
    # lean together (one seed gets mostly 3s, another mostly 0s) and are not the
    # independent draws the Wilson intervals and McNemar tests assume.
    seed_per_item: bool = False


class JudgeConfig(BaseModel):
    """The contents of `judge.toml`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=MAX_JUDGE_NAME)
    description: str = ""
    module: str | None = None
    # The team's judge as it is, "pkg.module:function" (judges.core.team_judge); instead of
    # `module` and prompt files.
    callable_ref: str | None = Field(default=None, alias="callable")
    # A callable judge's prompt version; unset: its module's `version_attribute`.
    version: str | None = Field(default=None, pattern=r"^\d+(\.\d+)*$", max_length=MAX_VERSION)
    version_attribute: str = "JUDGE_PROMPT_VERSION"
    # A callable judge's parameters: parameter name -> the item input it takes (default: the
    # input of the parameter's own name).
    arguments: dict[str, str] = {}
    # What the reply-fixture properties vary (judges.pytest_plugin.reply_fixtures).
    reply_properties: tuple[
        Literal["case", "separator", "whitespace", "unicode", "key_order", "extra_key"], ...
    ] = ("case", "separator", "whitespace", "unicode", "key_order", "extra_key")
    baseline_model: str
    system: str = "You are a meticulous evaluation judge. Reply with one JSON object only."
    facets: tuple[str, ...] = ()
    # Verdict fields that statistics compare across repeats, runs and judges.
    dimensions: tuple[str, ...] = ()
    flag: str | None = None
    max_attempts: int = Field(default=3, ge=1, le=10)
    # Lenient reply parsing ("3" -> 3, "yes" -> true); each conversion is kept on the row.
    coerce: bool = False
    sampling: Sampling = Sampling()
    # Prompt version -> the reply shape its prompt asks for; the verdict module's
    # `request_schema(..., shape=)` builds the schema of that shape.
    reply_shapes: dict[str, str] = {}
    # Categorical verdict fields whose stability is reported per value (retest, noise):
    # name -> verdict path, e.g. `level` or `judgements[criterion].relevance`.
    labels: dict[str, str] = {}

    @field_validator("baseline_model")
    @classmethod
    def _a_model(cls, model: str) -> str:
        ModelRef.parse(model)  # BackendError is a ValueError: pydantic names the field
        return model

    @field_validator("labels")
    @classmethod
    def _label_paths(cls, labels: dict[str, str]) -> dict[str, str]:
        for path in labels.values():
            check_path(path)
        return labels

    @model_validator(mode="after")
    def _one_kind(self) -> JudgeConfig:
        if (self.module is None) == (self.callable_ref is None):
            raise ValueError(
                "name either `module` (a verdict module beside prompt files) or `callable` "
                "(your own judge function, 'pkg.module:function'), not both or neither"
            )
        if self.callable_ref is not None:
            given = [k for k in ("facets", "reply_shapes") if getattr(self, k)]
            if given or "system" in self.model_fields_set:
                raise ValueError(
                    f"a callable judge makes its own requests: {given or ['system']} apply "
                    "only to a judge with prompt files; remove them"
                )
        return self


def version_key(version: str) -> tuple[int, ...]:
    """Order prompt versions numerically: 0.3 < 0.3.1 < 0.10."""
    return tuple(int(part) for part in version.split("."))


@dataclass(frozen=True)
class Prompt:
    """One prompt version of one judge: a template per facet (`None` = single call)."""

    judge: str
    version: str
    templates: dict[str | None, str]
    paths: dict[str | None, Path]

    def render(self, facet: str | None, fields: dict[str, str]) -> str:
        template = self.templates[facet]
        missing = sorted(set(PLACEHOLDER.findall(template)) - set(fields))
        if missing:
            raise SpecError(
                f"{self.paths[facet]}: placeholders {missing} have no value; the item gives "
                f"{sorted(fields)}"
            )
        return PLACEHOLDER.sub(lambda m: fields[m.group(1)], template)

    def rendering(self, facet: str | None) -> re.Pattern[str]:
        """What any rendering of the template is, whole: its own text exactly, each
        placeholder any text. A recorded prompt that fully matches it is this template's,
        with no line added or removed."""
        pieces = PLACEHOLDER.split(self.templates[facet])[::2]
        return re.compile("(?s:.*?)".join(re.escape(piece) for piece in pieces))

    def literal_lines(self, facet: str | None) -> list[str]:
        """The template's own text, line by line, without its placeholders: what every
        rendering of it contains, whatever the item."""
        pieces = PLACEHOLDER.split(self.templates[facet])[::2]
        return [line.strip() for piece in pieces for line in piece.splitlines() if line.strip()]


class ParsedInputs(Protocol):
    """An item's inputs as its judge module's `Inputs` model parsed them: a pydantic model
    with prompt fields (both checked when the module loads)."""

    def prompt_fields(self) -> dict[str, str]: ...


@dataclass(frozen=True)
class JudgeSpec:
    """A judge: its configuration, and its verdict module and every prompt version on disk,
    or the team's callable (`team`) and its one version."""

    config: JudgeConfig
    root: Path
    prompts: dict[str, Prompt] = field(repr=False)
    team: TeamJudge | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def versions(self) -> list[str]:
        return sorted(self.prompts, key=version_key)

    @property
    def module(self) -> ModuleType:
        if self.config.module is None:
            raise SpecError(f"{self.root / 'judge.toml'}: a callable judge has no verdict module")
        return importlib.import_module(self.config.module)

    def retired(self, version: str) -> bool:
        """An earlier version of a callable judge: its code is gone (the team's module now
        declares a newer version), so it is never judged again; its committed results, which
        its acceptance pinned, stand for it (an accepted baseline's regression reference)."""
        if self.team is None or not re.fullmatch(r"\d+(\.\d+)*", version):
            return False
        return version_key(version) < version_key(self.team.version)

    def previous_version(self, version: str) -> str | None:
        ordered = self.versions
        index = ordered.index(version)
        return ordered[index - 1] if index else None

    @property
    def verdict_model(self) -> type[BaseModel] | None:
        """The model `build_verdict` returns, read from its annotation; for a callable judge,
        the pydantic model its return annotation names (None: none, nothing to check)."""
        if self.team is not None:
            return self.team.verdict_model
        returned: type[BaseModel] = typing.get_type_hints(self.module.build_verdict)["return"]
        return returned

    def parse_inputs(self, raw: dict[str, Any]) -> ParsedInputs:
        if self.team is not None:
            return self.team.bind(raw)  # a TeamJudgeError is a ValueError naming the input
        return self.module.Inputs.model_validate(raw)

    def reply_model(self, version: str, facet: str | None) -> type[BaseModel]:
        return self.module.reply_model(version, facet)

    def score_scales(self, version: str) -> dict[str, tuple[float, float]]:
        """Each reply field's (minimum, maximum), where the reply model states both: the
        scale a score dimension takes. A derived dimension (a total) states none. A callable
        judge's come from its verdict model, when it names one."""
        scales: dict[str, tuple[float, float]] = {}
        if self.team is not None:
            model = self.team.verdict_model
            return _bounded(model.model_json_schema()) if model is not None else {}
        for facet in self.config.facets or (None,):
            bounded = _bounded(self.reply_model(version, facet).model_json_schema())
            if facet is not None and len(bounded) == 1:  # a facet's one score is its dimension's
                bounded = {facet: next(iter(bounded.values()))}
            for name, scale in bounded.items():
                scales.setdefault(name, scale)
        return scales

    def request_schema(
        self, version: str, facet: str | None, inputs: ParsedInputs
    ) -> dict[str, Any]:
        """The JSON schema sent with a request: the reply model's, unless the judge narrows it."""
        from judges.calls.backends import strict_schema

        narrow = getattr(self.module, "request_schema", None)
        shape = self.config.reply_shapes.get(version)
        if narrow is not None:
            if shape is not None:
                return narrow(version, facet, inputs, shape=shape)
            return narrow(version, facet, inputs)
        if shape is not None:
            raise SpecError(
                f"{self.root / 'judge.toml'}: reply_shapes names {shape!r} for {version}, but "
                f"{self.config.module} has no request_schema to build it"
            )
        return strict_schema(self.reply_model(version, facet).model_json_schema())

    def build_verdict(
        self, replies: dict[str | None, tuple[BaseModel, str]], inputs: ParsedInputs, version: str
    ) -> BaseModel:
        return self.module.build_verdict(replies, inputs, version)


def _bounded(schema: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """The fields of a JSON schema that state both a minimum and a maximum."""
    return {
        name: (float(field["minimum"]), float(field["maximum"]))
        for name, field in schema.get("properties", {}).items()
        if isinstance(field.get("minimum"), int | float)
        and isinstance(field.get("maximum"), int | float)
    }


def prompt_hash(system: str, rendered: dict[str | None, str]) -> str:
    """A short, stable fingerprint of exactly what the judge was shown."""
    digest = hashlib.sha256(system.encode())
    for facet in sorted(rendered, key=lambda f: f or ""):
        digest.update(f"\0{facet or ''}\0{rendered[facet]}".encode())
    return digest.hexdigest()[:16]


def _load_prompts(root: Path, config: JudgeConfig) -> dict[str, Prompt]:
    prompts: dict[str, Prompt] = {}
    for path in sorted(root.iterdir()):
        if path.is_file() and path.suffix == ".md" and path.stem != "README":
            if config.facets:
                raise SpecError(
                    f"{path}: judge {config.name!r} has facets {list(config.facets)}, so a "
                    f"prompt version is a folder {path.stem}/ holding one <facet>.md per facet"
                )
            paths: dict[str | None, Path] = {None: path}
            version = path.stem
        elif path.is_dir() and not path.name.startswith((".", "_")):
            version = path.name
            paths = {facet: path / f"{facet}.md" for facet in config.facets}
            absent = [str(p) for p in paths.values() if not p.is_file()]
            if not config.facets or absent:
                raise SpecError(
                    f"{path}: a prompt version folder needs one file per facet of "
                    f"{config.name!r} {list(config.facets)}; missing {absent}"
                )
        else:
            continue
        if not re.fullmatch(r"\d+(\.\d+)*", version):
            raise SpecError(f"{path}: prompt versions are dotted numbers such as 0.3.1")
        if len(version) > MAX_VERSION:
            raise SpecError(
                f"{path}: a prompt version is at most {MAX_VERSION} characters (it names "
                f"cassette and report folders); {version[:40]}... has {len(version)}"
            )
        prompts[version] = Prompt(
            config.name,
            version,
            {f: p.read_text(encoding="utf-8") for f, p in paths.items()},
            paths,
        )
    if not prompts:
        raise SpecError(f"{root}: judge {config.name!r} has no prompt version (<version>.md)")
    return prompts


_VERDICT_MODULE_API = ("Inputs", "reply_model", "build_verdict")


def load_judge(root: Path) -> JudgeSpec:
    """Load one judge folder, with errors that name the file and the field."""
    toml_path = root / "judge.toml"
    try:
        text = toml_path.read_text(encoding="utf-8")
        config = JudgeConfig.model_validate(tomllib.loads(text))
    except UnicodeDecodeError as error:
        raise SpecError(f"{toml_path}: not UTF-8 ({error.reason} at byte {error.start})") from None
    except tomllib.TOMLDecodeError as error:
        raise SpecError(f"{toml_path}: not valid TOML: {error}") from None
    except ValidationError as error:
        raise SpecError(f"{toml_path}: {error}") from None
    if config.name != root.name:
        raise SpecError(f"{toml_path}: name {config.name!r} must equal its folder {root.name!r}")
    if config.callable_ref is not None:
        return _load_callable(root, toml_path, text, config)
    assert config.module is not None  # one of the two, checked by JudgeConfig
    _check_module(toml_path, text, config.module)
    prompts = _load_prompts(root, config)
    unknown = sorted(set(config.reply_shapes) - set(prompts))
    if unknown:
        raise SpecError(
            f"{toml_path}: reply_shapes names prompt versions {unknown} that have no prompt "
            f"file; versions are {sorted(prompts, key=version_key)}"
        )
    return JudgeSpec(config=config, root=root, prompts=prompts)


def _load_callable(root: Path, toml_path: Path, text: str, config: JudgeConfig) -> JudgeSpec:
    """A judge given as the team's callable: no prompt file, one version (the team's)."""
    assert config.callable_ref is not None
    try:
        team = TeamJudge.load(
            config.callable_ref, config.version, config.version_attribute, config.arguments
        )
    except TeamJudgeError as error:
        raise SpecError(f"{toml_path}:{_line_of_key(text, 'callable')}: {error}") from None
    prompt = Prompt(config.name, team.version, {None: ""}, {})
    return JudgeSpec(config=config, root=root, prompts={team.version: prompt}, team=team)


def _line_of_key(text: str, key: str) -> int:
    return next((n for n, ln in enumerate(text.splitlines(), 1) if ln.strip().startswith(key)), 1)


def _check_module(toml_path: Path, text: str, name: str) -> None:
    """The verdict module imports and provides the three names the harness calls."""
    line = _line_of_key(text, "module")
    try:
        module = importlib.import_module(name)
    except ImportError as error:
        raise SpecError(
            f"{toml_path}:{line}: module {name!r} cannot be imported ({error}); name an "
            "importable verdict module such as 'judges.builtin.product_identity'"
        ) from None
    missing = [attr for attr in _VERDICT_MODULE_API if not hasattr(module, attr)]
    if missing:
        raise SpecError(
            f"{toml_path}:{line}: module {name!r} lacks {missing}; a verdict module provides "
            f"{', '.join(_VERDICT_MODULE_API)}"
        )
    problem = _api_problem(module)
    if problem:
        raise SpecError(f"{toml_path}:{line}: module {name!r} ({module.__file__}): {problem}")


def _api_problem(module: ModuleType) -> str | None:
    """What the harness cannot use in a verdict module that has the three names."""
    inputs = module.Inputs
    if not (isinstance(inputs, type) and issubclass(inputs, BaseModel)):
        return "Inputs must be a pydantic model (class Inputs(BaseModel))"
    if not callable(getattr(inputs, "prompt_fields", None)):
        return "Inputs needs a method prompt_fields(self) -> dict[str, str]"
    if not callable(module.reply_model):
        return "reply_model must be a function reply_model(prompt_version, facet)"
    try:
        returned = typing.get_type_hints(module.build_verdict).get("return")
    except Exception as error:  # a name the annotations use is not importable there
        return f"build_verdict's annotations cannot be resolved ({error})"
    if not (isinstance(returned, type) and issubclass(returned, BaseModel)):
        return (
            "build_verdict needs a return annotation naming the verdict model, e.g. "
            "def build_verdict(replies, inputs, prompt_version) -> Verdict: (a pydantic "
            f"model); found {returned!r}"
        )
    return None


@cache
def load_catalog(root: Path = PROMPTS_ROOT) -> dict[str, JudgeSpec]:
    """Every judge under `root`, by name."""
    if not root.is_dir():
        raise SpecError(f"{root}: no such folder of judge definitions")
    return {
        path.name: load_judge(path)
        for path in sorted(root.iterdir())
        if path.is_dir() and (path / "judge.toml").is_file()
    }
