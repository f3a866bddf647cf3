"""accepted.toml with its cassettes: written, read back, and refused when edited by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from judges.core.spec import load_judge
from judges.sets.folder import PINNED_CASSETTES_FILE as MANIFEST_FILE
from judges.sets.folder import PINS_FILE
from judges.sets.items import PlantedSetError
from judges.sets.pins import load_pins, note_rerecorded, write_pins

MODEL = "local:m"


def make_judge(parent: Path) -> Path:
    """A judge `demo` with one prompt version, 1.0, of two lines."""
    root = parent / "demo"
    root.mkdir()
    (root / "judge.toml").write_text(
        'name = "demo"\nmodule = "judges.builtin.geval"\nbaseline_model = "local:m"\n'
    )
    (root / "1.0.md").write_text("Rate {{summary}} against {{ transcript }}.\nBe brief.\n")
    return root


def _recorded(cassettes: Path, name: str, text: str) -> Path:
    path = cassettes / "demo" / "1.0" / "local-m" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    spec = load_judge(make_judge(tmp_path))
    cassettes = tmp_path / "cassettes"
    _recorded(cassettes, "A-01.yaml", "one")
    _recorded(cassettes, "retest/A-01.yaml", "two")
    planted = tmp_path / "planted" / "demo"
    planted.mkdir(parents=True)
    write_pins(planted, spec, [(MODEL, "1.0")], "2026-12-02", cassettes, tmp_path / "reports")
    return planted


def test_a_pin_holds_every_cassette_of_the_accepted_recording(folder: Path) -> None:
    pin = load_pins(folder)[(MODEL, "1.0")]
    assert sorted(pin.cassettes or {}) == [
        "demo/1.0/local-m/A-01.yaml",
        "demo/1.0/local-m/retest/A-01.yaml",
    ]
    text = (folder / PINS_FILE).read_text(encoding="utf-8")
    assert 'cassettes = { files = 2, sha256 = "' in text
    listing = (folder / MANIFEST_FILE).read_text(encoding="utf-8")
    assert f"{(pin.cassettes or {})['demo/1.0/local-m/A-01.yaml']}  demo/1.0/local-m/A-01.yaml" in (
        listing
    )


def test_accepting_again_keeps_the_pins_date_and_its_rerecording_note(
    folder: Path, tmp_path: Path
) -> None:
    note_rerecorded(folder, MODEL, "1.0", "2026-12-03 with --rerecord-baseline: same")
    spec = load_judge(tmp_path / "demo")
    write_pins(folder, spec, [(MODEL, "1.0")], "2026-12-09", tmp_path / "cassettes")
    pin = load_pins(folder)[(MODEL, "1.0")]
    assert pin.pinned == "2026-12-02" and pin.rerecorded.startswith("2026-12-03")


def test_a_cassette_list_edited_by_hand_is_named_with_both_files(folder: Path) -> None:
    manifest = folder / MANIFEST_FILE
    lines = manifest.read_text(encoding="utf-8").splitlines(keepends=True)
    manifest.write_text("".join(lines[:-1]), encoding="utf-8")  # one cassette unpinned
    with pytest.raises(PlantedSetError) as refused:
        load_pins(folder)
    message = str(refused.value)
    assert f"{folder / PINS_FILE}:" in message and str(manifest) in message
    assert "pins 2 cassettes" in message and "the 1 listed" in message


def test_a_templates_own_text_is_its_lines_without_placeholders(tmp_path: Path) -> None:
    spec = load_judge(make_judge(tmp_path))
    assert spec.prompts["1.0"].literal_lines(None) == ["Rate", "against", ".", "Be brief."]
