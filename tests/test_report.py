"""Reports: files written, tables and intervals, failures, comparison, determinism, CLI.

Rows are built by hand; the judge `demo` and its planted set live in a temporary folder so
that no prompt edit elsewhere changes what these tests expect.
"""

from __future__ import annotations

import ast
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import judges.reports
from judges.cli.main import main
from judges.core.results import JudgementRow, Usage, read_jsonl, write_jsonl
from judges.core.spec import prompt_hash
from judges.reports import terminal
from judges.reports.model.metadata import RUN_FILE
from judges.reports.write import ReportSet, rebuild_reports, session_reports
from judges.stats.estimates.intervals import wilson
from judges.stats.regression.comparison import compare_versions
from tests._report_demo import AFTER, BEFORE, MODEL, RAW_MISS, folder, version_rows

FILES = {"results.jsonl", "report.md", "failures.md", "report.json", "index.html", ".run.json"}


def write_versions(demo: dict[str, Any], shuffle: int | None = None) -> None:
    for version, detection in (("1.0", BEFORE), ("1.1", AFTER)):
        rows = version_rows(version, detection)
        if shuffle is not None:
            random.Random(shuffle).shuffle(rows)
        write_jsonl(demo["reports"] / "demo" / version / "results.jsonl", rows)


def rebuild(demo: dict[str, Any]) -> ReportSet:
    return rebuild_reports(demo["reports"], demo["planted"], catalog=demo["catalog"])


def snapshot(demo: dict[str, Any]) -> dict[str, bytes]:
    """Every file of the reports folder but the git-ignored run metadata, as bytes."""
    files = sorted(p for p in demo["reports"].rglob("*") if p.is_file() and p.name != RUN_FILE)
    return {str(p.relative_to(demo["reports"])): p.read_bytes() for p in files}


# --------------------------------------------------------------------------- files


def test_every_report_file_is_written(demo: dict[str, Any]) -> None:
    write_versions(demo)
    rebuild(demo)
    assert {p.name for p in folder(demo, "1.0").iterdir()} == FILES
    assert {p.name for p in folder(demo, "1.1").iterdir()} == FILES | {"comparison.md"}
    assert not list(demo["reports"].rglob("*.tmp"))


def test_report_md_has_header_detection_with_intervals_and_n(demo: dict[str, Any]) -> None:
    write_versions(demo)
    rebuild(demo)
    text = (folder(demo, "1.1") / "report.md").read_text()
    spec = demo["catalog"]["demo"]
    template = prompt_hash(spec.config.system, spec.prompts["1.1"].templates)
    assert f"| Prompt hash | template {template}; 8 items, one rendered prompt each |" in text
    assert f"| Models | {MODEL} |" in text
    cousin = wilson(3, 4)
    assert f"| cousin | 3/4 | 0.75 | [{cousin.low:.2f}, {cousin.high:.2f}] | 4 | >= 0.50 |" in text
    # PE-08 failed in transport: it counts as a missed fabrication and in the error rate.
    fabrication = wilson(2, 3)
    assert f"| fabrication | 2/3 | 0.67 | [{fabrication.low:.2f}, {fabrication.high:.2f}]" in text
    assert "- Error rate (main run): 1/8 = 0.12" in text
    assert "- Control false-positive rate: 0/1 = 0.00" in text
    assert "| main | 7 | 1 | 8 |" in text
    assert "### Noise floor (run `noise`)" in text
    assert "| detection[fabrication] | 2/3 = 0.67" in text and "**FAIL**" in text
    assert "## Comparison with prompt 1.0" in text
    assert "| **local:smollm2-135m** | all | 11 | 11 | 2200 | 440 | 0.0165 |" in text
    # Nothing that differs between runs: the run metadata is in the git-ignored .run.json.
    assert "metadata" not in text.lower() and "Generated" not in text


