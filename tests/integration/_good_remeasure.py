"""A good judge re-recorded for real on a built-in set: the project, the judge, the verdicts.

The project holds one built-in judge with its committed planted set (items, set.toml,
probes, reading list, SME labels: whatever the set has, read from planted_sets/) and the
built-in suite (regression_tests/, as committed), and N byte-identical copies of one
built-in prompt as prompt versions. Every run the set enrols follows the judge to each copy.

The fake judge is right on 90% of its calls, each call drawn on its own and seeded per
request body and per how many identical requests came before (copies send identical
requests; recorded one at a time, each copy gets the same draws every run). What "right"
means is tests/_good_judge.py's: an item's right values meet its expectations (the
experts' scores where SME labels exist), a wrong call gives every field it answers another
value of its scale (the identity flag flipped). A bias probe's right answer is its clean
item's (the edit must change nothing), a non-answer's the lowest of every scale; a
reading-list candidate's level is the expert's grade (4 and 3 both level 3).

A request is told apart by its prompt: every subject's prompt is rendered beforehand with
the harness's own `first_requests`, so the judge needs no tag in the judged texts.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
import shutil
import threading
import tomllib
from collections import Counter
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

import pytest

from judges.core.rules import RELEVANCE_POINTS, score_to_level, weighted_score
from judges.core.runner import Subject, first_requests
from judges.core.spec import PROMPTS_ROOT, JudgeSpec, load_catalog
from judges.sets.folder import SetFolder
from judges.sets.planted import load_planted_set
from judges.sets.probes import load_probe_set
from judges.sets.reading_list import TIERS

from .._good_judge import GOOD, Shape, load_shape, scaffold_shape
from ._adversarial import INI, baseline, without_reply_shapes
from ._support import FakeJudge, JudgesProject, Received
from ._walkthrough import INNER_OPTIONS, MODEL, command

ROOT = Path(__file__).resolve().parents[2]
# The built-in prompt each judge's copies are made of (the one its adversarial test uses).
TEMPLATES = {"product_identity": "0.3.1", "geval": "1.0", "relevance": "1.0", "pairwise": "1.0"}
# The judge `judges init` scaffolds (its set, prompt 1.0 and suite, as a new user gets them).
SCAFFOLD = "support_reply"
# The built-in suite minus what judges no recording: the repository's finale, the
# properties of the rules, and the verdict-table snapshots (syrupy is off in inner runs).
NOT_COPIED = {"test_finale.py", "test_properties.py", "test_snapshots.py"}
# Scores the reading list only; its set-level check reads the relevance set's list.
RANKING_TESTS = "test_ranking.py"
SET_FILES = ("items.jsonl", "set.toml", "derived.toml", "probes.toml", "probes.jsonl")
GRADE = {tier: grade for grade, tier in TIERS.items()}
LABELS = tuple(RELEVANCE_POINTS)  # Perfectly, Somewhat, Not Relevant

# A judge with errors drawn per item misses some controls: accepted knowingly, as a team would.
KNOWN_MISSES = ("--accept-control-miss", "a judge with errors drawn per item: its misses are known")


def versions(copies: int) -> list[str]:
    """The copies' prompt versions, oldest first: 1.0 is the one accepted."""
    return [f"1.{k}" for k in range(copies)]


def _set_toml(text: str) -> str:
    """set.toml without its per-version tables: they name the built-in versions (pairwise's
    imported 0.1 and the 16 items its 1.0 recorded), so every copy judges every item."""
    kept = text.split('\n[versions."', 1)[0] + "\n"
    expected = {k: v for k, v in tomllib.loads(text).items() if k != "versions"}
    assert tomllib.loads(kept) == expected, "[versions.*] tables are not the file's last"
    return kept


