"""The scaffolded workflow installs the harness from where it was installed, pinned."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from judges.cli.harness_source import (
    PLACEHOLDER,
    HarnessSource,
    harness_source,
    source_from_direct_url,
)
from judges.cli.init import scaffold

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def clone(tmp_path: Path, remote: str | None) -> Path:
    folder = tmp_path / "judges-clone"
    folder.mkdir()
    git(folder, "init", "-q")
    (folder / "README.md").write_text("harness\n")
    git(folder, "add", "README.md")
    git(folder, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "x")
    if remote is not None:
        git(folder, "remote", "add", "origin", remote)
    return folder


def record(url: str, **extra: object) -> str:
    return json.dumps({"url": url, **extra})


def test_a_git_install_is_pinned_to_its_commit() -> None:
    text = record("https://example.com/o/judges", vcs_info={"vcs": "git", "commit_id": COMMIT})
    source = source_from_direct_url(text)
    assert source == HarnessSource(f"pytest-judges @ git+https://example.com/o/judges@{COMMIT}")
    assert source.usable


def test_an_archive_url_is_kept_as_it_is() -> None:
    source = source_from_direct_url(record("https://example.com/judges-0.1.0.tar.gz"))
    assert source.requirement == "pytest-judges @ https://example.com/judges-0.1.0.tar.gz"


@pytest.mark.parametrize(
    ("remote", "expected"),
    [
        ("https://example.com/o/judges.git", "git+https://example.com/o/judges.git"),
        ("git@example.com:o/judges.git", "git+ssh://git@example.com/o/judges.git"),
    ],
)
def test_a_clone_with_a_network_remote_is_pinned_to_its_head(
    tmp_path: Path, remote: str, expected: str
) -> None:
    folder = clone(tmp_path, remote)
    head = git(folder, "rev-parse", "HEAD")
    source = source_from_direct_url(record(folder.as_uri(), dir_info={"editable": True}))
    assert source == HarnessSource(f"pytest-judges @ {expected}@{head}")


@pytest.mark.parametrize("remote", [None, "/srv/judges", "file:///srv/judges"])
def test_a_clone_ci_cannot_reach_gives_a_placeholder_and_says_why(
    tmp_path: Path, remote: str | None
) -> None:
    folder = clone(tmp_path, remote)
    source = source_from_direct_url(record(folder.as_uri(), dir_info={"editable": True}))
    assert source.requirement == PLACEHOLDER and not source.usable
    assert str(folder) in source.problem


@pytest.mark.parametrize("text", ["", "{", "[]", '{"dir_info": {}}', "null"])
def test_an_unreadable_record_gives_a_placeholder(text: str) -> None:
    source = source_from_direct_url(text)
    assert source.requirement == PLACEHOLDER
    assert "direct_url.json" in source.problem


def test_this_installation_has_a_source() -> None:
    # Whatever it is (a clone, an index, a git URL), it names the distribution.
    assert harness_source().requirement.startswith("pytest-judges")


def install_step(project: Path) -> str:
    workflow = yaml.safe_load((project / ".github" / "workflows" / "judges.yml").read_text())
    (job,) = workflow["jobs"].values()
    (step,) = [step for step in job["steps"] if step.get("name") == "Install"]
    return step["run"]


def test_the_scaffolded_workflow_installs_the_given_source(tmp_path: Path) -> None:
    source = HarnessSource(f"pytest-judges @ git+https://example.com/o/judges@{COMMIT}")
    done = scaffold(tmp_path, "support_reply", "local:smollm2-135m", harness=source)
    assert install_step(tmp_path) == f'python -m pip install "{source.requirement}"'
    assert not any("workflows" in line for line in done.advice)


def test_a_placeholder_in_the_workflow_is_named_with_the_fix(tmp_path: Path) -> None:
    source = HarnessSource(PLACEHOLDER, "it was installed from /x, which is not a git clone")
    done = scaffold(tmp_path, "support_reply", "local:smollm2-135m", harness=source)
    assert PLACEHOLDER in install_step(tmp_path)
    (advice,) = [line for line in done.advice if "workflows/judges.yml" in line]
    assert "not a git clone" in advice and "git+https://HOST/OWNER/judges@COMMIT" in advice
