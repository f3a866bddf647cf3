"""The report's verdict: a PASS/FAIL banner, accepted misses apart from new failures, the
failures as an HTML section, and the mean-change plot coloured by the dimension's purpose."""

from __future__ import annotations

import dataclasses
import json
import re
from html.parser import HTMLParser
from typing import Any

import pytest

from judges.core.results import Expectation, write_jsonl
from judges.reports import terminal
from judges.reports.render.charts import change_svg
from judges.reports.render.comparison import comparison_markdown
from judges.reports.render.github import summary_markdown
from judges.reports.write import rebuild_reports
from judges.stats.estimates.floors import Gate
from judges.stats.estimates.intervals import wilson
from judges.stats.fitness.chance import ChanceTest, Fitness
from judges.stats.regression.comparison import compare_versions
from judges.verdicts import fitness as fitness_section
from tests._report_demo import AFTER, BEFORE, CATEGORIES, MODEL, folder, row, version_rows

# Every item of 1.1 met but the accepted miss PE-01; PE-08 answered and caught.
ALL_MET = {**AFTER, "PE-08": True}


def write(demo: dict[str, Any], detection_after: dict[str, bool]) -> None:
    rows_before = version_rows("1.0", BEFORE)
    rows_after = [row("1.1", item, met) for item, met in detection_after.items()]
    if "PE-08" not in detection_after:  # as version_rows: PE-08 fails in transport
        rows_after = version_rows("1.1", detection_after)
    write_jsonl(folder(demo, "1.0") / "results.jsonl", rows_before)
    write_jsonl(folder(demo, "1.1") / "results.jsonl", rows_after)


def accept_not_fit(demo: dict[str, Any]) -> None:
    """The demo set is too small to show anything against chance: accept that, in words."""
    gates = demo["planted"] / "demo" / "gates.toml"
    text = gates.read_text().replace('."1.1"]\n', '."1.1"]\naccept_not_fit = "a demo"\n', 1)
    gates.write_text(text)


def rebuild(demo: dict[str, Any]) -> Any:
    return rebuild_reports(demo["reports"], demo["planted"], catalog=demo["catalog"])


def banner(html: str) -> str:
    found = re.search(r'<div class="banner (\w+)"[^>]*>(.*?)</div>', html, re.S)
    assert found is not None, "no banner"
    return f"{found.group(1)}: {re.sub(r'<[^>]+>', ' ', found.group(2)).strip()}"


