"""Every committed report reads what the suite's own tests concluded.

For each report folder in `reports/`, the verdict is built twice: as the report builds it
(from `results.jsonl`, as `--check-reports` does) and as the suite's set-level tests build
it (every run replayed from `cassettes/` through `JudgeRunner`, the object
`test_judge_is_fit`, `test_detection_gates`, `test_noise_floor`, ... assert on). The word,
the problems and every deciding figure must be the same, and the word the committed
`report.json` prints must be the one both give.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judges.calls.backends import ModelRef
from judges.core.spec import load_catalog
from judges.pytest_plugin.fixtures import JudgeRunner
from judges.pytest_plugin.params import SetCase
from judges.pytest_plugin.session import JudgesSession, Settings
from judges.reports.model.folders import Results, build_folder
from judges.verdicts.inputs import load_sources
from judges.verdicts.verdict import ModelVerdict

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = sorted(
    (path.parent.parent.name, path.parent.name)
    for path in (ROOT / "reports").glob("*/*/report.json")
)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> JudgesSession:
    """A replay-only session over the committed cassettes and planted sets."""
    settings = Settings(
        rootdir=tmp_path_factory.mktemp("agreement"),
        cassettes=ROOT / "cassettes",
        planted_sets=ROOT / "planted_sets",
        reports=ROOT / "reports",
    )
    return JudgesSession(settings)


def deciding(verdict: ModelVerdict) -> dict[str, object]:
    """What decides a verdict, the bias probes aside (the suite's probe tests replay those
    runs on their own, and the report's probe section is checked by `test_probe_gates`)."""
    fitness = verdict.fitness
    return {
        "fit": verdict.fit,
        "accept_not_fit": verdict.accept_not_fit,
        "chance tests": [(t.name, t.fit, t.testable) for t in fitness.tests] if fitness else None,
        "floors": {
            section: [(g.name, g.passed) for g in gates]
            for section, gates in verdict.floors.items()
            if section != "probes"
        },
        "regressions": [(g.name, g.passed) for g in verdict.regressions],
        "missing": (verdict.missing_items, verdict.missing_runs),
        # As a set: the report lists them by id, the suite in the set's order.
        "failures": sorted((f.row.item_id, f.accepted_miss is None) for f in verdict.failures),
        "accepted_met": verdict.accepted_met,
    }


def test_every_committed_report_is_checked() -> None:
    judges = {judge for judge, _ in COMMITTED}
    assert {"product_identity", "geval", "relevance", "pairwise"} <= judges


@pytest.mark.parametrize(("judge", "version"), COMMITTED, ids=lambda v: str(v))
def test_the_report_reads_what_the_suite_concluded(
    judge: str, version: str, session: JudgesSession, request: pytest.FixtureRequest
) -> None:
    catalog = load_catalog()
    sources = load_sources(judge, catalog, ROOT / "planted_sets")
    report = build_folder(Results(ROOT / "reports"), judge, version, sources)
    committed = json.loads((ROOT / "reports" / judge / version / "report.json").read_text())
    words = {m["model"]: m["verdict_word"] for m in committed["models"]}
    runner = JudgeRunner(session, request.node)
    for reported in report.models:
        tested = runner.verdict(SetCase(judge, version, ModelRef.parse(reported.model)))
        assert deciding(tested) == deciding(reported), reported.model
        probes = reported.probes.unaccepted if reported.probes else ()
        assert not probes, "the suite's probe tests fail these; the word below would differ"
        assert tested.verdict_word() == reported.verdict_word() == words[reported.model]
        assert tested.problems() == reported.problems()
