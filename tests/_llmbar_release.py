"""A small release in LLMBar's folder layout, written in tmp_path for the import tests."""

from __future__ import annotations

import json
from pathlib import Path

from judges.stats.fitness.pairwise import Judged, llmbar_statistics

ITEMS = [
    ("Name a prime number.", "7", "8", 1),
    ("Write one word about cats.", "Cats purr and sleep a lot.", "Fluffy", 2),
    ("Say hello in French.", "Bonjour", "Hello", 1),
]


def write_llmbar_set(
    root: Path, name: str, replies: dict[str, list[tuple[str | None, str | None]]]
) -> None:
    """One set of a release in LLMBar's layout: its dataset, and each model's winners (in
    the original order and swapped) with the statistics they give."""
    folder = root / name
    folder.mkdir(parents=True)
    dataset = [
        {"input": i, "output_1": a, "output_2": b, "label": label} for i, a, b, label in ITEMS
    ]
    (folder / "dataset.json").write_text(json.dumps(dataset), encoding="utf-8")
    for model, winners in replies.items():
        result = []
        for entry, (original, swapped) in zip(dataset, winners, strict=True):
            result.append(
                entry
                | {
                    "results": [
                        {
                            "swap = False": {
                                "completion": ["Output (a)", "stop"],
                                "winner": original,
                            },
                            "swap = True": {"completion": ["Output (b)", ""], "winner": swapped},
                        }
                    ]
                }
            )
        path = folder / "evaluators" / model / "Vanilla"
        path.mkdir(parents=True)
        (path / "result.json").write_text(json.dumps(result), encoding="utf-8")
        items = [
            Judged(f"X-{i}", "s", str(label), o, s)
            for i, ((*_, label), (o, s)) in enumerate(zip(ITEMS, winners, strict=True))
        ]
        (path / "statistics.json").write_text(
            json.dumps(llmbar_statistics(items)), encoding="utf-8"
        )
