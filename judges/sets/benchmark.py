"""The benchmark-neutral import format: any labelled pairwise judge benchmark, in a folder.

    benchmark.toml    the manifest: name, source, licence (or "unknown"), orders, rule,
                      [scoring], [overall], [scores], [judges."<name>"]
    items.jsonl       {"id", "subset", "gold": "A" | "B" | "tie", "inputs": {"prompt", "A", "B"}}
    judgements.jsonl  {"judge", "item", "order": 1 | 2, "verdict"?: "A" | "B" | "tie" | "none",
                       "scores"?: {"A": number, "B": number}, "reply"?: text}
    published.jsonl   {"judge", "subset": name | null, "rule", "value", "scale"?, "decimals"?,
                       "rounding"?}   optional: the benchmark's own figures, checked exactly

A verdict names a response by its label in the item (A or B), whatever position it was shown
in: order 1 shows A first, order 2 shows B first. "none" is an unparsed reply, never a tie.
A judge that gives scores (a reward model) may leave the verdict out: the higher score wins
(`[scores] higher_is_better`), equal scores are a tie; given both, they must agree.

Everything here is read as hostile: the first problem raises `BenchmarkError` naming the
file, the line or item, and the fix. Nothing is dropped: every row read is kept or refused.
Pure reading; `judges.cli.benchmarks` writes, `judges.stats.fitness.benchmark` computes.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

from judges.sets.benchmark_rules import TWO_ORDER_RULES, known_rule
from judges.storage.files import json_lines

MANIFEST_FILE = "benchmark.toml"
ITEMS_FILE = "items.jsonl"
JUDGEMENTS_FILE = "judgements.jsonl"
PUBLISHED_FILE = "published.jsonl"
FILES = (MANIFEST_FILE, ITEMS_FILE, JUDGEMENTS_FILE, PUBLISHED_FILE)

Gold = Literal["A", "B", "tie"]
Verdict = Literal["A", "B", "tie", "none"]
# An aggregation rule's name, one of the registry's (`judges.sets.benchmark_rules`).
RuleName = Annotated[str, AfterValidator(known_rule)]

_NAME = Field(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f]+$")
_SLUG = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
Number = StrictFloat | StrictInt


class BenchmarkError(ValueError):
    """A benchmark file that cannot be read as documented: names the file, row and fix."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Scoring(_Strict):
    """`[scoring]`: what a tie verdict and an unparsed reply are worth, as the benchmark
    scores them. Credits (per-judgement, single-order, consistent-or-tie) are in [0, 1];
    votes (vote) in [-1, 1]."""

    tie_credit: Number = Field(default=0, ge=0, le=1)
    none_credit: Number = Field(default=0, ge=0, le=1)
    tie_vote: Number = Field(default=0, ge=-1, le=1)
    none_vote: Number = Field(default=0, ge=-1, le=1)


class Overall(_Strict):
    """`[overall]`: how the overall figure weighs the subsets. "items": every pair alike;
    "subsets": the mean of the subsets' figures; "weights": `weights` (subset -> weight)."""

    weighting: Literal["items", "subsets", "weights"] = "items"
    weights: dict[str, Number] = {}

    @model_validator(mode="after")
    def _weights(self) -> Overall:
        if (self.weighting == "weights") != bool(self.weights):
            raise ValueError('weights are given exactly when weighting = "weights"')
        if any(not math.isfinite(w) or w < 0 for w in self.weights.values()):
            raise ValueError("every weight is a finite number >= 0")
        if self.weights and not sum(self.weights.values()) > 0:
            raise ValueError("the weights sum above 0")
        return self


class Scores(_Strict):
    """`[scores]`: how a judge's two scores become its verdict."""

    higher_is_better: bool = True


class JudgeInfo(_Strict):
    """`[judges."<name>"]`: a judge judged otherwise than the benchmark's default."""

    orders: int | None = Field(default=None, ge=1, le=2)
    rule: RuleName | None = None
    higher_is_better: bool | None = None  # its scores' reading, if not [scores]'s
    description: str = ""