def test_items_judged_under_another_prompt_are_flagged(demo: dict[str, Any]) -> None:
    rows = version_rows("1.1", AFTER)
    rows[-1] = rows[-1].model_copy(update={"prompt_hash": "edited-since"})  # a noise repeat
    write_jsonl(folder(demo, "1.1") / "results.jsonl", rows)
    rebuild(demo)
    text = (folder(demo, "1.1") / "report.md").read_text()
    assert "8 items, one rendered prompt each except 1 |" in text
    assert "**Items judged under more than one prompt: 1**" in text and "PE-05." in text


def test_report_json_carries_the_same_numbers(demo: dict[str, Any]) -> None:
    write_versions(demo)
    rebuild(demo)
    content = json.loads((folder(demo, "1.1") / "report.json").read_text())
    (model,) = content["models"]
    assert model["detection"]["cousin"] == wilson(3, 4).as_dict()
    assert model["gates"]["failed"] == 1
    assert model["comparison"]["mcnemar"]["b"] == 1
    assert "run" not in content and "generated_at" not in json.dumps(content)
    run = json.loads((folder(demo, "1.1") / RUN_FILE).read_text())
    assert set(run) == {"generated_at", "packages", "session_id", "durations_s", "source"}


def test_failures_md_lists_failed_items_with_raw_json(demo: dict[str, Any]) -> None:
    write_versions(demo)
    rebuild(demo)
    before = (folder(demo, "1.0") / "failures.md").read_text()
    assert "### PE-02 (cousin): missed, new failure" in before
    assert "- Expected: factual_accuracy <= 1" in before
    assert "factual_accuracy=3" in before
    assert f"```json\n{RAW_MISS}\n```" in before
    assert "### PE-08 (fabrication): error (transport), new failure" in before
    after = (folder(demo, "1.1") / "failures.md").read_text()
    assert (
        "### PE-01 (cousin): missed, accepted miss\n\n**Accepted miss** (expectations.toml): loses"
        in after
    )
    assert "PE-02" not in after


def test_comparison_flips_and_mcnemar_by_hand(demo: dict[str, Any]) -> None:
    before, after = version_rows("1.0", BEFORE), version_rows("1.1", AFTER)
    dims = demo["catalog"]["demo"].config.dimensions
    (comparison,) = compare_versions("demo", ("1.0", before), ("1.1", after), dims)
    # Defects (controls aside): PE-01 lost; PE-02, PE-03, PE-04, PE-06 gained; PE-05 and
    # PE-08 unchanged. Exact McNemar, b=1, c=4: p = 2 * P(X <= 1 | 5, 1/2) = 2 * 6/32.
    assert [f.item_id for f in comparison.caught_to_missed] == ["PE-01"]
    assert [f.item_id for f in comparison.missed_to_caught] == ["PE-02", "PE-03", "PE-04", "PE-06"]
    assert (comparison.mcnemar.b, comparison.mcnemar.c, comparison.mcnemar.n) == (1, 4, 7)
    assert comparison.mcnemar.p_value == pytest.approx(0.375)
    # One-sided mid-p, X ~ Bin(5, 1/2): worse P(X > 1) + P(X = 1) / 2 = (26 + 2.5) / 32,
    # better P(X > 4) + P(X = 4) / 2 = (1 + 2.5) / 32; neither below 0.05.
    assert comparison.midp_worse == pytest.approx(28.5 / 32)
    assert comparison.midp_better == pytest.approx(3.5 / 32)
    assert not comparison.significantly_worse and not comparison.significantly_better
    assert comparison.n_pairs == 8
    # factual_accuracy is 1 when met, 3 when missed: mean over the answered pairs of each
    # side; the six answered defects apart from the one control.
    changes = {(c.dimension, c.side): c for c in comparison.dimensions}
    accuracy = changes["factual_accuracy", "planted defects"]
    assert accuracy.change.n == 6
    assert accuracy.mean_before == pytest.approx((1 + 3 + 3 + 3 + 1 + 3) / 6)
    assert accuracy.mean_after == pytest.approx((3 + 1 + 1 + 1 + 1 + 1) / 6)
    assert accuracy.change.value == pytest.approx(-1.0)
    assert accuracy.good is True  # lower on planted defects: the judge marks them down
    control = changes["factual_accuracy", "controls"]
    assert (control.change.n, control.change.value, control.good) == (1, 0.0, None)


