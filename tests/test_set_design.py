"""Legal but weak planted sets are named before any call, each with its fix."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from judges.cli.init import scaffold
from judges.core.spec import load_catalog, load_judge
from judges.sets.planted import load_planted_set
from judges.stats.fitness.power import MIN_POWER, detection_power
from judges.verdicts.set_design import weak_set_lines

ROOT = Path(__file__).resolve().parents[1]


def _built_in(judge: str) -> list[str]:
    return weak_set_lines(load_planted_set(ROOT / "planted_sets", load_catalog()[judge]))


def test_the_built_in_sets_decide_what_they_measure() -> None:
    # geval's 12 controls: its smallest categories (8 defects) pass with probability 0.98.
    assert _built_in("geval") == []
    assert detection_power(8, 12) >= 0.95
    # 15 controls: the smallest category (6 defects) passes with probability 0.965.
    assert _built_in("product_identity") == []
    assert detection_power(6, 15) >= 0.95
    # A ranking set and a pairwise set have no controls by design.
    assert _built_in("relevance") == [] and _built_in("pairwise") == []


def _forget_verdict_modules() -> None:
    for name in [m for m in sys.modules if m.split(".")[0] == "judge_verdicts"]:
        del sys.modules[name]


def test_the_init_scaffold_decides_what_it_measures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`judges init`'s set: each defect category against its 45 controls is a deciding test
    (a coin flip cannot earn a PASS there, and a good judge is not failed by chance)."""
    scaffold(tmp_path, "support_reply", "local:any-model")
    monkeypatch.syspath_prepend(str(tmp_path))  # its verdict module, as pytest.ini adds it
    _forget_verdict_modules()  # another scaffold's, imported by an earlier test
    try:
        spec = load_judge(tmp_path / "judge_prompts" / "support_reply")
    finally:
        _forget_verdict_modules()
    planted = load_planted_set(tmp_path / "planted_sets", spec)
    assert weak_set_lines(planted) == []
    controls = sum(item.control for item in planted.items)
    categories = {item.category for item in planted.items if not item.control}
    assert controls == 45 and categories == {"wrong_policy", "made_up", "unhelpful"}
    for category in categories:
        defects = sum(item.category == category for item in planted.items)
        assert detection_power(defects, controls) >= MIN_POWER, category


def test_a_set_with_too_few_controls_says_what_it_cannot_decide(tmp_path: Path) -> None:
    """geval as it was before its second, news-style summaries: 6 controls, 6-8 defects per
    category, none of which a good judge passes with the 0.95 a deciding test needs."""
    folder = tmp_path / "geval"
    folder.mkdir()
    source = (ROOT / "planted_sets" / "geval" / "items.jsonl").read_text()
    items = [json.loads(line) for line in source.splitlines() if line.strip()]
    kept = [item for item in items if not item["slug"].endswith("-news")]
    (folder / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in kept))
    (geval,) = weak_set_lines(load_planted_set(tmp_path, load_catalog()["geval"]))
    assert geval.startswith(f"{folder / 'items.jsonl'}: against its 6 controls")
    assert f"faithfulness (6 defects: {detection_power(6, 6):.2f})" in geval
    assert "coherence (8 defects: 0.86)" in geval and "add controls or defects" in geval
    assert "`python -m judges plan geval`" in geval


def test_a_detection_set_without_controls_is_named(tmp_path: Path) -> None:
    spec = load_catalog()["product_identity"]
    folder = tmp_path / "product_identity"
    folder.mkdir()
    source = (ROOT / "planted_sets" / "product_identity" / "items.jsonl").read_text()
    items = [json.loads(line) for line in source.splitlines() if line.strip()]
    defects = [item for item in items if not item["control"]]
    for item in defects:  # derived from a control that is gone: a hand-written item now
        item["provenance"].pop("clean_item", None)
    (folder / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in defects))
    (line,) = weak_set_lines(load_planted_set(tmp_path, spec))
    assert line.startswith(f'{folder / "items.jsonl"}: no control items ("control": true)')
    assert "a judge that flags everything meets every detection floor; add controls" in line
