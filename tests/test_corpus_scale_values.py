"""A corpus scale's values are checked where corpus.toml is read, the file and key named:
a midpoint or flag outside the scale, a step wider than it, and any NaN or Infinity would
otherwise change or drop verdicts in silence (a midpoint of 5 on [0, 1] made every
judgement a win; `midpoint = nan` dropped every one; `factor = inf` overflowed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judges.corpus.manifest import CorpusError, load_manifest

HEAD = 'name = "c"\nsource = "s"\nlicence = "unknown"\n\n[judges.j]\n\n'


def _manifest(folder: Path, scale: str, compare: str = "") -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "corpus.toml").write_text(f"{HEAD}[scale]\nlow = 0\nhigh = 1\n{scale}\n{compare}")
    return folder


@pytest.mark.parametrize(
    ("scale", "named"),
    [
        ('verdict = "side"\nmidpoint = 5', "midpoint = 5 is not inside the scale [0, 1]"),
        ('verdict = "side"\nmidpoint = 0', "midpoint = 0 is not inside the scale [0, 1]"),
        ('verdict = "side"\nmidpoint = nan', "scale.midpoint: Input should be a finite number"),
        ("step = 2", "step = 2 is wider than the scale [0, 1]"),
        ("step = inf", "scale.step: Input should be a finite number"),
        ("step = 0.5\nfactor = inf", "scale.factor: Input should be a finite number"),
        ("step = 0.5\nfactor = 1e300", "scale.factor: Input should be less than or equal"),
        ("step = 0.5\nflag_below = nan", "scale.flag_below: Input should be a finite number"),
        ("step = 0.5\nflag_below = 0", "flag_below = 0 flags no score or every score"),
        ("step = 0.5\nflag_below = 7", "flag_below = 7 flags no score or every score"),
    ],
)
def test_a_scale_value_that_would_change_verdicts_is_refused(
    tmp_path: Path, scale: str, named: str
) -> None:
    folder = _manifest(tmp_path / "c", scale)
    with pytest.raises(CorpusError) as refused:
        load_manifest(folder)
    assert str(folder / "corpus.toml") in str(refused.value)
    assert named in str(refused.value)


def test_an_infinite_contested_margin_is_refused(tmp_path: Path) -> None:
    folder = _manifest(tmp_path / "c", "step = 0.5", "[compare]\ncontested_margin = inf\n")
    with pytest.raises(CorpusError, match=r"compare\.contested_margin: Input should be a finite"):
        load_manifest(folder)


def test_a_sound_scale_is_read(tmp_path: Path) -> None:
    folder = _manifest(tmp_path / "c", 'verdict = "side"\nmidpoint = 0.5\nflag_below = 0.25')
    scale = load_manifest(folder).scale
    assert (scale.midpoint, scale.flag_below) == (0.5, 0.25)