def _copy_set(root: Path, judge: str) -> dict[str, Any]:
    """The committed set and the files its set.toml names; its set.toml, as read."""
    source, target = ROOT / "planted_sets" / judge, root / "planted_sets" / judge
    target.mkdir(parents=True)
    for name in SET_FILES:
        if (source / name).is_file():
            text = (source / name).read_text(encoding="utf-8")
            (target / name).write_text(_set_toml(text) if name == "set.toml" else text, "utf-8")
    config = tomllib.loads((target / "set.toml").read_text(encoding="utf-8"))
    if config.get("reading_list"):
        shutil.copy(source / config["reading_list"], target)
    if config.get("sme_labels"):
        sme = root / "planted_sets" / "sme"
        sme.mkdir()
        shutil.copy(ROOT / "planted_sets" / "sme" / config["sme_labels"], sme)
    return config


def _copy_suite(root: Path, config: dict[str, Any]) -> None:
    tests = root / "regression_tests"
    tests.mkdir()
    for path in sorted((ROOT / "regression_tests").glob("test_*.py")):
        ranking_only = path.name == RANKING_TESTS and not config.get("reading_list")
        if path.name not in NOT_COPIED and not ranking_only:
            shutil.copy(path, tests)
    (root / "pytest.ini").write_text(INI, encoding="utf-8")


def _copy_prompts(root: Path, judge: str, copies: int) -> None:
    prompts, built_in = root / "prompts" / judge, PROMPTS_ROOT / judge
    prompts.mkdir(parents=True)
    # relevance's reply shapes name its built-in versions (1.1 asks for another shape).
    toml = without_reply_shapes(judge) if judge == "relevance" else None
    (prompts / "judge.toml").write_text(
        toml or (built_in / "judge.toml").read_text(encoding="utf-8"), "utf-8"
    )
    add_copies(root, judge, versions(copies))


def add_copies(root: Path, judge: str, names: list[str]) -> None:
    """Prompt versions `names`, each a byte-identical copy of the judge's template."""
    prompts, built_in = root / "prompts" / judge, PROMPTS_ROOT / judge
    template = built_in / TEMPLATES[judge]
    for version in names:  # byte for byte: the same prompt re-recorded
        if template.is_dir():
            shutil.copytree(template, prompts / version)
        else:
            shutil.copy(built_in / f"{TEMPLATES[judge]}.md", prompts / f"{version}.md")


def write_project(root: Path, judge: str, copies: int) -> None:
    """The built-in judge, its committed set and suite, and `copies` copies of its prompt."""
    shutil.rmtree(root / "planted_sets", ignore_errors=True)  # the fixture's own small set
    shutil.rmtree(root / "regression_tests")
    _copy_suite(root, _copy_set(root, judge))
    _copy_prompts(root, judge, copies)


@dataclass(frozen=True)
class Answer:
    """What one request asks: its subject's right values and the facet it is about."""

    truth: tuple[tuple[str, Any], ...]
    facet: str | None
    criteria: tuple[tuple[str, float], ...] = ()  # relevance: names and weights, in order
    control: bool = False  # its subject is a control (or a probe of one)


class ErrorModel(StrEnum):
    """How a judge's wrong judgements fall: each model keeps the mean error rate, so a good
    judge is wrong on about 10% of its calls under every one, and a worse one on 25%."""

    # Each call wrong on its own; a wrong call gives every field it answers another value.
    INDEPENDENT = "independent"
    # Errors stuck to items: twice the error rate of the subjects are hard and each call on
    # one is wrong half the time (on every run and every copy); the rest are always right.
    ITEM_STICKY = "item-sticky"
    # A wrong call gets one field it answers wrong (one facet or dimension), the others right.
    ONE_FIELD = "one-field"
    # Scores drift: a wrong field is one step off its right value (a flag or winner flips).
    DRIFT = "drift"
    # Errors twice as likely on controls as on the rest, at the same mean rate.
    ON_CONTROLS = "on-controls"
    # Errors twice as likely on planted defects (every non-control) as on controls.
    ON_DEFECTS = "on-defects"
    # A steady judge: wrong on the same subjects every time, with the same wrong answer
    # (temperature 0); its re-records repeat it exactly.
    STEADY = "steady"