def test_comparison_md_is_written_in_the_newer_folder(demo: dict[str, Any]) -> None:
    write_versions(demo)
    rebuild(demo)
    text = (folder(demo, "1.1") / "comparison.md").read_text()
    assert "prompt 1.0 -> 1.1" in text
    flips = "1 caught -> missed, 4 missed -> caught"
    assert f"{flips}; two-sided McNemar exact p = 0.3750 (n = 7)" in text
    assert "| PE-01 | cousin | caught | missed | **lost** |" in text
    assert "| factual_accuracy | planted defects | 2.33 | 1.33 | -1.00 [" in text


# --------------------------------------------------------------------------- determinism


def test_rebuilding_gives_the_same_bytes(demo: dict[str, Any]) -> None:
    write_versions(demo)
    rebuild(demo)
    first = snapshot(demo)
    write_versions(demo, shuffle=7)  # rows arrive in another order
    rebuild(demo)
    second = snapshot(demo)
    assert first == second
    assert "latency" not in (folder(demo, "1.1") / "results.jsonl").read_text()


def session(demo: dict[str, Any], rows: list[JudgementRow], session_id: str) -> ReportSet:
    """The reports of a session that judged `rows`, as the plugin builds them (unwritten)."""
    return session_reports(
        rows, demo["reports"], demo["planted"], demo["catalog"], session_id=session_id
    )


def test_sessions_in_any_order_and_partial_runs_give_the_same_reports(
    demo: dict[str, Any], tmp_path: Path
) -> None:
    rows = version_rows("1.0", BEFORE) + version_rows("1.1", AFTER)
    one = session(demo, rows, "one").write()
    whole = snapshot(demo)
    assert "index.html" in whole  # the overview of every version, from the same run

    # Again from scratch: rows as xdist workers deliver them, then a `-k` re-run of one item.
    for path in demo["reports"].rglob("*"):
        if path.is_file():
            path.unlink()
    shuffled = rows[:]
    random.Random(3).shuffle(shuffled)
    session(demo, shuffled, "two").write()
    partial = [r for r in rows if r.item_id == "PE-02" and r.prompt_version == "1.0"]
    again = session(demo, partial, "three").write()
    assert snapshot(demo) == whole
    assert again.changed == ()  # a replay of unchanged rows rewrites no byte
    assert len(read_jsonl(folder(demo, "1.0") / "results.jsonl")) == 11
    rebuild(demo)  # as `python -m judges report` does, without a session
    assert snapshot(demo) == whole

    usage = {MODEL: Usage(calls=22, input_tokens=4400, output_tokens=880, cost_usd=0.033)}
    lines = terminal.session_lines(rows, usage, {}, None) + terminal.report_lines(one)
    assert lines[0] == "22 judgements: 20 ok, 2 transport"
    assert lines[1] == f"{MODEL}: 22 calls, 4400 input + 880 output tokens, $0.0330"
    assert f"demo 1.1 on {MODEL}: detection 5/7 = 0.71" in "\n".join(lines)
    assert any("gates 3 passed, 1 failed" in line for line in lines)
    assert any(line.startswith("report: ") and line.endswith("failures.md)") for line in lines)
    assert "run session id: one" in lines


def test_only_the_run_file_records_the_session(demo: dict[str, Any]) -> None:
    session(demo, version_rows("1.0", BEFORE), "session-abc").write()
    for path in folder(demo, "1.0").iterdir():
        if path.name != RUN_FILE:
            assert "session-abc" not in path.read_text()
    assert json.loads((folder(demo, "1.0") / RUN_FILE).read_text())["session_id"] == "session-abc"


