"""OpenTelemetry, for real: the Python SDK installed in its own environment emits GenAI
evaluation events through its logs API to a file exporter that writes OTLP JSON with
OpenTelemetry's own encoder; `corpus import otel` reads the file, and the report's figures
equal what OpenTelemetry's own protobuf reader parses from it. NaN scores and records of
other events the SDK wrote are kept or counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judges.corpus.report import build_report
from judges.corpus.rows import load_corpus

from ._tools import ROOT, run, tool_python

pytestmark = pytest.mark.proof

OTEL = ("opentelemetry-sdk==1.45.2", "opentelemetry-exporter-otlp-proto-common==1.45.2")
MAKE_EVENTS = ROOT / "tests" / "fixtures" / "otel" / "make_events.py"

# The file parsed back by OpenTelemetry's own protobuf classes: per service, the judge's
# scores, and how often the reviewer's pass/fail agrees, as JSON.
EXPECTED = """
import json, sys
from google.protobuf.json_format import Parse
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
judge, human = {}, {}
for line in open(sys.argv[1], encoding="utf-8"):
    request = Parse(line, ExportLogsServiceRequest())
    for resource_logs in request.resource_logs:
        service = {a.key: a.value.string_value
                   for a in resource_logs.resource.attributes}["service.name"]
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                if record.event_name != "gen_ai.evaluation.result":
                    continue
                values = {a.key: a.value for a in record.attributes}
                key = (service, values["app.question"].string_value)
                if values["gen_ai.evaluation.name"].string_value == "human":
                    human[key] = values["gen_ai.evaluation.score.label"].string_value == "pass"
                else:
                    judge[key] = values["gen_ai.evaluation.score.value"].double_value
means = {}
for (service, _), score in judge.items():
    means.setdefault(service, []).append(score)
agree = sum(float(human[k]) == v for k, v in judge.items())
print(json.dumps({"means": {s: sum(v) / len(v) for s, v in means.items()}, "agree": agree,
                  "n": len(judge)}))
"""


@pytest.fixture(scope="module")
def otel_python() -> Path:
    return tool_python("opentelemetry-sdk-1.45.2", *OTEL)


def test_the_report_equals_what_opentelemetry_parses(otel_python: Path, tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    made = run(otel_python, str(MAKE_EVENTS), str(events), cwd=tmp_path)
    assert made.returncode == 0, made.stderr[-3000:]
    done = run(otel_python, "-m", "judges", "corpus", "import", "otel", str(events),
               "--map", "item=app.question", "--corpora", str(tmp_path / "corpora"),
               "--name", "ot", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    expected = run(otel_python, "-c", EXPECTED, str(events), cwd=tmp_path)
    assert expected.returncode == 0, expected.stderr
    truth = json.loads(expected.stdout)
    report = build_report(load_corpus(tmp_path / "corpora" / "ot"))
    means = {s.system: s.score.mean for s in report.judges[0].scores}
    assert means == pytest.approx(truth["means"])
    [human] = report.human
    assert (human.exact.successes, human.exact.n) == (truth["agree"], truth["n"])


ODD = """
import sys
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from make_events import OtlpJsonFile
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
provider = LoggerProvider(resource=Resource.create({"service.name": "support-gamma"}))
provider.add_log_record_processor(SimpleLogRecordProcessor(OtlpJsonFile(Path(sys.argv[1]))))
logger = provider.get_logger("judges.proof")
logger.emit(event_name="gen_ai.evaluation.result", attributes={
    "gen_ai.response.id": "r1", "app.question": "2 + 2?", "gen_ai.evaluation.name": "correctness",
    "gen_ai.evaluation.score.value": float("nan")})
logger.emit(event_name="gen_ai.client.inference.operation.details", attributes={"x": 1})
provider.shutdown()
"""


def test_a_nan_and_another_event_the_sdk_wrote_are_kept_or_counted(
    otel_python: Path, tmp_path: Path
) -> None:
    events = tmp_path / "events.jsonl"
    made = run(otel_python, "-c", ODD, str(events), str(MAKE_EVENTS.parent), cwd=tmp_path)
    assert made.returncode == 0, made.stderr[-3000:]
    done = run(otel_python, "-m", "judges", "corpus", "import", "otel", str(events),
               "--corpora", str(tmp_path / "corpora"), "--name", "ot", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "(1 error rows kept)" in done.stdout
    assert "not imported: 1 log records that are no gen_ai.evaluation.result event" in done.stdout
    [row] = load_corpus(tmp_path / "corpora" / "ot").judgements
    assert row.error == "score NaN in the log"


# A rubric judge's numeric scores (doubles, and an int the SDK encodes as an int64) and a
# reviewer's labels in the team's own words, read by the rule stated on the command line.
RUBRIC = """
import sys
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from make_events import OtlpJsonFile
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
SCORES = {"support-alpha": [0.75, 1, 0.25, 0.5], "support-beta": [0.5, 0.75, 1, 0.25]}
LABELS = {"support-alpha": ["good", "good", "poor", "fair"],
          "support-beta": ["fair", "good", "good", "poor"]}