def _relevance_labels(level: int, criteria: tuple[tuple[str, float], ...]) -> dict[str, str]:
    """Labels whose weighted score gives `level`, by criterion name whatever their order (an
    order probe must see the same labels): the first combination, names sorted, that does."""
    names = sorted(name for name, _ in criteria)
    weights = dict(criteria)
    for labels in itertools.product(LABELS, repeat=len(names)):
        points = {n: RELEVANCE_POINTS[label] for n, label in zip(names, labels, strict=True)}
        if score_to_level(weighted_score(weights, points)) == level:
            return dict(zip(names, labels, strict=True))
    raise AssertionError(f"no labels give level {level} on {criteria}")


def _reply(judge: str, values: dict[str, Any], answer: Answer) -> dict[str, Any]:
    """The reply JSON a built-in judge's prompt asks for, carrying `values`."""
    if judge == "product_identity":
        match = values["match"] == 1
        return {
            "reference_product": "the reference's product",
            "answer_product": "the same product" if match else "another product",
            "product_identity_match": match,
            **{f: values[f] for f in ("factual_accuracy", "completeness", "causal_reasoning")},
            "rationale": "drawn",
        }
    if judge == "geval":
        return {"score": values[str(answer.facet)], "rationale": "drawn"}
    if judge == "relevance":
        labels = _relevance_labels(values["level"], answer.criteria)
        entries = [{"name": n, "relevance": labels[n], "evidence": ""} for n, _ in answer.criteria]
        return {"criteria": entries}
    if judge == SCAFFOLD:
        return {"accuracy": values["accuracy"], "helpfulness": values["helpfulness"],
                "rationale": "drawn"}  # fmt: skip
    # pairwise: output_1 is shown first in the original order, output_2 in the swapped one.
    winner = values[f"winner_{answer.facet}"]
    first = 1 if answer.facet == "original" else 2
    return {"winner": "a" if winner == first else "b", "rationale": "drawn"}


@dataclass
class SeededGoodJudge:
    """Right with probability 1 - `error` per call, its errors falling as `model` says
    (seeded per request body and per how many identical requests came before)."""

    judge: str
    answers: dict[str, Answer]  # prompt as sent -> what it asks
    scales: dict[str, tuple[int, int]]
    seed: str
    model: ErrorModel = ErrorModel.INDEPENDENT
    error: float = 1 - GOOD  # the mean error rate; a test may raise it between recordings
    seen: Counter[str] = field(default_factory=Counter)
    right: Counter[bool] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        subjects = list(self.answers.values())
        self._controls = sum(a.control for a in subjects) / len(subjects) if subjects else 0.0

    def __call__(self, received: Received) -> str:
        prompt = received.body["messages"][-1]["content"]
        answer = self.answers[prompt]
        body = hashlib.sha256(json.dumps(received.body, sort_keys=True).encode()).hexdigest()
        with self._lock:
            rng = random.Random(f"{self.seed}|{body}|{self.seen[body]}")
            if self.model is ErrorModel.STEADY:  # by the subject's prompt alone
                rng = random.Random(f"{self.seed}|steady|{prompt}")
            self.seen[body] += 1
            right = rng.random() >= self._error_of(answer, prompt, self.error)
            self.right[right] += 1
        values = dict(answer.truth)
        if not right:
            answered = self._answered(answer)
            if self.model is ErrorModel.ONE_FIELD:
                answered = [rng.choice(answered)]
            for name in answered:
                values[name] = self._wrong(name, values[name], rng)
        return json.dumps(_reply(self.judge, values, answer))

    def _error_of(self, answer: Answer, prompt: str, error: float) -> float:
        """This call's chance of being wrong under the model, at mean rate `error`."""
        if self.model is ErrorModel.ITEM_STICKY:
            # Hard or not by the subject's prompt alone: the same on every run and copy.
            mark = hashlib.sha256(f"{self.seed}|hard|{prompt}".encode()).digest()
            hard = int.from_bytes(mark[:4], "big") / 2**32 < min(1.0, 2 * error)
            return 0.5 if hard else 0.0
        if self.model in (ErrorModel.ON_CONTROLS, ErrorModel.ON_DEFECTS):
            favoured = answer.control == (self.model is ErrorModel.ON_CONTROLS)
            share = self._controls if self.model is ErrorModel.ON_CONTROLS else 1 - self._controls
            # share * 2r + (1 - share) * r = error
            base = error / (1 + share)
            return min(1.0, 2 * base if favoured else base)
        return error

    def _wrong(self, name: str, value: int, rng: random.Random) -> int:
        low, high = self.scales[name]
        if self.model is ErrorModel.DRIFT:
            steps = [v for v in (value - 1, value + 1) if low <= v <= high]
            return rng.choice(steps)
        return rng.choice([v for v in range(low, high + 1) if v != value])

    def _answered(self, answer: Answer) -> list[str]:
        if self.judge == "geval":
            return [str(answer.facet)]
        if self.judge == "pairwise":
            return [f"winner_{answer.facet}"]
        return list(self.scales)


