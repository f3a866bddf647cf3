"""Released pairwise judgements, read into planted items and per-order replies.

Two forms are read, both pure (no file is written here; `judges.cli.importer` writes):

- an LLMBar-style folder: `<set>/dataset.json` (items with `input`, `output_1`,
  `output_2`, `label`) and `<set>/evaluators/<model>/<strategy>/result.json`, whose
  `results[-1]` holds `"swap = False"` and `"swap = True"`, each with `completion`
  (`[text, finish_reason]`) and `winner` ("1", "2" or null, already in the dataset's labels);
  `statistics.json` beside a result holds the release's published figures;
- a plain JSONL file of a team's own logged decisions, one line per item and order,
  `{"item": "NATU-001", "order": "original", "reply": "...", "winner": "1"}` (order
  "original" or "swapped"; winner "1", "2" or null, in the item's labels like LLMBar's),
  on items already in the planted set.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judges.builtin.pairwise import ORDERS, Label
from judges.core.results import Expectation
from judges.sets.items import PlantedItem, Provenance
from judges.storage.files import json_lines, read_json

JUDGE = "pairwise"
_SWAP = {"swap = False": "original", "swap = True": "swapped"}
_WORD = re.compile(r"[a-z0-9]+")


class ImportError_(ValueError):
    """A release cannot be imported as it is; the message names the file, item and fix."""


@dataclass(frozen=True)
class Released:
    """One released reply: an item judged by a model in one order."""

    item_id: str
    model: str
    order: str  # "original" (the item's order) or "swapped"
    reply: str
    winner: Label | None  # the item's label the judge preferred; None: it named none


@dataclass
class Release:
    """What a release holds, in the project's terms."""

    name: str  # e.g. "princeton-nlp/LLMBar@900616bf"
    strategy: str  # the source's prompt, e.g. "Vanilla"
    items: list[PlantedItem] = field(default_factory=list)
    replies: list[Released] = field(default_factory=list)
    # (category, model) -> the release's published statistics, as released
    published: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    license_text: str = ""
    notes_text: str = ""
    prefixes: dict[str, str] = field(default_factory=dict)  # set name -> item id prefix
    # set name -> sha256 of its dataset.json: what identifies the release, README or not
    contents: dict[str, str] = field(default_factory=dict)


def content_hashes(src: Path) -> dict[str, str]:
    """Each set of an LLMBar-style folder -> the sha256 of its dataset.json bytes."""
    return {
        dataset.parent.relative_to(src).as_posix(): hashlib.sha256(dataset.read_bytes()).hexdigest()
        for dataset in sorted(src.rglob("dataset.json"))
    }


def strategies_found(src: Path) -> list[str]:
    """Every `evaluators/<model>/<strategy>/result.json` strategy below `src`."""
    return sorted({result.parent.name for result in src.rglob("evaluators/*/*/result.json")})


def release_folder(planted_sets: Path, release: str) -> Path:
    """`princeton-nlp/LLMBar@900616bf` -> planted_sets/pairwise/releases/llmbar."""
    name = release.split("@")[0].rsplit("/", 1)[-1].lower()
    return planted_sets / JUDGE / "releases" / (re.sub(r"[^a-z0-9_-]+", "-", name) or "release")


def published_statistics(
    planted_sets: Path, release: str, strategy: str, category: str, model: str
) -> dict[str, Any] | None:
    """A release's published figures for one model on one set, as imported; None if absent."""
    path = (
        release_folder(planted_sets, release) / "published" / strategy / category / f"{model}.json"
    )
    if not path.is_file():
        return None
    return read_json(path, ImportError_)


def category_of(set_name: str) -> str:
    """`Adversarial/Neighbor` -> `adversarial_neighbor`: a planted set's category."""
    return "_".join(_WORD.findall(set_name.lower())) or "set"


