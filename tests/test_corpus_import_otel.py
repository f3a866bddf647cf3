"""`corpus import otel` on OTLP JSON that OpenTelemetry's SDK wrote (tests/fixtures/otel/,
made by make_events.py there): evaluation events become judgements and labels, and hostile
files are refused or counted."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from judges.cli.main import main
from judges.corpus.importers.corpus_writer import SCORE_FORMS
from judges.corpus.importers.otel import any_value
from judges.corpus.report import build_report
from judges.corpus.rows import load_corpus

EVENTS = Path(__file__).parent / "fixtures" / "otel" / "events.jsonl"


def _import(tmp_path: Path, source: Path, *extra: str) -> int:
    return main(["corpus", "import", "otel", str(source), "--corpora", str(tmp_path / "c"),
                 "--name", "ot", "--map", "item=app.question", *extra])  # fmt: skip


def _requests() -> list[dict[str, Any]]:
    return [json.loads(line) for line in EVENTS.read_text(encoding="utf-8").splitlines()]


def _records(request: dict[str, Any]) -> list[dict[str, Any]]:
    return request["resourceLogs"][0]["scopeLogs"][0]["logRecords"]  # type: ignore[no-any-return]


def _write(tmp_path: Path, requests: list[dict[str, Any]]) -> Path:
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in requests),
                    encoding="utf-8")  # fmt: skip
    return path


def test_evaluation_events_become_judgements_and_labels(tmp_path: Path) -> None:
    assert _import(tmp_path, EVENTS) == 0
    corpus = load_corpus(tmp_path / "c" / "ot")
    assert corpus.systems == ("support-alpha", "support-beta")
    assert list(corpus.manifest.judges) == ["correctness"]
    # Every figure against the events: the judge's score.value, the reviewer's label.
    judged: dict[str, list[float]] = {}
    for request in _requests():
        service = {a["key"]: a["value"] for a in request["resourceLogs"][0]["resource"]
                   ["attributes"]}["service.name"]["stringValue"]  # fmt: skip
        for record in _records(request):
            values = {a["key"]: any_value(a["value"]) for a in record["attributes"]}
            if values["gen_ai.evaluation.name"] == "correctness":
                judged.setdefault(service, []).append(values["gen_ai.evaluation.score.value"])
    report = build_report(corpus)
    means = {s.system: s.score.mean for s in report.judges[0].scores}
    assert means == {s: pytest.approx(sum(v) / len(v)) for s, v in judged.items()}
    assert len(corpus.labels) == 8
    [human] = report.human
    assert (human.exact.successes, human.exact.n) == (6, 8)


def test_an_error_a_nan_an_unread_label_and_other_records_are_kept_or_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    requests = _requests()

    def attribute(request: dict[str, Any], key: str, value: dict[str, Any]) -> None:
        record = _records(request)[0]
        record["attributes"] = [a for a in record["attributes"] if a["key"] != key]
        record["attributes"].append({"key": key, "value": value})

    attribute(requests[0], "gen_ai.evaluation.score.value", {"doubleValue": "NaN"})
    attribute(requests[2], "error.type", {"stringValue": "timeout"})
    attribute(requests[3], "gen_ai.evaluation.score.label", {"stringValue": "meh"})
    _records(requests[4])[0]["eventName"] = "gen_ai.client.inference.operation.details"
    assert _import(tmp_path, _write(tmp_path, requests)) == 0
    out = capsys.readouterr().out
    assert "(2 error rows kept)" in out
    assert (
        "not imported: 1 'human' evaluations with no score (label: value 'meh' is not a score "
        f"({SCORE_FORMS}); state its score with --label-score meh=SCORE)"
    ) in out
    assert "not imported: 1 log records that are no gen_ai.evaluation.result event" in out
    errors = sorted(j.error or "" for j in load_corpus(tmp_path / "c" / "ot").judgements
                    if j.error)  # fmt: skip
    assert errors == ["error.type timeout", "score NaN in the log"]


def test_an_event_given_twice_is_refused_naming_both_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    requests = _requests()
    assert _import(tmp_path, _write(tmp_path, [*requests, requests[0]])) == 2
    err = capsys.readouterr().err
    assert "events.jsonl:17: log record 0 'correctness'" in err and "is also at" in err
    assert "events.jsonl:1: log record 0" in err


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"resourceLogs": [], "resourceLogs": []}\n', "the key 'resourceLogs' appears twice"),
        ('{"resourceSpans": []}\n', "no resourceLogs; not OTLP JSON logs"),
        ('{"resourceLogs": [{"scopeLogs": [\n', "events.jsonl:1: not JSON"),
    ],
)
def test_a_file_that_is_no_otlp_json_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, says: str
) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(text, encoding="utf-8")
    assert _import(tmp_path, path) == 2
    assert says in capsys.readouterr().err


def test_any_unicode_service_name_and_the_default_item(tmp_path: Path) -> None:
    requests = _requests()
    for request in requests:
        for a in request["resourceLogs"][0]["resource"]["attributes"]:
            if a["key"] == "service.name":
                a["value"]["stringValue"] += " ünï\u2028 🙂"
    path = _write(tmp_path, requests)
    argv = ["corpus", "import", "otel", str(path), "--corpora", str(tmp_path / "c")]
    assert main([*argv, "--name", "ot"]) == 0
    corpus = load_corpus(tmp_path / "c" / "ot")
    assert corpus.systems == ("support-alpha ünï\u2028 🙂", "support-beta ünï\u2028 🙂")
    assert len(corpus.items) == 8  # each response its own item: no pairing without --map item=


def test_a_map_of_another_field_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _import(tmp_path, EVENTS, "--map", "score=x") == 2
    assert "for otel give system=ATTRIBUTE or item=ATTRIBUTE" in capsys.readouterr().err


def _set(record: dict[str, Any], key: str, value: dict[str, Any] | None) -> None:
    """Replace (or, with None, remove) one attribute of a log record."""
    record["attributes"] = [a for a in record["attributes"] if a["key"] != key]
    if value is not None:
        record["attributes"].append({"key": key, "value": value})


def _rubric(requests: list[dict[str, Any]]) -> dict[tuple[str, str], float]:
    """The judge's scores made numeric on a 0-1 rubric in quarters, in each of OTLP JSON's
    number forms (a double, an int64 as a JSON string, a number as a string attribute)."""
    forms = [{"doubleValue": 0.75}, {"intValue": "1"}, {"stringValue": "0.25"},
             {"doubleValue": 0.5}]  # fmt: skip
    written: dict[tuple[str, str], float] = {}
    judged = 0
    for request in requests:
        [record] = _records(request)
        values = {a["key"]: any_value(a["value"]) for a in record["attributes"]}
        if values["gen_ai.evaluation.name"] != "correctness":
            continue
        form = forms[judged % len(forms)]
        judged += 1
        _set(record, "gen_ai.evaluation.score.value", form)
        # A label beside a value is the value's reading: the value is the score.
        _set(record, "gen_ai.evaluation.score.label", {"stringValue": "fair"})
        service = next(a["value"]["stringValue"] for a in request["resourceLogs"][0]["resource"]
                       ["attributes"] if a["key"] == "service.name")  # fmt: skip
        written[service, values["app.question"]] = float(next(iter(form.values())))
    return written


def test_numeric_scores_in_every_otlp_form_are_the_judges_scores(tmp_path: Path) -> None:
    requests = _requests()
    written = _rubric(requests)
    path = _write(tmp_path, requests)
    assert _import(tmp_path, path, "--low", "0", "--high", "1", "--step", "0.25") == 0
    corpus = load_corpus(tmp_path / "c" / "ot")
    items = {item.id: item.inputs["app.question"] for item in corpus.items}
    found = {(j.system, items[j.item]): j.score for j in corpus.judgements}
    assert found == written and {0.25, 0.5, 0.75, 1.0} <= set(found.values())


def test_numeric_scores_need_their_scale_stated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    requests = _requests()
    _rubric(requests)
    assert _import(tmp_path, _write(tmp_path, requests)) == 2
    assert "state the scale with --low and --high" in capsys.readouterr().err


def _labelled(words: dict[str, str]) -> list[dict[str, Any]]:
    """The reviewer's pass/fail labels respelled as the team's own words."""
    requests = _requests()
    for request in requests:
        [record] = _records(request)
        for a in record["attributes"]:
            if a["key"] == "gen_ai.evaluation.score.label":
                a["value"]["stringValue"] = words[a["value"]["stringValue"]]
    return requests


def test_labels_in_a_teams_own_words_are_read_by_the_stated_rule(tmp_path: Path) -> None:
    path = _write(tmp_path, _labelled({"pass": "acceptable", "fail": "Unacceptable"}))
    stated = ("--label-score", "acceptable=1", "--label-score", "Unacceptable=0")
    assert _import(tmp_path, path, *stated) == 0
    as_words = load_corpus(tmp_path / "c" / "ot")
    assert _import(tmp_path / "plain", EVENTS) == 0
    plain = load_corpus(tmp_path / "plain" / "c" / "ot")
    assert [(x.system, x.item, x.score) for x in as_words.labels] == [
        (x.system, x.item, x.score) for x in plain.labels
    ]
    assert len(as_words.labels) == 8


def test_a_label_without_a_stated_score_names_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, _labelled({"pass": "acceptable", "fail": "Unacceptable"}))
    assert _import(tmp_path, path, "--label-score", "acceptable=1") == 0
    out = capsys.readouterr().out
    assert (
        "not imported: 4 'human' evaluations with no score (label: value 'Unacceptable' is "
        f"not a score ({SCORE_FORMS}); state its score with --label-score Unacceptable=SCORE)"
    ) in out
    assert len(load_corpus(tmp_path / "c" / "ot").labels) == 4


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("good", "--label-score 'good': give LABEL=SCORE with SCORE a finite number"),
        ("good=high", "--label-score 'good=high': give LABEL=SCORE"),
        ("good=nan", "--label-score 'good=nan': give LABEL=SCORE"),
    ],
)
def test_a_label_rule_that_is_no_rule_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], given: str, says: str
) -> None:
    assert _import(tmp_path, EVENTS, "--label-score", given) == 2
    assert says in capsys.readouterr().err


def test_label_score_is_otels_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["corpus", "import", "csv", str(tmp_path / "x.csv"), "--label-score", "good=1"]
    assert main(argv) == 2
    assert "--label-score: not an option of `corpus import csv`" in capsys.readouterr().err


def test_an_evaluation_with_neither_value_nor_label_is_an_error_row(tmp_path: Path) -> None:
    requests = _requests()
    [record] = _records(requests[0])
    _set(record, "gen_ai.evaluation.score.value", None)
    assert _import(tmp_path, _write(tmp_path, requests)) == 0
    errors = [j.error for j in load_corpus(tmp_path / "c" / "ot").judgements if j.error]
    assert errors == ["no score value nor label in the log"]


def test_the_named_option_runs_as_printed_for_a_label_with_spaces(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, _labelled({"pass": "pass", "fail": "not sure ü"}))
    assert _import(tmp_path, path) == 0
    out = capsys.readouterr().out
    hint = "--label-score 'not sure ü=SCORE'"
    assert hint in out
    # As printed, with SCORE stated: the shell splits it into the option and its one value.
    stated = shlex.split(hint.replace("SCORE", "0.5"))
    assert _import(tmp_path, path, "--replace", *stated) == 0
    assert len(load_corpus(tmp_path / "c" / "ot").labels) == 8