def good_judge(
    root: Path,
    judge: str,
    version: str,
    seed: str,
    model: ErrorModel = ErrorModel.INDEPENDENT,
    *,
    shape: Shape | None = None,
) -> SeededGoodJudge:
    """The good judge of the project's set: every subject's prompt rendered beforehand.
    `shape`: the right values of the set's items (default: the committed set's)."""
    prompts = root / ("judge_prompts" if judge == SCAFFOLD else "prompts")
    spec: JudgeSpec = load_catalog(prompts)[judge]
    planted = load_planted_set(root / "planted_sets", spec)
    shape = shape or load_shape(judge)
    # Each subject, its right values and whether it is a control (a probe: as its item).
    subjects: list[tuple[Subject, dict[str, Any], bool]] = []
    for item in planted.items:
        subject = Subject(item.id, item.category, item.control, item.inputs, item.expect)
        subjects.append((subject, shape.truth[item.id], item.control))
    for item in planted.reading_list:
        level = min(GRADE[item.category], 3)
        subject = Subject(item.id, item.category, False, item.inputs)
        subjects.append((subject, {"level": level}, False))
    probes = load_probe_set(planted)
    for probe in probes.items if probes else ():
        clean = planted.item(probe.id)
        truth, control = shape.truth[probe.id], clean.control
        if probe.probe == "dummy":  # a non-answer: the lowest of every scale, never a control
            truth = {name: low for name, (low, _) in shape.scales.items()}
            control = False
        subjects.append((probe.subject(clean), truth, control))
    answers: dict[str, Answer] = {}
    for subject, truth, control in subjects:
        criteria = tuple((c["name"], c["weight"]) for c in subject.inputs.get("criteria", ()))
        for facet, request in first_requests(spec, version, subject).items():
            answer = Answer(tuple(sorted(truth.items())), facet, criteria, control)
            assert answers.setdefault(request.prompt, answer) == answer, subject.item_id
    return SeededGoodJudge(judge, answers, shape.scales, seed, model=model)


@dataclass(frozen=True)
class Copy:
    """One re-record's verdict: its report's word, reason lines and failed tests."""

    version: str
    word: str
    reasons: tuple[str, ...]
    failed: tuple[str, ...]

    def lines(self) -> list[str]:
        return [f"{self.version}: {self.word}", *self.reasons, *self.failed]

    @property
    def tests(self) -> list[str]:
        """The failed tests' function names."""
        return [line.split("::", 1)[1].split("[", 1)[0] for line in self.failed]


def failed_tests(result: pytest.RunResult, judge: str, version: str) -> list[str]:
    """The -rA summary lines of this version's failed or erred tests (1.1, not 1.10)."""
    mark = re.compile(rf"\[{judge}-{re.escape(version)}[-\]]")
    failed = [line for line in result.outlines if line.startswith(("FAILED ", "ERROR "))]
    return [line for line in failed if mark.search(line)]


