"""Importing a second release beside the first: its sets' ids and figures are its own.

Issue 46: a second LLMBar-style release whose set shares its initials with a shipped one
(Adversarial/GPTOut after Adversarial/GPTInst) was given the same id prefix, AGPT, and its
items replaced the first release's: the figures of a set the import never touched changed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judges.calls.backends import ModelRef
from judges.cli.importer import import_llmbar
from judges.cli.main import main
from judges.core.naming import Case
from judges.core.spec import load_catalog
from judges.sets.imports import ImportError_
from judges.sets.planted import load_items, load_planted_set
from tests._llmbar_release import write_llmbar_set

GOOD = {"Good": [("1", "1"), ("2", "2"), ("1", "1")]}


def _release(root: Path, *sets: str, readme: str = "") -> Path:
    for name in sets:
        write_llmbar_set(root, name, GOOD)
    (root / "LICENSE").write_text("MIT License\n", encoding="utf-8")
    if readme:
        (root / "README.md").write_text(readme, encoding="utf-8")
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project holding the first release's Adversarial/GPTInst (prefix AGPT)."""
    first = _release(
        tmp_path / "llmbar",
        "Adversarial/GPTInst",
        readme="From princeton-nlp/LLMBar, commit 900616bf.",
    )
    root = tmp_path / "project"
    import_llmbar(first, root)
    return root


def _items(project: Path) -> Path:
    return project / "planted_sets" / "pairwise" / "items.jsonl"


def test_a_second_release_sharing_initials_gets_prefixes_of_its_own(
    project: Path, tmp_path: Path
) -> None:
    before = _items(project).read_text(encoding="utf-8")
    second = _release(tmp_path / "otherbar", "Adversarial/GPTOut")

    import_llmbar(second, project, version="0.1")  # filed there by asking (below)

    after = _items(project).read_text(encoding="utf-8")
    assert all(line in after for line in before.splitlines())  # GPTInst's items untouched
    items = load_items(_items(project), load_catalog()["pairwise"])
    prefixes = {item.provenance.release_set: item.id.rsplit("-", 1)[0] for item in items}
    assert prefixes["Adversarial/GPTInst"] == "AGPT"
    assert prefixes["Adversarial/GPTOut"] != "AGPT"
    assert len(items) == 6


def test_an_import_that_would_change_another_sets_figures_is_refused(
    project: Path, tmp_path: Path
) -> None:
    # A stale prefixes.toml gives the second release's set the first one's prefix.
    second = _release(tmp_path / "otherbar", "Adversarial/GPTOut")
    folder = project / "planted_sets" / "pairwise" / "releases" / "otherbar"
    folder.mkdir(parents=True)
    (folder / "prefixes.toml").write_text('"Adversarial/GPTOut" = "AGPT"\n', encoding="utf-8")
    before = _items(project).read_text(encoding="utf-8")

    with pytest.raises(ImportError_) as refused:
        import_llmbar(second, project, version="0.1")  # filed there by asking (below)

    message = str(refused.value)
    assert "would change the figures of Adversarial/GPTInst (princeton-nlp/LLMBar@900616bf)" in (
        message
    )
    assert "its item AGPT-001 would be replaced" in message and "Nothing was written" in message
    assert _items(project).read_text(encoding="utf-8") == before
    assert sorted(p.name for p in folder.iterdir()) == ["prefixes.toml"]


def test_a_set_of_another_release_by_the_same_name_is_refused(
    project: Path, tmp_path: Path
) -> None:
    """Another release (a fork) with an Adversarial/GPTInst of its own: its items would be
    scored with the shipped set's, in one category."""
    readme = "From someone/LLMBar, commit 1234567."
    second = _release(tmp_path / "fork", "Adversarial/GPTInst", readme=readme)

    with pytest.raises(ImportError_, match="would change the figures of Adversarial/GPTInst"):
        import_llmbar(second, project, version="0.1")  # filed there by asking (below)


def test_a_set_of_another_release_in_a_shipped_sets_category_is_refused(
    project: Path, tmp_path: Path
) -> None:
    """No README, other items, its own prefix: still scored in the shipped set's category."""
    second = _release(tmp_path / "otherbar", "Adversarial/GPTInst")
    for path in second.rglob("*.json"):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("Name a prime number.", "Name an odd number."))

    with pytest.raises(ImportError_, match="its category adversarial_gptinst would also hold"):
        import_llmbar(second, project, version="0.1")  # filed there by asking (below)


def test_a_second_release_is_never_filed_under_0_1_unasked(project: Path, tmp_path: Path) -> None:
    """Issue 47: a new release's first strategy went silently under 0.1, "LLMBar's Vanilla
    prompt by reference". Now it is refused, naming the two ways to import it."""
    second = _release(tmp_path / "otherbar", "Adversarial/GPTOut")
    before = _items(project).read_text(encoding="utf-8")
    with pytest.raises(ImportError_) as refused:
        import_llmbar(second, project)
    message = str(refused.value)
    assert "prompt 0.1 holds princeton-nlp/LLMBar@900616bf's outputs" in message
    assert "--benchmark" in message and "--prompt-version V" in message
    assert _items(project).read_text(encoding="utf-8") == before


def test_a_second_release_under_the_same_version_names_every_model_it_leaves_short(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second release filed under 0.1 beside the first adds items the first release's
    models never judged: the import names the model_items line of every model of the
    version, the first release's too, and with those lines every model replays exactly
    the items it has cassettes for (no "... does not exist" for the other release's)."""
    second = tmp_path / "otherbar"
    write_llmbar_set(second, "Natural", {"Other": GOOD["Good"]})
    (second / "LICENSE").write_text("MIT License\n", encoding="utf-8")

    code = main(
        ["import", "llmbar", str(second), "--root", str(project), "--prompt-version", "0.1"]
    )

    assert code == 0
    out = capsys.readouterr().out
    set_toml = project / "planted_sets" / "pairwise" / "set.toml"
    lines = {
        "imported:Good": '["adversarial_gptinst"]',
        "imported:Other": '["natural"]',
    }
    for model, sets in lines.items():
        assert (
            f'{model} has outputs for {sets[2:-2]} only: add "{model}" = {sets} to '
            f'[versions."0.1".model_items] in {set_toml}'
        ) in out, out
    # Followed as printed: every model judges the items its release gave it, and no other.
    entries = "".join(f'"{model}" = {sets}\n' for model, sets in lines.items())
    set_toml.write_text(
        f'[versions."0.1"]\nmodels = {json.dumps(sorted(lines))}\n\n'
        f'[versions."0.1".model_items]\n{entries}',
        encoding="utf-8",
    )
    spec = load_catalog()["pairwise"]
    planted = load_planted_set(project / "planted_sets", spec)
    cassettes = project / "cassettes"
    for model in lines:
        ref = ModelRef.parse(model)
        asked = planted.main_items("0.1", model)
        assert asked
        for item in asked:
            assert Case("pairwise", "0.1", ref, item.id, item.slug).cassette(cassettes).is_file()
