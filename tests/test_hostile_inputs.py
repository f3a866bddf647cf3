"""Input a careless teammate or an attacker hands the harness: a JSON key given twice, a
name too long for a path, markup in what a report quotes. Each is refused with its file and
line, bounded with the option and the limit, or escaped."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judges.calls.backends import MAX_MODEL_NAME_BYTES, BackendError, ModelRef
from judges.core.quoting import md_cell, md_prose, md_text
from judges.core.results import JudgementRow, write_jsonl
from judges.core.spec import (
    MAX_JUDGE_NAME,
    MAX_VERSION,
    PROMPTS_ROOT,
    JudgeConfig,
    SpecError,
    load_catalog,
    load_judge,
)
from judges.finale.config import FinaleError, load_candidates, load_episodes
from judges.reports.write import rebuild_reports
from judges.sets.imports import ImportError_, read_jsonl
from judges.sets.items import PlantedSetError
from judges.sets.planted import load_items
from judges.sets.reading_list import load_reading_list
from judges.sets.set_config import SetConfig
from judges.sets.sme import SmeLabelError, load_sme_labels
from judges.storage.files import DuplicateKey, strict_json_loads
from judges.verdicts.estimate import EstimateError, read_outputs
from tests._report_demo import AFTER, BEFORE, folder, version_rows

ROOT = Path(__file__).resolve().parents[1]
PLANTED = ROOT / "planted_sets"


def _first_line(path: Path, containing: str) -> str:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(line for line in lines if containing in line)


def _items_with_a_doubled_control(tmp_path: Path) -> Path:
    """Two good items, the second a defect whose line also says `"control": true`."""
    source = PLANTED / "product_identity" / "items.jsonl"
    control = _first_line(source, '"control": true')
    defect = _first_line(source, '"control": false')
    doubled = defect.replace('"control": false', '"control": false, "control": true', 1)
    path = tmp_path / "items.jsonl"
    path.write_text(f"{control}\n{doubled}\n", encoding="utf-8")
    return path


def test_a_key_given_twice_in_an_items_line_is_refused_with_file_line_and_key(
    tmp_path: Path,
) -> None:
    path = _items_with_a_doubled_control(tmp_path)
    with pytest.raises(PlantedSetError) as caught:
        load_items(path, load_catalog()["product_identity"])
    message = str(caught.value)
    assert f"{path}:2:" in message and "'control'" in message and "twice" in message


def test_strict_json_names_the_line_of_the_object_holding_the_doubled_key() -> None:
    text = '{\n  "a": 1,\n  "b": {\n    "c": 1,\n    "c": 2\n  }\n}'
    with pytest.raises(DuplicateKey) as caught:
        strict_json_loads(text)
    assert (caught.value.key, caught.value.line) == ("c", 3)
    assert json.loads(text) == strict_json_loads(text.replace('"c": 2', '"d": 2')) | {"b": {"c": 2}}


def _sme(tmp_path: Path) -> Callable[[], object]:
    line = _first_line(PLANTED / "sme" / "product_identity.jsonl", '"item_id"')
    path = tmp_path / "labels.jsonl"
    path.write_text(line.replace('"labeller"', '"item_id": "PE-02", "labeller"', 1) + "\n")
    return lambda: load_sme_labels(path)


def _reading_list(tmp_path: Path) -> Callable[[], object]:
    text = (PLANTED / "relevance" / "reading_list.json").read_text(encoding="utf-8")
    path = tmp_path / "reading_list.json"
    path.write_text(text.replace('"label":', '"label": 0, "label":', 1), encoding="utf-8")
    return lambda: load_reading_list(path)


def _outputs(tmp_path: Path) -> Callable[[], object]:
    path = tmp_path / "outputs.jsonl"
    path.write_text('{"score": 1}\n{"score": 1, "score": 3}\n', encoding="utf-8")
    return lambda: read_outputs(path)


def _imported(tmp_path: Path) -> Callable[[], object]:
    path = tmp_path / "decisions.jsonl"
    path.write_text('{"item": "X-01", "order": "ab", "winner": 1, "winner": 2}\n')
    return lambda: read_jsonl(path, "imported:team", {"X-01"})


def _episodes(tmp_path: Path) -> Callable[[], object]:
    path = tmp_path / "episodes.jsonl"
    path.write_text('{"episode_id": "e1", "transcript": "t", "transcript": "u"}\n')
    return lambda: load_episodes(path)


def _metrics(tmp_path: Path) -> Callable[[], object]:
    (tmp_path / "run-a").mkdir()
    (tmp_path / "run-a" / "metrics.json").write_text('{\n"score": 0.1,\n"score": 0.9\n}\n')
    return lambda: load_candidates(tmp_path)


@pytest.mark.parametrize(
    ("make", "error", "where"),
    [
        pytest.param(_sme, SmeLabelError, "labels.jsonl:1:", id="sme-labels"),
        pytest.param(_reading_list, PlantedSetError, "reading_list.json:", id="reading-list"),
        pytest.param(_outputs, EstimateError, "outputs.jsonl:2:", id="outputs"),
        pytest.param(_imported, ImportError_, "decisions.jsonl:1:", id="import"),
        pytest.param(_episodes, FinaleError, "episodes.jsonl:1:", id="finale-episodes"),
        pytest.param(_metrics, FinaleError, "metrics.json:1:", id="finale-metrics"),
    ],
)
def test_every_json_file_read_from_a_user_refuses_a_doubled_key(
    tmp_path: Path, make: Callable[[Path], Callable[[], object]], error: type, where: str
) -> None:
    load = make(tmp_path)
    with pytest.raises(error) as caught:
        load()
    assert where in str(caught.value) and "twice" in str(caught.value)


LONG_MODEL = "local:" + "x" * 3000


def test_a_model_name_too_long_for_a_folder_is_refused_naming_the_limit() -> None:
    with pytest.raises(BackendError) as caught:
        ModelRef.parse(LONG_MODEL)
    message = str(caught.value)
    assert str(MAX_MODEL_NAME_BYTES) in message and "3000 bytes" in message
    assert len(message) < 400  # the message quotes the name cut short
    with pytest.raises(BackendError, match="control characters"):
        ModelRef.parse("local:a\nb")
    assert ModelRef.parse("local:" + "é" * 64).slug  # 128 bytes: the limit itself is allowed


def test_a_too_long_judge_model_option_is_a_usage_error_before_any_test() -> None:
    """`--judge-model local:` and 3,000 characters: one usage error, not an OSError per test."""
    command = [sys.executable, "-m", "pytest", "-p", "no:xdist", "-q", "regression_tests"]
    done = subprocess.run(
        [*command, "--co", "--judge-model", LONG_MODEL],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, output[-2000:]
    assert "--judge-model" in output and f"limit of {MAX_MODEL_NAME_BYTES}" in output
    assert "Traceback" not in output and "File name too long" not in output


def _judge_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "product_identity"
    shutil.copytree(PROMPTS_ROOT / "product_identity", folder)
    return folder


def test_a_judge_name_a_version_and_a_baseline_model_are_bounded(tmp_path: Path) -> None:
    folder = _judge_copy(tmp_path)
    toml = folder / "judge.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text.replace('"local:smollm2-135m"', f'"{LONG_MODEL}"', 1), encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_judge(folder)
    assert "judge.toml" in str(caught.value) and "baseline_model" in str(caught.value)
    toml.write_text(text, encoding="utf-8")
    long_version = ".".join(["1"] * 20)  # 39 characters, over MAX_VERSION
    shutil.copy(folder / "0.3.md", folder / f"{long_version}.md")
    with pytest.raises(SpecError, match=f"at most {MAX_VERSION} characters"):
        load_judge(folder)
    data = tomllib.loads(text) | {"name": "j" * (MAX_JUDGE_NAME + 1)}
    with pytest.raises(ValueError, match=str(MAX_JUDGE_NAME)):
        JudgeConfig.model_validate(data)


def test_set_toml_models_are_bounded() -> None:
    with pytest.raises(ValueError, match=f"limit of {MAX_MODEL_NAME_BYTES}"):
        SetConfig.model_validate({"versions": {"0.3": {"models": [LONG_MODEL]}}})
    with pytest.raises(ValueError, match=f"limit of {MAX_MODEL_NAME_BYTES}"):
        SetConfig.model_validate({"panel": {"model": LONG_MODEL, "label": "x"}})


def test_finale_ids_and_runs_that_name_cassettes_are_bounded(tmp_path: Path) -> None:
    episodes = tmp_path / "episodes.jsonl"
    episodes.write_text(json.dumps({"episode_id": "e" * 81, "transcript": "t"}) + "\n")
    with pytest.raises(FinaleError, match=r"episodes\.jsonl:1: episode_id is 81 characters"):
        load_episodes(episodes)
    run = tmp_path / "candidates" / ("r" * 81)
    run.mkdir(parents=True)
    (run / "metrics.json").write_text('{"score": 1}')
    with pytest.raises(FinaleError, match="at most 80 characters"):
        load_candidates(tmp_path / "candidates")


HOSTILE = "m<script>alert(1)</script>|</table>&amp;"


def _hostile_rows(version: str, detection: dict[str, bool]) -> list[JudgementRow]:
    """The demo judge's rows, with markup in what a judge and a server said of themselves."""
    rows = []
    for row in version_rows(version, detection):
        fingerprint = {"backend": "local", "model": "m", "response_model": HOSTILE}
        changes: dict[str, Any] = {"fingerprint": fingerprint}
        if row.verdict is not None:
            changes["verdict"] = {**row.verdict, "rationale": f"<b>{row.item_id}</b> {HOSTILE}"}
        else:
            changes["error"] = f"server said {HOSTILE}"
        rows.append(row.model_copy(update=changes))
    return rows