class Manifest(_Strict):
    name: str = _SLUG
    description: str = ""
    source: StrictStr = Field(min_length=1)
    licence: StrictStr = Field(min_length=1)  # "unknown" when none is known: never invented
    orders: int = Field(ge=1, le=2)
    rule: RuleName
    scoring: Scoring = Scoring()
    overall: Overall = Overall()
    scores: Scores = Scores()
    judges: dict[str, JudgeInfo] = {}

    def orders_of(self, judge: str) -> int:
        info = self.judges.get(judge)
        return info.orders if info and info.orders else self.orders

    def higher_is_better(self, judge: str) -> bool:
        info = self.judges.get(judge)
        if info and info.higher_is_better is not None:
            return info.higher_is_better
        return self.scores.higher_is_better

    def rule_of(self, judge: str) -> RuleName:
        info = self.judges.get(judge)
        return info.rule if info and info.rule else self.rule

    @model_validator(mode="after")
    def _rules_fit_orders(self) -> Manifest:
        for judge in ("", *self.judges):
            orders, rule = self.orders_of(judge), self.rule_of(judge)
            if rule in TWO_ORDER_RULES and orders != 2:
                who = f'[judges."{judge}"]' if judge else "the benchmark"
                raise ValueError(
                    f"{who}: rule {rule!r} needs 2 orders (has {orders}); "
                    'a judge judged once takes rule = "single-order"'
                )
        return self


class Inputs(BaseModel):
    """What was judged: the prompt and the two responses; other text fields are kept."""

    model_config = ConfigDict(extra="allow", frozen=True)

    prompt: StrictStr
    A: StrictStr
    B: StrictStr

    @model_validator(mode="after")
    def _text_only(self) -> Inputs:
        for key, value in (self.model_extra or {}).items():
            if not isinstance(value, str):
                raise ValueError(f"inputs.{key} is {type(value).__name__}, not text")
        return self


class Item(_Strict):
    id: str = _NAME
    subset: str = _NAME
    gold: Gold
    inputs: Inputs


class PairScores(_Strict):
    A: Number
    B: Number


class Judgement(_Strict):
    judge: str = _NAME
    item: str = _NAME
    order: int = Field(ge=1, le=2, strict=True)
    verdict: Verdict | None = None
    scores: PairScores | None = None
    reply: StrictStr | None = None

    @model_validator(mode="after")
    def _verdict_or_scores(self) -> Judgement:
        if self.verdict is None and self.scores is None:
            raise ValueError('give a verdict ("A", "B", "tie", or "none" if unparsed) or scores')
        if self.scores and not all(map(math.isfinite, (self.scores.A, self.scores.B))):
            raise ValueError("scores are finite numbers")
        return self


class Published(_Strict):
    judge: str = _NAME
    subset: str | None = Field(default=None, min_length=1)  # None: the overall figure
    rule: RuleName
    value: Number
    scale: Literal["percent", "fraction"] = "percent"
    decimals: int | None = Field(default=None, ge=0, le=17)  # None: as many as the value shows
    rounding: Literal["half-even", "half-up"] = "half-even"


def verdict_from_scores(scores: PairScores, higher_is_better: bool) -> Verdict:
    """The stated rule: the better score wins; equal scores are a tie."""
    if scores.A == scores.B:
        return "tie"
    return "A" if (scores.A > scores.B) == higher_is_better else "B"


@dataclass(frozen=True)
class Benchmark:
    folder: Path
    manifest: Manifest
    items: tuple[Item, ...]
    judgements: tuple[Judgement, ...]  # every verdict filled in (from scores when absent)
    published: tuple[Published, ...]
    licence_file: str = ""  # the text of a LICENSE file beside the manifest, if any

    @property
    def subsets(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(item.subset for item in self.items))

    @property
    def judges(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(j.judge for j in self.judgements))