def slug_of(text: str) -> str:
    """The first words of an instruction, as a bounded slug."""
    words = _WORD.findall(text.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > 40:
            break
        slug = candidate
    return slug or "item"


def prefix_for(set_name: str, taken: set[str]) -> str:
    """A new id prefix (2-4 capitals) for a set, distinct from those already taken."""
    # Capitals only: ids are 2-4 capital letters (a lowercase pattern here found none).
    letters = re.sub(r"[^A-Z]", "", set_name.upper()) or "SET"
    parts = [p for p in re.split(r"[/\\]", set_name.upper()) if p]
    initials = "".join(re.sub(r"[^A-Z]", "", p)[:1] for p in parts[:-1])
    last = re.sub(r"[^A-Z]", "", parts[-1]) if parts else letters
    candidates = [(initials + last)[:4], letters[:4]]
    candidates += [(initials + last)[:3] + chr(ord("A") + n) for n in range(26)]
    for candidate in candidates:
        if len(candidate) >= 2 and candidate not in taken:
            return candidate
    raise ImportError_(f"no free id prefix for set {set_name!r}; prefixes taken: {sorted(taken)}")


def _load_json(path: Path) -> Any:
    return read_json(path, ImportError_)


_LABELS: dict[str, Label] = {"1": "1", "2": "2"}


def _label(value: Any, where: str) -> Label:
    label = _LABELS.get(str(value))
    if label is None:
        raise ImportError_(f"{where}: label {value!r} is not 1 or 2")
    return label


def _item(
    entry: Any, set_name: str, index: int, item_id: str, release: str, path: Path
) -> PlantedItem:
    where = f"{path} item {index}"
    if not isinstance(entry, dict) or not {"input", "output_1", "output_2", "label"} <= set(entry):
        raise ImportError_(f"{where}: needs input, output_1, output_2 and label")
    label = _label(entry["label"], where)
    return PlantedItem(
        id=item_id,
        slug=slug_of(entry["input"]),
        judge=JUDGE,
        category=category_of(set_name),
        inputs={
            "instruction": entry["input"],
            "output_1": entry["output_1"],
            "output_2": entry["output_2"],
        },
        expect=(
            Expectation(field="winner_original", op="==", value=label),
            Expectation(field="winner_swapped", op="==", value=label),
        ),
        provenance=Provenance(
            source="imported", release=release, release_set=set_name, release_index=index
        ),
    )


def read_llmbar(
    src: Path,
    strategy: str,
    release: str,
    prefixes: dict[str, str] | None = None,
    taken: set[str] | None = None,
    licence_required: bool = True,
) -> Release:
    """Every set under `src` (a folder holding `dataset.json`) and its judges' replies.

    `prefixes` (set name -> id prefix) keeps the ids of sets imported before; a new set gets
    a new prefix, so importing more sets never renumbers the items already imported.
    `taken`: the prefixes of every other release of the judge (and of its other items),
    which a new set's prefix never repeats: two releases' sets that share initials
    (Adversarial/GPTInst, Adversarial/GPTOut) would otherwise share their ids.
    `licence_required=False` (the neutral form's conversion): a release without a LICENSE
    is read, its licence then "unknown".
    """
    known = dict(prefixes or {})
    elsewhere = set(taken or ()) - set(known.values())
    out = Release(name=release, strategy=strategy)
    for name in ("LICENSE", "LICENSE.txt", "LICENSE.md"):
        if (src / name).is_file():
            out.license_text = (src / name).read_text(encoding="utf-8")
            break
    if not out.license_text and licence_required:
        raise ImportError_(
            f"{src}: no LICENSE file; a release is imported with its licence (never an "
            "invented one): add the release's own, or import it with --benchmark, which "
            'records its licence as "unknown" and shows it so'
        )
    datasets = sorted(src.rglob("dataset.json"))
    if not datasets:
        raise ImportError_(f"{src}: no <set>/dataset.json below it; is it an LLMBar-style folder?")
    for dataset in datasets:
        set_name = dataset.parent.relative_to(src).as_posix()
        if set_name not in known:
            known[set_name] = prefix_for(set_name, set(known.values()) | elsewhere)
        entries = _load_json(dataset)
        if not isinstance(entries, list) or not 0 < len(entries) < 1000:
            raise ImportError_(f"{dataset}: expected a list of 1 to 999 items")
        ids = [f"{known[set_name]}-{index + 1:03d}" for index in range(len(entries))]
        items = [
            _item(entry, set_name, index, ids[index], release, dataset)
            for index, entry in enumerate(entries)
        ]
        out.items += items
        for result in sorted(dataset.parent.glob(f"evaluators/*/{strategy}/result.json")):
            model = result.parent.parent.name
            out.replies += _llmbar_replies(result, entries, items, model)
            stats = result.parent / "statistics.json"
            if stats.is_file():
                out.published[(category_of(set_name), model)] = _load_json(stats)
    if not out.replies:
        found = strategies_found(src)
        raise ImportError_(
            f"{src}: no judge outputs for strategy {strategy!r} (no "
            f"<set>/evaluators/<model>/{strategy}/result.json); strategies found: "
            f"{', '.join(found) or 'none'}" + (f"; pass --strategy {found[0]}" if found else "")
        )
    out.prefixes = {name: known[name] for name in sorted(known)}
    out.contents = content_hashes(src)
    if (src / "README.md").is_file():
        out.notes_text = (src / "README.md").read_text(encoding="utf-8")
    return out


def _llmbar_replies(
    path: Path, entries: list[Any], items: list[PlantedItem], model: str
) -> list[Released]:
    results = _load_json(path)
    if not isinstance(results, list) or len(results) != len(entries):
        raise ImportError_(
            f"{path}: {len(results) if isinstance(results, list) else 'no'} results for "
            f"{len(entries)} items of the dataset beside it"
        )
    replies = []
    for index, (result, entry, item) in enumerate(zip(results, entries, items, strict=True)):
        where = f"{path} item {index}"
        same = all(result.get(key) == entry[key] for key in ("input", "output_1", "output_2"))
        if not same or str(result.get("label")) != str(entry["label"]):
            raise ImportError_(f"{where}: differs from dataset.json item {index}")
        try:
            final = result["results"][-1]
        except (KeyError, IndexError, TypeError):
            raise ImportError_(f"{where}: no results[-1] with both orders") from None
        for key, order in _SWAP.items():
            if key not in final:
                raise ImportError_(f"{where}: results[-1] has no {key!r}")
            winner = final[key].get("winner")
            if winner is not None:
                winner = _label(winner, f"{where} {key}")
            completion = final[key].get("completion") or [""]
            text = completion[0] if isinstance(completion, list) else str(completion)
            replies.append(Released(item.id, model, order, str(text), winner))
    return replies


def read_jsonl(path: Path, model: str, known_ids: set[str]) -> list[Released]:
    """A team's logged decisions (see the module docstring), checked line by line."""
    replies: list[Released] = []
    seen: dict[tuple[str, str], int] = {}
    hint = '; each line is {"item", "order", "reply", "winner"}'
    for number, raw in json_lines(path, ImportError_, hint):
        where = f"{path}:{number}"
        if not isinstance(raw, dict) or not {"item", "order", "winner"} <= set(raw):
            raise ImportError_(f"{where}: needs item, order, winner (and reply){hint}")
        item, order, winner = str(raw["item"]), str(raw["order"]), raw["winner"]
        if item not in known_ids:
            raise ImportError_(f"{where}: item {item!r} is not in the planted set; import it first")
        if order not in ORDERS:
            raise ImportError_(f"{where}: order {order!r} is not one of {', '.join(ORDERS)}")
        if (item, order) in seen:
            raise ImportError_(f"{where}: {item} {order} already given on line {seen[item, order]}")
        seen[(item, order)] = number
        label = None if winner is None else _label(winner, where)
        replies.append(Released(item, model, order, str(raw.get("reply", "")), label))
    return replies