def test_markdown_reports_escape_the_markup_they_quote(demo: dict[str, Any]) -> None:
    for version, detection in (("1.0", BEFORE), ("1.1", AFTER)):
        write_jsonl(folder(demo, version) / "results.jsonl", _hostile_rows(version, detection))
    rebuild_reports(demo["reports"], demo["planted"], catalog=demo["catalog"])
    pages = {
        name: (folder(demo, "1.1") / name).read_text(encoding="utf-8")
        for name in ("report.md", "comparison.md")
    }
    pages["failures.md"] = (folder(demo, "1.0") / "failures.md").read_text(encoding="utf-8")
    for name, text in pages.items():
        outside_fences = re.sub(r"(?ms)^(`{3,})json$.*?^\1$", "", text)
        for tag in ("<script", "</script", "</table", "<b>"):
            assert tag not in outside_fences, f"{name} quotes {tag!r} raw"
        assert "&lt;script&gt;" in outside_fences, name
    fingerprint_rows = [
        line for line in pages["report.md"].splitlines() if line.startswith("| Judge fingerprint")
    ]
    assert fingerprint_rows and all(
        len(re.findall(r"(?<!\\)\|", line)) == 3 for line in fingerprint_rows
    )
    assert '- Rationale: "&lt;b&gt;PE-02&lt;/b&gt;' in pages["failures.md"]
    assert "server said m&lt;script&gt;" in pages["failures.md"]
    assert "- Expected: factual_accuracy <= 1" in pages["failures.md"]  # the harness's own op


def test_md_escapes_keep_the_harness_prose_and_fences() -> None:
    assert md_text("a<b>&c\nd") == "a&lt;b&gt;&amp;c d"
    assert md_cell("x | y\nz <i>") == "x \\| y z &lt;i&gt;"
    assert md_prose("mid-p < 0.05, 3 -> 4, >= 0.8, m<script>") == (
        "mid-p < 0.05, 3 -> 4, >= 0.8, m&lt;script>"
    )