def test_check_names_each_differing_file_and_writes_nothing(demo: dict[str, Any]) -> None:
    rows = version_rows("1.0", BEFORE) + version_rows("1.1", AFTER)
    fresh = session(demo, rows, "zero").check()
    assert set(fresh.differing) == set(fresh.files)  # nothing on disk yet
    assert not demo["reports"].exists() or not any(demo["reports"].rglob("*"))
    session(demo, rows, "one").write()
    assert session(demo, rows, "two").check().differing == ()
    edited = folder(demo, "1.1") / "report.md"
    edited.write_bytes(edited.read_bytes().replace(b"| Judge | demo |", b"| Judge | Demo |"))
    (folder(demo, "1.0") / "comparison.md").write_text("no longer due")
    before = snapshot(demo)
    checked = session(demo, rows, "three").check()
    assert set(checked.differing) == {edited, folder(demo, "1.0") / "comparison.md"}
    assert snapshot(demo) == before  # the check wrote nothing
    (line, *_) = [line for line in terminal.check_lines(checked) if "1.1" in line]
    assert line.endswith(
        "1.1/report.md differs from what the cassettes produce; run "
        "`python -m pytest regression_tests` and commit the result"
    )
    # Rows that changed (a re-recorded cassette) make the results file differ too.
    changed = [r.model_copy(update={"error": "new"}) if r.item_id == "PE-08" else r for r in rows]
    assert folder(demo, "1.0") / "results.jsonl" in session(demo, changed, "four").check().differing


# --------------------------------------------------------------------------- command line


def real_judge_rows(reports: Path) -> None:
    """Rows of the catalog's product_identity judge, for the command line's own catalog."""
    for version, detection in (("0.3", BEFORE), ("0.3.1", AFTER)):
        rows = version_rows(version, detection, judge="product_identity")
        write_jsonl(reports / "product_identity" / version / "results.jsonl", rows)


