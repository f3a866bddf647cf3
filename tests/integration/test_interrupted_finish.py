"""An interrupt at the very end of a `--record` session, while its reports are built (the
statistics, the baseline replayed from its cassettes), loses no row: the session's rows are
on disk before anything slower starts, and the run says what it skipped and how to rebuild it.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from judges.core.spec import load_catalog

from ._support import ITEMS, JUDGE, FakeJudge, JudgesProject, sigint_at_default, versions

# The temp project's conftest makes report building slow, and says when it started.
SLOW_REPORTS = """
import pathlib
import time

import judges.reports.write as write

_build = write._build_set


def _slow(*args, **kwargs):
    pathlib.Path("building-reports").write_text("now", encoding="utf-8")
    time.sleep(120)
    return _build(*args, **kwargs)


write._build_set = _slow
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_an_interrupt_while_reports_are_built_keeps_every_row(
    project: JudgesProject, fake_judge: FakeJudge, signum: signal.Signals
) -> None:
    project.pytester.makeconftest(SLOW_REPORTS)
    marker = project.root / "building-reports"
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0"]
    argv += ["--record", "--judge-base-url", fake_judge.url, "-k", "test_planted_item"]
    process = subprocess.Popen(
        argv,
        cwd=project.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=sigint_at_default,
    )
    deadline = time.monotonic() + 120
    while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), process.communicate(timeout=60)[0]
    process.send_signal(signum)
    output, _ = process.communicate(timeout=60)

    assert process.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "Traceback" not in output, output
    judged = len(versions()) * len(ITEMS)
    assert len(fake_judge.calls) == judged
    rows = project.results()
    assert len(rows) == judged and all(row["status"] == "ok" for row in rows.values())
    assert not list((project.root / "reports").rglob("*.tmp*"))
    said = " ".join(output.split())
    why = "stopped by SIGTERM" if signum == signal.SIGTERM else "Ctrl-C"
    assert f"interrupted ({why}) at the end of the session: the session's rows are on disk" in said
    assert "the reports were not rebuilt: rebuild them with `python -m judges report`" in said
    folders = [project.root / "reports" / JUDGE / version for version in versions()]
    assert not any((folder / "report.md").exists() for folder in folders)  # skipped, as said

    # Nothing is partial: acceptance reads every row, and the hint rebuilds the reports.
    load_catalog.cache_clear()
    accepted = subprocess.run(
        [sys.executable, "-m", "judges", "baseline", JUDGE, "--accept", versions()[-1]],
        cwd=project.root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert "partial" not in accepted.stdout + accepted.stderr, accepted.stderr
    assert "lacks runs" not in accepted.stdout + accepted.stderr, accepted.stderr
    rebuilt = project.report()
    assert rebuilt.code == 0, rebuilt.err
    assert all((folder / "report.md").is_file() for folder in folders)
