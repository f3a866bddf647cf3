"""`python -m judges import`: LLMBar-style folders and plain JSONL, idempotent, replayable.

Every source here is a small folder written in tmp_path in LLMBar's layout; the project's
own import of LLMBar is checked through its replay in regression_tests/test_pairwise.py.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from judges.__main__ import main
from judges.calls import _vcr
from judges.calls.backends import BackendError, ModelRef, Price, make_backend
from judges.calls.cassettes import open_cassette
from judges.cli.importer import import_jsonl, import_llmbar
from judges.core.naming import Case
from judges.core.runner import Call, judge
from judges.core.spec import load_catalog
from judges.sets.imports import ImportError_, published_statistics
from judges.sets.planted import load_items
from tests._llmbar_release import write_llmbar_set


@pytest.fixture
def release(tmp_path: Path) -> Path:
    src = tmp_path / "release"
    write_llmbar_set(src, "Natural", {"Good": [("1", "1"), ("2", "2"), ("1", None)]})
    write_llmbar_set(
        src,
        "Adversarial/Neighbor",
        {
            "Good": [("1", "1"), ("2", "2"), ("1", "1")],
            "First": [("1", "2"), ("1", "2"), ("1", "2")],
        },
    )
    (src / "LICENSE").write_text("MIT License\n", encoding="utf-8")
    (src / "README.md").write_text(
        "From princeton-nlp/LLMBar, commit abcdef12.\n", encoding="utf-8"
    )
    return src


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_import_writes_items_licence_and_cassettes_and_is_idempotent(
    release: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    done = import_llmbar(release, project)
    assert (done.items, done.cassettes, done.models) == (6, 9, ("First", "Good"))
    first = _tree(project)
    again = import_llmbar(release, project)
    assert again.changed == 0 and _tree(project) == first  # not one byte changed
    folder = project / "planted_sets" / "pairwise"
    assert (folder / "releases" / "llmbar" / "LICENSE").read_text() == "MIT License\n"
    items = load_items(folder / "items.jsonl", load_catalog()["pairwise"])
    assert [i.id for i in items] == [
        "ANEI-001",
        "ANEI-002",
        "ANEI-003",
        "NATU-001",
        "NATU-002",
        "NATU-003",
    ]
    provenance = items[3].provenance
    assert (
        provenance.source,
        provenance.release,
        provenance.release_set,
        provenance.release_index,
    ) == ("imported", "princeton-nlp/LLMBar@abcdef12", "Natural", 0)
    assert published_statistics(
        project / "planted_sets", "princeton-nlp/LLMBar@abcdef12", "Vanilla", "natural", "Good"
    ) == json.loads((release / "Natural/evaluators/Good/Vanilla/statistics.json").read_text())


def test_imported_cassettes_replay_through_the_offline_path(release: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    import_llmbar(release, project)
    spec = load_catalog()["pairwise"]
    items = {i.id: i for i in load_items(project / "planted_sets/pairwise/items.jsonl", spec)}
    model = ModelRef.parse("imported:Good")
    backend = make_backend(model, live=False)
    verdicts = {}
    for item_id in ("NATU-001", "NATU-002", "NATU-003"):
        item = items[item_id]
        path = Case("pairwise", "0.1", model, item.id, item.slug).cassette(project / "cassettes")
        with open_cassette(path, model, record=False) as recorded:
            row = judge(
                spec,
                "0.1",
                item.subject(),
                Call(backend, Price(0, 0), live=False, is_fatal=_vcr.is_replay_miss),
            )
            fingerprint = _vcr.stored_fingerprint(recorded)
        verdicts[item_id] = (
            row.status,
            row.verdict["winner_original"],
            row.verdict["winner_swapped"],
        )
        assert fingerprint == {
            "backend": "imported",
            "model": "Good",
            "origin": "imported from a release, not recorded here",
            "source": "princeton-nlp/LLMBar@abcdef12",
            "strategy": "Vanilla",
        }
    # A reply without a winner is an explicit `incomplete` row that keeps the other order.
    assert verdicts == {
        "NATU-001": ("ok", "1", "1"),
        "NATU-002": ("ok", "2", "2"),
        "NATU-003": ("incomplete", "1", None),
    }


def test_imported_models_are_never_called_live() -> None:
    with pytest.raises(BackendError, match="imported from a release"):
        make_backend(ModelRef.parse("imported:GPT-4"), live=True)


def test_a_further_set_imports_without_renumbering(release: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    import_llmbar(release, project)
    before = (project / "planted_sets/pairwise/items.jsonl").read_text()
    write_llmbar_set(release, "Adversarial/Manual", {"Good": [("1", "1"), ("2", "2"), ("1", "1")]})
    done = import_llmbar(release, project)
    assert done.items == 9
    after = (project / "planted_sets/pairwise/items.jsonl").read_text()
    assert all(line in after for line in before.splitlines())
    assert '"category": "adversarial_manual"' in after and '"id": "AMAN-001"' in after


def test_plain_jsonl_imports_a_teams_own_decisions(release: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    import_llmbar(release, project)
    log = tmp_path / "decisions.jsonl"
    lines = [
        {"item": item, "order": order, "reply": "B is better", "winner": "2"}
        for item in ("NATU-001", "NATU-002")
        for order in ("original", "swapped")
    ]
    log.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    done = import_jsonl(log, project, model="our-judge", version="0.1", source="our logs 2026-11")
    assert (done.items, done.cassettes) == (2, 2)
    assert (
        import_jsonl(
            log, project, model="our-judge", version="0.1", source="our logs 2026-11"
        ).changed
        == 0
    )
    log.write_text(json.dumps(lines[0]) + "\n", encoding="utf-8")
    with pytest.raises(ImportError_, match="no reply in order"):
        import_jsonl(log, project, model="our-judge", version="0.1", source="x")


def test_bad_sources_are_refused_naming_the_file(release: Path, tmp_path: Path) -> None:
    result = release / "Natural/evaluators/Good/Vanilla/result.json"
    data = json.loads(result.read_text())
    data[1]["results"][-1]["swap = True"]["winner"] = "3"
    result.write_text(json.dumps(data))
    with pytest.raises(ImportError_, match=r"result.json item 1 swap = True: label '3'"):
        import_llmbar(release, tmp_path / "project")
    (release / "LICENSE").unlink()
    with pytest.raises(ImportError_, match="no LICENSE"):
        import_llmbar(release, tmp_path / "other")


def test_the_command_line(
    release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    assert main(["import", "llmbar", str(release), "--root", str(project)]) == 0
    out = capsys.readouterr().out
    assert (
        "6 items, 9 cassettes" in out
        and 'add imported:First, imported:Good to [versions."0.1"]' in out
    )
    assert main(["import", "jsonl", str(tmp_path / "absent.jsonl"), "--root", str(project)]) == 2