def test_cli_rebuilds_from_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reports = tmp_path / "reports"
    real_judge_rows(reports)
    args = ["report", "--reports", str(reports), "--planted-sets", str(tmp_path / "none")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "product_identity 0.3.1 on local:smollm2-135m: detection 5/7" in out
    first = (reports / "product_identity" / "0.3.1" / "report.md").read_text()
    (reports / "product_identity" / "0.3.1" / "report.md").unlink()
    assert main([*args, "--judge", "product_identity"]) == 0
    again = (reports / "product_identity" / "0.3.1" / "report.md").read_text()
    assert again == first
    assert (reports / "product_identity" / "0.3.1" / "index.html").is_file()


def test_cli_check_fails_on_a_hand_edited_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    real_judge_rows(reports)
    args = ["report", "--reports", str(reports), "--planted-sets", str(tmp_path / "none")]
    assert main(args) == 0
    assert main([*args, "--check"]) == 0
    assert "report check: " in capsys.readouterr().out
    edited = reports / "product_identity" / "0.3" / "failures.md"
    edited.write_text(edited.read_text() + "a hand edit\n")
    assert main([*args, "--check"]) == 1
    err = capsys.readouterr().err
    assert f"{edited} differs from what the results files produce" in err
    assert "run `python -m judges report` and commit the result" in err
    assert edited.read_text().endswith("a hand edit\n")  # --check writes nothing


def test_cli_compare_prints_the_paired_comparison(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    real_judge_rows(reports)
    args = ["report", "--reports", str(reports), "--judge", "product_identity"]
    assert main([*args, "--compare", "0.3", "0.3.1"]) == 0
    out = capsys.readouterr().out
    assert "prompt 0.3 -> 0.3.1" in out
    assert "two-sided McNemar exact p = 0.3750 (n = 7)" in out
    assert "| PE-01 | cousin | caught | missed | **lost** |" in out
    assert "| factual_accuracy | planted defects | 2.33 | 1.33 | -1.00 [" in out
    assert not (reports / "product_identity" / "0.3.1" / "report.md").exists()


def test_cli_missing_results_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--reports", str(tmp_path / "reports")]) == 2
    err = capsys.readouterr().err
    assert "results.jsonl" in err and "run `pytest` first" in err
    real_judge_rows(tmp_path / "reports")
    compare = ["--judge", "product_identity", "--compare", "0.2", "0.3.1"]
    assert main(["report", "--reports", str(tmp_path / "reports"), *compare]) == 2
    assert str(tmp_path / "reports" / "product_identity" / "0.2" / "results.jsonl") in (
        capsys.readouterr().err
    )


def test_cli_compare_of_a_version_the_judge_lacks_names_its_versions_and_no_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A `-k product_identity-0.9` hint would deselect every test and still start a judge.
    reports = tmp_path / "reports"
    real_judge_rows(reports)
    compare = ["--judge", "product_identity", "--compare", "0.3", "0.9"]

    assert main(["report", "--reports", str(reports), *compare]) == 2

    err = capsys.readouterr().err
    assert "product_identity has no prompt version 0.9 (its versions: 0.2, 0.3, 0.3.1;" in err
    assert "-k" not in err and "pytest" not in err.removeprefix("python -m judges report")


def test_cli_help_documents_report(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "report" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    out = capsys.readouterr().out
    assert "--compare A B" in out and "--planted-sets" in out


REPORTS = Path(judges.reports.__file__).parent
REPORT_MODULES = sorted(
    ".".join(("judges.reports", *p.relative_to(REPORTS).with_suffix("").parts))
    for p in REPORTS.rglob("[!_]*.py")
)


# One interpreter loads the third-party libraries once, then forks a child per module: each
# child imports its module alone (no other judges module loaded) and reports what it pulled
# in. A fresh interpreter per module would cost about a second each.
IMPORT_ALONE = """
import importlib, os, sys
import numpy, pydantic, scipy.stats, yaml  # third-party only: no judges module yet
failures = []
for module in sys.argv[1:]:
    pid = os.fork()
    if pid == 0:
        try:
            importlib.import_module(module)
        except BaseException as error:
            print(f"{module}: {error!r}", file=sys.stderr)
            os._exit(1)
        found = sorted(m for m in ("pytest", "_pytest", "vcr") if m in sys.modules)
        if found:
            print(f"{module} imported {found}", file=sys.stderr)
        os._exit(1 if found else 0)
    if os.waitpid(pid, 0)[1] != 0:
        failures.append(module)
sys.exit(f"not importable alone without pytest or vcr: {failures}" if failures else 0)
"""


def test_each_report_module_imports_alone_without_pytest_or_vcr() -> None:
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_ALONE, *REPORT_MODULES], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert len(REPORT_MODULES) >= 15


def test_the_import_check_fails_on_a_module_that_imports_pytest(tmp_path: Path) -> None:
    (tmp_path / "leaky.py").write_text("import pytest\n")
    (tmp_path / "clean.py").write_text("import json\n")
    environment = os.environ | {"PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_ALONE, "clean", "leaky"],
        capture_output=True, text=True, env=environment,
    )  # fmt: skip
    assert done.returncode != 0
    assert "leaky imported ['_pytest', 'pytest']" in done.stderr
    assert "['leaky']" in done.stderr


def _module_imports(path: Path) -> set[str]:
    """The judges modules a module imports when it is loaded (not inside functions)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("judges.")}


def test_the_renderers_read_the_model_and_not_each_other() -> None:
    # The package-wide rules (no cycle, no pytest in the core) are in test_layout.py.
    renderers = REPORTS / "render"
    markdown = _module_imports(renderers / "markdown.py")
    html = _module_imports(renderers / "html.py") | _module_imports(renderers / "charts.py")
    assert "judges.reports.model.data" in markdown and "judges.reports.model.data" in html
    assert not markdown & {"judges.reports.render.html", "judges.reports.render.charts"}
    assert "judges.reports.render.markdown" not in html
