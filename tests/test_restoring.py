"""A restore hint fits the project: `git checkout --` only for a file git tracks."""

from __future__ import annotations

import subprocess
from pathlib import Path

from judges.storage.restoring import restore_hint, tracked


def test_git_is_named_only_for_a_file_it_tracks(tmp_path: Path) -> None:
    prompt = tmp_path / "prompts" / "1.0.md"
    prompt.parent.mkdir()
    prompt.write_text("Rate it.\n")
    assert not tracked(prompt)  # no repository at all
    assert restore_hint([prompt], "undo the edit") == (
        f"undo the edit (git does not track {prompt}, so `git checkout` cannot restore it)"
    )

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert not tracked(prompt)  # a repository, nothing added yet
    subprocess.run(["git", "-C", str(tmp_path), "add", str(prompt)], check=True)
    assert tracked(prompt)
    assert restore_hint([prompt], "undo the edit") == f"git checkout -- {prompt}"

    other = tmp_path / "gates.toml"
    other.write_text("")
    assert "git does not track" in restore_hint([prompt, other], "accept it again")
    prompt.unlink()  # a tracked file that is gone is restored by git as well
    assert tracked(prompt)