def reason_lines(report: Path) -> tuple[str, ...]:
    """The report's verdict and its reasons: the lines above its first table."""
    lines = report.read_text(encoding="utf-8").splitlines()[1:]
    head = itertools.takewhile(lambda line: not line.startswith("|"), lines)
    return tuple(f"  {line}" for line in head if line.strip())


@dataclass(frozen=True)
class Remeasure:
    copies: list[Copy]  # copy 1 on: the re-records
    accepted: tuple[int, str]  # `judges baseline --accept 1.0`: exit code and output
    wrong: int  # wrong draws over the whole recording
    calls: int
    # The same re-records gated by the accepted copy's table (see `inherit_accepted_table`).
    inherited: list[Copy] | None = None


def _verdicts(project: JudgesProject, judge: str, names: list[str]) -> list[Copy]:
    """Replay offline; each copy's report word, reasons and failed tests."""
    calls = len(project.judge.calls)
    replay = project.run("-rA")
    assert len(project.judge.calls) == calls  # offline
    return _read_verdicts(project.root, replay, judge, names)


def _read_verdicts(
    root: Path, replay: pytest.RunResult, judge: str, names: list[str]
) -> list[Copy]:
    found = []
    for version in names:
        folder = root / "reports" / judge / version
        report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
        failed = tuple(f"  {line[:300]}" for line in failed_tests(replay, judge, version))
        reasons = reason_lines(folder / "report.md")
        found.append(Copy(version, report["verdict_word"], reasons, failed))
    return found


def inherit_accepted_table(root: Path, judge: str, accepted: str) -> None:
    """Only the accepted version's table left in gates.toml: the others inherit it.

    `baseline --accept` writes every later recorded version a table of its own, with floors
    suggested from that version's own run, which it meets by construction; a version
    recorded after the acceptance is gated by the accepted one's floors (and baseline).
    Each copy keeps its own accepted misses and probe failures (their own files)."""
    files = SetFolder(root / "planted_sets", judge)
    files.write_gates(
        {key: table for key, table in files.read_gates().items() if key[1] == accepted}
    )


def remeasure(
    project: JudgesProject,
    monkeypatch: pytest.MonkeyPatch,
    judge: str,
    copies: int,
    *,
    inherited: bool = False,
) -> Remeasure:
    """Record every copy, accept the first, replay the rest offline; their verdicts (and,
    if `inherited`, again with the accepted copy's table for every copy)."""
    root = project.root
    write_project(root, judge, copies)
    monkeypatch.chdir(root)  # `python -m judges` finds the project's prompts via pytest.ini
    names = versions(copies)
    fake = good_judge(root, judge, names[0], seed=f"good-judge-remeasure|{judge}")
    project.judge.content = fake
    # One call at a time: identical requests of the copies get their draws in one order.
    recorded = project.run("--judge-concurrency", "1", record="all")
    assert fake.right.total() == len(project.judge.calls) > 0, recorded.stdout.str()[-3000:]
    accepted = baseline(
        root,
        judge,
        "--accept",
        names[0],
        *KNOWN_MISSES,
    )
    found = Remeasure(
        _verdicts(project, judge, names[1:]), accepted, fake.right[False], fake.right.total()
    )
    if not inherited or accepted[0] != 0:
        return found
    inherit_accepted_table(root, judge, names[0])
    return replace(found, inherited=_verdicts(project, judge, names[1:]))