R = TypeVar("R", bound=BaseModel)


def _problems(error: ValidationError) -> str:
    found = []
    for e in error.errors():
        where = ".".join(str(p) for p in e["loc"])
        message = str(e["msg"]).removeprefix("Value error, ")
        found.append(f"{where}: {message}" if where else message)
    return "; ".join(found)


def _rows(path: Path, model: type[R], hint: str) -> Iterator[tuple[int, R]]:
    for line, value in json_lines(path, BenchmarkError, hint):
        try:
            yield line, model.model_validate(value)
        except ValidationError as error:
            raise BenchmarkError(f"{path}:{line}: {_problems(error)}{hint}") from None


def load_manifest(folder: Path) -> Manifest:
    path = folder / MANIFEST_FILE
    if not path.is_file():
        raise BenchmarkError(
            f"{folder}: no {MANIFEST_FILE}; write one naming the benchmark, its source, its "
            'licence (or licence = "unknown"), orders and rule (`python -m judges docs '
            "pairwise-benchmarks`)"
        )
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
        return Manifest.model_validate(table)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise BenchmarkError(f"{path}: not TOML ({error})") from None
    except ValidationError as error:
        raise BenchmarkError(f"{path}: {_problems(error)}") from None


_ITEM_HINT = (
    '; each line is {"id", "subset", "gold": "A"|"B"|"tie", "inputs": {"prompt", "A", "B"}}'
)
_JUDGEMENT_HINT = (
    '; each line is {"judge", "item", "order": 1|2, "verdict": "A"|"B"|"tie"|"none"} '
    'and/or "scores": {"A": x, "B": y}, optional "reply"'
)
_PUBLISHED_HINT = '; each line is {"judge", "subset" (null: overall), "rule", "value"}'


def _items(folder: Path) -> dict[str, Item]:
    path = folder / ITEMS_FILE
    if not path.is_file():
        raise BenchmarkError(f"{folder}: no {ITEMS_FILE}; one line per pair{_ITEM_HINT}")
    items: dict[str, Item] = {}
    lines: dict[str, int] = {}
    for line, item in _rows(path, Item, _ITEM_HINT):
        if item.id in items:
            raise BenchmarkError(
                f"{path}:{line}: item {item.id!r} already given on line {lines[item.id]}; "
                "ids are unique within a benchmark"
            )
        items[item.id], lines[item.id] = item, line
    if not items:
        raise BenchmarkError(f"{path}: no items")
    return items


def _judgements(folder: Path, manifest: Manifest, items: dict[str, Item]) -> list[Judgement]:
    path = folder / JUDGEMENTS_FILE
    if not path.is_file():
        raise BenchmarkError(f"{folder}: no {JUDGEMENTS_FILE}{_JUDGEMENT_HINT}")
    seen: dict[tuple[str, str, int], int] = {}
    out: list[Judgement] = []
    for line, row in _rows(path, Judgement, _JUDGEMENT_HINT):
        where = f"{path}:{line}"
        if row.item not in items:
            raise BenchmarkError(f"{where}: item {row.item!r} is not in {ITEMS_FILE}")
        orders = manifest.orders_of(row.judge)
        if row.order > orders:
            raise BenchmarkError(
                f"{where}: order {row.order}, but {row.judge} is judged in {orders} order(s); "
                f'set orders in [judges."{row.judge}"] of {MANIFEST_FILE}'
            )
        key = (row.judge, row.item, row.order)
        if key in seen:
            raise BenchmarkError(
                f"{where}: {row.judge} on {row.item} order {row.order} already given on line "
                f"{seen[key]}"
            )
        seen[key] = line
        if row.scores is not None:
            rule = manifest.higher_is_better(row.judge)
            derived = verdict_from_scores(row.scores, rule)
            if row.verdict is not None and row.verdict != derived:
                raise BenchmarkError(
                    f"{where}: verdict {row.verdict!r} but scores A={row.scores.A}, "
                    f"B={row.scores.B} give {derived!r} (higher_is_better = {str(rule).lower()}"
                    f" for {row.judge}); give one of them, or make them agree"
                )
            row = row.model_copy(update={"verdict": derived})
        out.append(row)
    if not out:
        raise BenchmarkError(f"{path}: no judgements")
    return out