for service, scores in SCORES.items():
    provider = LoggerProvider(resource=Resource.create({"service.name": service}))
    provider.add_log_record_processor(SimpleLogRecordProcessor(OtlpJsonFile(Path(sys.argv[1]))))
    logger = provider.get_logger("judges.proof")
    for n, score in enumerate(scores):
        common = {"gen_ai.response.id": f"{service}-{n}", "app.question": f"q{n}"}
        logger.emit(event_name="gen_ai.evaluation.result", attributes={
            **common, "gen_ai.evaluation.name": "helpfulness",
            "gen_ai.evaluation.score.value": score, "gen_ai.evaluation.score.label": "rated"})
        logger.emit(event_name="gen_ai.evaluation.result", attributes={
            **common, "gen_ai.evaluation.name": "human",
            "gen_ai.evaluation.score.label": LABELS[service][n]})
    provider.shutdown()
"""
RULE = {"good": 1.0, "fair": 0.5, "poor": 0.0}

# The same file parsed by OpenTelemetry's protobuf classes: each service's mean score (a
# double or an int, as the SDK encoded it) and the judgements equal to the stated label.
RUBRIC_EXPECTED = """
import json, sys
from google.protobuf.json_format import Parse
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
rule = json.loads(sys.argv[2])
judge, human, kinds = {}, {}, set()
for line in open(sys.argv[1], encoding="utf-8"):
    request = Parse(line, ExportLogsServiceRequest())
    for resource_logs in request.resource_logs:
        service = {a.key: a.value.string_value
                   for a in resource_logs.resource.attributes}["service.name"]
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                values = {a.key: a.value for a in record.attributes}
                key = (service, values["app.question"].string_value)
                if values["gen_ai.evaluation.name"].string_value == "human":
                    human[key] = rule[values["gen_ai.evaluation.score.label"].string_value]
                    continue
                value = values["gen_ai.evaluation.score.value"]
                kinds.add(value.WhichOneof("value"))
                judge[key] = getattr(value, value.WhichOneof("value"))
means = {}
for (service, _), score in judge.items():
    means.setdefault(service, []).append(score)
print(json.dumps({"means": {s: sum(v) / len(v) for s, v in means.items()},
                  "agree": sum(human[k] == v for k, v in judge.items()), "n": len(judge),
                  "kinds": sorted(kinds)}))
"""


def test_numeric_scores_and_stated_labels_equal_what_opentelemetry_parses(
    otel_python: Path, tmp_path: Path
) -> None:
    events = tmp_path / "events.jsonl"
    made = run(otel_python, "-c", RUBRIC, str(events), str(MAKE_EVENTS.parent), cwd=tmp_path)
    assert made.returncode == 0, made.stderr[-3000:]
    rule = [arg for label, score in RULE.items() for arg in ("--label-score", f"{label}={score:g}")]
    done = run(otel_python, "-m", "judges", "corpus", "import", "otel", str(events),
               "--map", "item=app.question", "--low", "0", "--high", "1", "--step", "0.25",
               *rule, "--corpora", str(tmp_path / "corpora"), "--name", "ot",
               cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "(0 error rows kept)" in done.stdout and "8 human labels" in done.stdout
    expected = run(otel_python, "-c", RUBRIC_EXPECTED, str(events), json.dumps(RULE),
                   cwd=tmp_path)  # fmt: skip
    assert expected.returncode == 0, expected.stderr
    truth = json.loads(expected.stdout)
    assert truth["kinds"] == ["double_value", "int_value"]  # both OTLP number forms
    report = build_report(load_corpus(tmp_path / "corpora" / "ot"))
    means = {s.system: s.score.mean for s in report.judges[0].scores}
    assert means == pytest.approx(truth["means"])
    [human] = report.human
    assert (human.exact.successes, human.exact.n) == (truth["agree"], truth["n"])