def remeasure_battery(
    project: JudgesProject,
    monkeypatch: pytest.MonkeyPatch,
    judge: str,
    copies: int,
    model: ErrorModel,
    error_after: float = 1 - GOOD,
) -> Remeasure:
    """Copy 1.0 recorded by a good judge whose errors fall as `model` says; then the later
    copies, written and recorded after it, by the same judge now wrong on `error_after` of
    its calls. `judges baseline --accept 1.0` accepts 1.0 (and, as for every recorded
    version, each copy's own misses and probe failures: per-item tests are the team's
    review, not the verdict's); the later copies are then gated by 1.0's table alone, its
    floors and its baseline, as a version recorded after the acceptance is, and replayed
    offline."""
    root = project.root
    write_project(root, judge, 1)
    monkeypatch.chdir(root)  # `python -m judges` finds the project's prompts via pytest.ini
    names = versions(copies)
    fake = good_judge(root, judge, names[0], f"good-judge-battery|{judge}|{model}", model)
    project.judge.content = fake
    first = project.run("--judge-concurrency", "1", record="all")
    assert fake.right.total() == len(project.judge.calls) > 0, first.stdout.str()[-3000:]
    add_copies(root, judge, names[1:])
    load_catalog.cache_clear()  # in-process runs share the loaded judges
    fake.error = error_after
    later = project.run("--judge-concurrency", "1", record="missing")
    assert fake.right.total() == len(project.judge.calls), later.stdout.str()[-3000:]
    recorded = {path.name for path in (root / "cassettes" / judge).iterdir()}
    assert recorded == set(names), (sorted(recorded), later.stdout.str()[-3000:])
    accepted = baseline(
        root,
        judge,
        "--accept",
        names[0],
        *KNOWN_MISSES,
    )
    if accepted[0] == 0:
        inherit_accepted_table(root, judge, names[0])
    return Remeasure(
        _verdicts(project, judge, names[1:]), accepted, fake.right[False], fake.right.total()
    )


def scaffold_battery(
    pytester: pytest.Pytester,
    fake_judge: FakeJudge,
    copies: int,
    model: ErrorModel,
    error_after: float = 1 - GOOD,
) -> Remeasure:
    """`remeasure_battery` on the `judges init` scaffold, as a new user runs it: `judges
    init` in an empty repository (the `repository` fixture, the current folder), prompt 1.0
    recorded by a good judge whose errors fall as `model` says, then byte-identical copies
    1.1... recorded after it at `error_after`; `judges baseline --accept 1.0`, 1.0's table
    alone in gates.toml, and every copy replayed offline."""
    root = pytester.path
    code, out = command(["init", SCAFFOLD, "--model", MODEL])
    assert code == 0, out
    pytester.syspathinsert()  # the scaffold's verdict package, as its pytest.ini's pythonpath
    names = versions(copies)
    seed = f"good-judge-battery|{SCAFFOLD}|{model}"
    fake = good_judge(root, SCAFFOLD, names[0], seed, model, shape=scaffold_shape(root))
    fake_judge.content = fake
    live = ["--judge-model", MODEL, "--judge-base-url", fake_judge.url, "--judge-concurrency", "1"]
    first = pytester.runpytest_inprocess(*INNER_OPTIONS, "--record", *live)
    assert fake.right.total() == len(fake_judge.calls) > 0, first.stdout.str()[-3000:]
    prompts = root / "judge_prompts" / SCAFFOLD
    for version in names[1:]:
        (prompts / f"{version}.md").write_bytes((prompts / f"{names[0]}.md").read_bytes())
    load_catalog.cache_clear()  # in-process runs share the loaded judges
    fake.error = error_after
    later = pytester.runpytest_inprocess(*INNER_OPTIONS, "--record=missing", *live)
    assert fake.right.total() == len(fake_judge.calls), later.stdout.str()[-3000:]
    calls = len(fake_judge.calls)
    accepted = command(
        [
            "baseline",
            SCAFFOLD,
            "--accept",
            names[0],
            *KNOWN_MISSES,
        ]
    )
    if accepted[0] == 0:
        inherit_accepted_table(root, SCAFFOLD, names[0])
    replay = pytester.runpytest_inprocess(*INNER_OPTIONS, "-rA")
    assert len(fake_judge.calls) == calls  # offline
    return Remeasure(
        _read_verdicts(root, replay, SCAFFOLD, names[1:]),
        accepted,
        fake.right[False],
        fake.right.total(),
    )