def _complete(path: Path, manifest: Manifest, judgements: list[Judgement]) -> None:
    """Every item a judge judged, it judged in each of its orders."""
    given: dict[tuple[str, str], set[int]] = {}
    for row in judgements:
        given.setdefault((row.judge, row.item), set()).add(row.order)
    for (judge, item), orders in given.items():
        absent = sorted(set(range(1, manifest.orders_of(judge) + 1)) - orders)
        if absent:
            raise BenchmarkError(
                f"{path}: {judge} on item {item}: no judgement in order(s) {absent}; give "
                'every order (an unparsed reply is verdict "none"), or set orders in '
                f'[judges."{judge}"] of {MANIFEST_FILE}'
            )
    judged = {judge for judge, _ in given}
    unknown = sorted(set(manifest.judges) - judged)
    if unknown:
        raise BenchmarkError(
            f"{path.parent / MANIFEST_FILE}: [judges] names {unknown}, which judged nothing in "
            f"{JUDGEMENTS_FILE}; remove them or add their judgements"
        )


def _published(
    folder: Path, manifest: Manifest, items: dict[str, Item], judges: set[str]
) -> list[Published]:
    path = folder / PUBLISHED_FILE
    if not path.is_file():
        return []
    subsets = {item.subset for item in items.values()}
    seen: dict[tuple[str, str | None, str], int] = {}
    out = []
    for line, row in _rows(path, Published, _PUBLISHED_HINT):
        where = f"{path}:{line}"
        if row.judge not in judges:
            raise BenchmarkError(f"{where}: judge {row.judge!r} judged nothing in this benchmark")
        if row.subset is not None and row.subset not in subsets:
            raise BenchmarkError(
                f"{where}: subset {row.subset!r} is not in {ITEMS_FILE} "
                f"({', '.join(sorted(subsets))}); null is the overall figure"
            )
        if row.rule in TWO_ORDER_RULES and manifest.orders_of(row.judge) != 2:
            raise BenchmarkError(
                f"{where}: rule {row.rule!r} needs 2 orders; {row.judge} is judged in "
                f"{manifest.orders_of(row.judge)}"
            )
        if not math.isfinite(row.value):
            raise BenchmarkError(f"{where}: value {row.value} is not a finite number")
        key = (row.judge, row.subset, row.rule)
        if key in seen:
            raise BenchmarkError(f"{where}: the same figure is given on line {seen[key]}")
        seen[key] = line
        out.append(row)
    return out


def load_benchmark(folder: Path) -> Benchmark:
    """Read and cross-check a benchmark folder; the first problem raises `BenchmarkError`."""
    manifest = load_manifest(folder)
    items = _items(folder)
    judgements = _judgements(folder, manifest, items)
    _complete(folder / JUDGEMENTS_FILE, manifest, judgements)
    subsets = {item.subset for item in items.values()}
    weights = set(manifest.overall.weights)
    if manifest.overall.weighting == "weights" and weights != subsets:
        raise BenchmarkError(
            f"{folder / MANIFEST_FILE}: [overall] weights name {sorted(weights)}, the items' "
            f"subsets are {sorted(subsets)}; give one weight per subset"
        )
    published = _published(folder, manifest, items, {j.judge for j in judgements})
    licence = ""
    for name in ("LICENSE", "LICENSE.txt", "LICENSE.md", "LICENCE"):
        if (folder / name).is_file():
            licence = (folder / name).read_text(encoding="utf-8")
            break
    return Benchmark(
        folder, manifest, tuple(items.values()), tuple(judgements), tuple(published), licence
    )