def test_a_failing_gate_and_a_new_failure_make_the_banner_say_fail(
    demo: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # 1.1: PE-01 is an accepted miss, PE-08 fails in transport (a new failure), and the
    # fabrication gate (>= 0.9) sees 2/3. Its NOT FIT is accepted, so FAIL shows. The demo
    # set is too small for any chance test to decide: stand in a set large enough to decide
    # that the judge is at chance (the fitness statistics are tested on their own).
    at_chance = ChanceTest(
        "planted detection", "detection - control FP", 0.0, -0.3, 0.3, 0.0, 0.5, 0.5, 60
    )
    monkeypatch.setattr(fitness_section, "judge_fitness", lambda *a, **k: Fitness((at_chance,)))
    accept_not_fit(demo)
    write(demo, AFTER)
    built = rebuild(demo)
    html = (folder(demo, "1.1") / "index.html").read_text()
    assert html.index('class="banner fail"') < html.index("<h2>")  # at the top
    assert banner(html).startswith("fail: FAIL")
    # The accepted NOT FIT stays beside the FAIL, in every format.
    verdict = "FAIL: 1 gate failed, 1 new failure; NOT FIT, accepted: a demo"
    assert "1 gate failed, 1 new failure; NOT FIT, accepted: a demo (" in banner(html)
    report_md = (folder(demo, "1.1") / "report.md").read_text()
    # The Result line leads with the reason that decides it (a floor before a new failure);
    # the whole verdict follows on the next line.
    result = "FAIL: gate detection[fabrication] failed (2/3 = 0.67 [0.21, 0.94] n=3, threshold"
    assert f"**Result: {result} >= 0.90)**\n\nIn full: {verdict} (" in report_md
    (report,) = [f for f in built.folders if f.version == "1.1"]
    assert report.verdict().startswith(verdict)
    report_json = json.loads((folder(demo, "1.1") / "report.json").read_text())
    assert report_json["verdict"].startswith(result)
    assert report_json["verdict_details"] == [report.verdict()]
    (line,) = [x for x in terminal.report_lines(built) if x.startswith(f"demo 1.1 on {MODEL}:")]
    assert line.endswith("; FAIL; NOT FIT, accepted (at chance on planted detection)"), line
    summary = summary_markdown(built.folders)
    assert f"| demo | 1.1 | {MODEL} | FAIL :x:; NOT FIT (accepted) |" in summary


def test_accepted_misses_alone_do_not_fail_and_are_counted_apart(demo: dict[str, Any]) -> None:
    write(demo, ALL_MET)
    built = rebuild(demo)
    html = (folder(demo, "1.1") / "index.html").read_text()
    # Nothing failed, but the set is too small for any chance test to decide: a coin flip
    # would read the same, so the word is UNDECIDED (never PASS), saying what it cannot show.
    assert banner(html).startswith(
        "incomplete: UNDECIDED no chance test can decide at this set&#x27;s size (grow the set"
    )
    assert "0 new failures, 1 accepted miss" in html
    report_md = (folder(demo, "1.1") / "report.md").read_text()
    assert report_md.startswith("# demo, prompt 1.1: UNDECIDED\n")
    assert "**Result: UNDECIDED: no chance test can decide" in report_md
    # Its hint names the judge, as `plan` needs it.
    assert "size (grow the set: `python -m judges plan demo`)**" in report_md
    assert "cannot yet show that the judge is better than chance" in report_md
    assert "0 new failures, 1 accepted miss, of 8 main-run items." in report_md
    assert "| PE-01 | cousin | missed | accepted miss |" in report_md
    lines = terminal.report_lines(built)
    assert any(
        line.startswith(f"demo 1.1 on {MODEL}:") and "0 new failures, 1 accepted miss" in line
        for line in lines
    ), lines


def test_a_fit_judge_with_nothing_failed_reads_pass(demo: dict[str, Any]) -> None:
    """Eight defects caught, eight controls left alone: fit (Fisher p = 1/12870), PASS."""
    items_path = demo["planted"] / "demo" / "items.jsonl"
    items = [json.loads(line) for line in items_path.read_text().splitlines()]
    template = items[-1]
    extra = {f"PE-{i:02d}": "control" for i in range(9, 16)}
    items += [{**template, "id": i, "slug": f"control-{i[-2:]}", "category": c, "control": True}
              for i, c in extra.items()]  # fmt: skip
    items_path.write_text("".join(json.dumps(item) + "\n" for item in items))
    (demo["planted"] / "demo" / "gates.toml").write_text("")
    (demo["planted"] / "demo" / "expectations.toml").write_text("")
    categories = {**CATEGORIES, **extra}
    rows = [
        row("1.1", "PE-07", True, accuracy=0 if category != "control" else 3).model_copy(
            update={"item_id": item, "category": category, "control": category == "control"}
        )
        for item, category in categories.items()
    ]
    write_jsonl(folder(demo, "1.1") / "results.jsonl", rows)
    write_jsonl(folder(demo, "1.0") / "results.jsonl", rows)
    built = rebuild(demo)
    (report,) = [f for f in built.folders if f.version == "1.1"]
    assert report.verdict() == "PASS" and report.models[0].fit, report.notes
    html = (folder(demo, "1.1") / "index.html").read_text()
    assert banner(html).startswith("pass: PASS")
    report_md = (folder(demo, "1.1") / "report.md").read_text()
    assert report_md.startswith("# demo, prompt 1.1: PASS")
    # The set's own false-alarm bound for fitness, from each deciding test's power.
    bound = report.models[0].fitness.false_alarm_bound()
    assert 0 < bound < 0.1  # 8 defects vs 8 controls: the pooled test alone, power 0.94
    assert f"fails one of these deciding tests at most {bound:.1%} of the time" in report_md
    data = json.loads((folder(demo, "1.1") / "report.json").read_text())
    assert data["verdict_word"] == "PASS"
    assert data["models"][0]["fitness"]["verdict"] == "FIT"


def test_new_failures_and_accepted_misses_are_told_apart_everywhere(
    demo: dict[str, Any],
) -> None:
    write(demo, AFTER)
    built = rebuild(demo)
    (report,) = [f for f in built.folders if f.version == "1.1"]
    (m,) = report.models
    assert [f.row.item_id for f in m.new_failures] == ["PE-08"]
    assert [f.row.item_id for f in m.accepted_misses] == ["PE-01"]
    assert m.failure_counts() == "1 new failure, 1 accepted miss"
    report_md = (folder(demo, "1.1") / "report.md").read_text()
    assert "| PE-08 | fabrication | error (transport) | **new failure** |" in report_md
    failures_md = (folder(demo, "1.1") / "failures.md").read_text()
    assert "1 new failure(s) and 1 accepted miss(es)" in failures_md
    # New failures come first.
    assert failures_md.index("### PE-08") < failures_md.index("### PE-01")
    assert any("1 new failure, 1 accepted miss; " in line for line in terminal.report_lines(built))


class _Cells(HTMLParser):
    """The text of every table row inside the failures card."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[str] = []
        self.cell: list[str] = []
        self.in_failures = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "div" and ("class", "card failures") in attrs:
            self.in_failures = True
        if self.in_failures and tag == "tr":
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if self.in_failures and tag == "tr":
            self.rows.append(" ".join(self.cell))
        if self.in_failures and tag == "table":
            self.in_failures = False

    def handle_data(self, data: str) -> None:
        if self.in_failures and data.strip():
            self.cell.append(data.strip())


def test_index_html_shows_the_failures_new_ones_first(demo: dict[str, Any]) -> None:
    write(demo, AFTER)
    rebuild(demo)
    html = (folder(demo, "1.1") / "index.html").read_text()
    parser = _Cells()
    parser.feed(html)
    header, *rows = parser.rows
    assert header == "Item Category Outcome Kind Expected Returned"
    assert rows[0] == (
        "PE-08 fabrication error (transport) new failure factual_accuracy <= 1 "
        "transport: connection reset"
    )
    assert rows[1] == (
        "PE-01 cousin missed accepted miss factual_accuracy <= 1 factual_accuracy=3, "
        "completeness=2, causal_reasoning=1, core_total=6, product_identity_match=true"
    )
    assert rows[2].startswith("Accepted (expectations.toml): loses the cousin case")
    assert "Rationale: PE-01 judged" in rows[2]
    assert "<script" not in html


def test_a_control_score_that_rises_is_good_and_a_defect_score_that_rises_is_bad() -> None:
    # Controls PE-07: factual_accuracy 1 -> 3 (up: good); defects PE-05: 1 -> 3 (up: bad).
    held = {"expect": [Expectation(field="factual_accuracy", op=">=", value=1)]}
    before = [
        row("1.0", "PE-07", True, accuracy=1).model_copy(update=held),
        row("1.0", "PE-05", True, accuracy=1),
    ]
    after = [
        row("1.1", "PE-07", True, accuracy=3).model_copy(update=held),
        row("1.1", "PE-05", False, accuracy=3),
    ]
    (comparison,) = compare_versions("demo", ("1.0", before), ("1.1", after), ["factual_accuracy"])
    changes = {d.side: d for d in comparison.dimensions}
    assert changes["controls"].change.value == 2.0 and changes["controls"].good is True
    assert changes["planted defects"].change.value == 2.0
    assert changes["planted defects"].good is False
    svg = change_svg(comparison)
    dots = re.findall(r'<circle class="change-(\w+)"[^>]*fill="(#\w+)"><title>([^<]*)', svg)
    assert dots == [
        ("good", "#1a7f37", "factual_accuracy on controls: good (higher is better)"),
        ("bad", "#cf222e", "factual_accuracy on planted defects: bad (lower is better)"),
    ]


def test_the_change_plot_has_a_legend_that_names_the_purpose(demo: dict[str, Any]) -> None:
    write(demo, AFTER)
    rebuild(demo)
    html = (folder(demo, "1.1") / "index.html").read_text()
    legend = html[html.index('class="caption legend"') :]
    legend = legend[: legend.index("</p>")]
    assert "good for the purpose" in legend and "not the sign" in legend
    assert "on controls a higher score is good" in legend
    assert "on planted defects a lower score is good" in legend


def test_exact_expected_values_give_no_good_direction() -> None:
    # A relevance-like side: the expectation asks for an exact value, so a rise is neither.
    exact = [Expectation(field="factual_accuracy", op="==", value=3)]
    before = [row("1.0", "PE-05", True, accuracy=1).model_copy(update={"expect": exact})]
    after = [row("1.1", "PE-05", False, accuracy=3).model_copy(update={"expect": exact})]
    (comparison,) = compare_versions("demo", ("1.0", before), ("1.1", after), ["factual_accuracy"])
    (change,) = comparison.dimensions
    assert (change.change.value, change.directed, change.good) == (2.0, False, None)
    assert '<circle class="change-no-good-direction"' in change_svg(comparison)
    assert "no good direction (exact expected values)" in comparison_markdown(comparison)


def test_a_statistic_without_threshold_is_not_counted_as_a_gate_left_unevaluated(
    demo: dict[str, Any],
) -> None:
    write(demo, ALL_MET)
    (report,) = [f for f in rebuild(demo).folders if f.version == "1.1"]
    (model,) = report.models
    passed, failed, _ = model.gate_counts
    shown = Gate("max_flip.dummy", wilson(8, 8), None, False)  # informational
    no_data = Gate("noise_floor.min_exact_match.x", wilson(0, 0), 0.5, True)
    extra = {**model.floors, "extra": (shown,)}  # one more section of floors
    counted = dataclasses.replace(model, floors=extra)
    assert counted.gate_counts == (passed, failed, 0)
    assert counted.problems() == []
    unevaluated = dataclasses.replace(model, floors={**model.floors, "extra": (shown, no_data)})
    assert unevaluated.gate_counts == (passed, failed, 1)
    # Shown as not evaluated, and no data decides nothing: it fails no verdict.
    assert unevaluated.problems() == []
