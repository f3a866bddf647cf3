"""Helpers for the plugin's integration tests: a fake judge server and a pytester project.

The fake judge is an OpenAI-compatible HTTP server from the standard library, run in a
thread of the outer test process (one per test module, its state reset per test); the
inner pytest runs reach it through `--judge-base-url`. It also answers the Anthropic
Messages API (`POST /v1/messages`), reached through the SDK's `ANTHROPIC_BASE_URL`, with
the same verdicts, latency, counters and rate limits. It answers every chat completion
with a verdict chosen per planted item, so a test can make the judge miss or fix an item
and re-record.

Inner runs without xdist run in-process (`runpytest_inprocess`): no interpreter start, no
re-import of the SDKs. Runs with `-n 2` are subprocesses; the tests keep them only where
workers change the behaviour (the shared ledger, network blocking in each worker, rows
merged into the controller's reports).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from judges.cli.main import main as judges_main
from judges.core.spec import load_catalog

FAKE_KEY = "sk-fakeKEY1234567890abcdefXYZ"
SECRET_HEADERS = {
    "openai-organization": "org-SECRET123456789",
    "x-request-id": "req_abc123",
    "set-cookie": "session=SECRET; Path=/; HttpOnly",
}
MODEL = "local:smollm2-135m"
ANTHROPIC_MODEL = "anthropic:claude-sonnet-4-6"
FAKE_ANTHROPIC_KEY = "sk-ant-fakeKEY1234567890abcdefXYZ"
CHAT_PATH = "/v1/chat/completions"
MESSAGES_PATH = "/v1/messages"
MODEL_SLUG = "local-smollm2-135m"
JUDGE = "product_identity"
PLANTED = "regression_tests/test_planted.py::test_planted_item"
GATES = "regression_tests/test_gates.py::test_detection_gates"

# Features whose behaviour depends on xdist workers run once without and once with them
# (STYLE.md point 10); the others run in-process only.
WORKERS = [pytest.param("0", id="n0"), pytest.param("2", id="n2")]

# The two regression test files of the project, as a user of the plugin writes them.
TEST_PLANTED = '''
"""One test per planted item, prompt version and judge model."""

from judges.core.checks import assert_expected


def test_planted_item(planted_case, judge_runner):
    (row,) = judge_runner.judge(planted_case)
    assert_expected(row)
'''

TEST_GATES = '''
"""Per-category detection and control false-positive rates."""

from judges.stats.estimates.floors import evaluate


def test_detection_gates(gate_set, judge_runner):
    rows = judge_runner.replay_set(gate_set)
    judge_runner.check_gates(gate_set, "detection", evaluate(rows, judge_runner.gates(gate_set)))
'''

PYTEST_INI = """
[pytest]
xfail_strict = true
testpaths = regression_tests
"""

QUESTION = (
    "A client holds a 12-month barrier reverse convertible on Nestle with a 7% p.a. coupon, "
    "a 65% barrier and a 100% strike. What does she receive at maturity?"
)
REFERENCE = (
    "A barrier reverse convertible (SSPA 1230). The coupon is unconditional. If the 65% "
    "barrier was never touched she gets 100% in cash; if it was and Nestle closes below the "
    "strike, she receives Nestle shares and bears the loss from the strike."
)


def planted_item(
    item_id: str, slug: str, category: str, answer: str, *, control: bool = False
) -> dict[str, Any]:
    """One items.jsonl line in the project's shape; the answer carries a tag naming the item."""
    if control:
        expect = [
            {"field": "factual_accuracy", "op": ">=", "value": 2},
            {"field": "product_identity_match", "op": "!=", "value": False},
        ]
    else:
        expect = [{"field": "factual_accuracy", "op": "<=", "value": 1}]
    return {
        "id": item_id,
        "slug": slug,
        "judge": JUDGE,
        "category": category,
        "control": control,
        "inputs": {
            "question": QUESTION,
            "reference": REFERENCE,
            "answer": f"[item {item_id}] {answer}",
        },
        "expect": expect,
        "provenance": {"source": "hand", "clean_item": None, "perturbation": None, "note": ""},
    }


ITEMS = [
    planted_item(
        "PE-01",
        "control-brc",
        "control",
        "Cash at 100% unless the barrier was touched and Nestle ends below the strike, "
        "then shares; the coupon is paid either way.",
        control=True,
    ),
    planted_item(
        "PE-02",
        "cousin-rc-as-brc",
        "cousin",
        "A plain reverse convertible has no barrier, so she gets shares whenever Nestle "
        "closes below the strike.",
    ),
    planted_item(
        "PE-03",
        "sign-flip-barrier",
        "sign_flip",
        "Touching the barrier guarantees 100% back in cash, whatever Nestle does.",
    ),
]
EXTRA_ITEM = planted_item(
    "PE-04",
    "cousin-autocall",
    "cousin",
    "It is an autocallable: it redeems early whenever Nestle is above its initial level.",
)

_ITEM_TAG = re.compile(r"\[item ([A-Z]{2,4}-\d{2,3})\]")


def versions() -> list[str]:
    """The prompt versions of the installed product_identity judge, oldest first."""
    return load_catalog()[JUDGE].versions


def cassette_name(item: dict[str, Any]) -> str:
    return f"{item['id']}-{item['slug']}.yaml"


# -- the fake judge -----------------------------------------------------------------------


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float = field(default_factory=time.monotonic)  # when it arrived

    @property
    def item_id(self) -> str | None:
        prompt = self.body["messages"][-1]["content"]
        found = _ITEM_TAG.search(prompt)
        return found.group(1) if found else None


def product_identity_verdict(score: int, rationale: str) -> dict[str, Any]:
    """A product_identity reply: factual accuracy `score`, the product matched from 2 up."""
    return {
        "reference_product": "barrier reverse convertible",
        "answer_product": "barrier reverse convertible" if score >= 2 else "other product",
        "product_identity_match": score >= 2,
        "factual_accuracy": score,
        "completeness": 2,
        "causal_reasoning": 2,
        "rationale": rationale,
    }


@dataclass
class FakeJudge:
    """What the fake judge says: `scores[item_id]` is its factual_accuracy for that item.

    A score of 2 or more comes with `product_identity_match: true`, below 2 with `false`,
    so the verdict module's identity cap never changes what the test asked for.
    """

    scores: dict[str, int] = field(
        default_factory=lambda: {"PE-01": 3, "PE-02": 1, "PE-03": 1, "PE-04": 0}
    )
    prompt_tokens: int = 100
    completion_tokens: int = 20
    received: list[Received] = field(default_factory=list)
    url: str = ""
    verdict: Callable[[str | None], dict[str, Any]] | None = None
    fail_next: int = 0  # answer this many chat completions with a 500 first
    limit_next: int = 0  # answer this many with a 429 and `Retry-After: retry_after` first
    limit_status: int = 429  # or 529, Anthropic's "overloaded"
    retry_after: str = "1"
    limited_at: list[float] = field(default_factory=list)  # when each 429 was sent
    # Hostile servers: the reply's content as raw text, or the whole HTTP answer.
    content: Callable[[Received], str] | None = None
    respond: Callable[[Received], tuple[int, dict[str, Any]]] | None = None
    delay_s: float = 0.0  # wait this long before answering a chat completion
    in_flight: int = 0  # chat completions being answered now
    max_in_flight: int = 0  # the most ever answered at once
    system_fingerprint: str | None = None  # sent in each reply, as hosted APIs do
    # From the `hold_from`-th chat completion on (1-based; 0: never), hold each answer until
    # `release` is set: calls in flight for as long as a test needs, with no sleeping.
    hold_from: int = 0
    release: threading.Event = field(default_factory=threading.Event)
    answered: int = 0  # chat completions that reached the answering step
    # The limited answer waits until this many calls are in flight, so a whole first burst
    # has arrived before the client can learn of the limit (a loaded machine starts its
    # threads late; a late arrival would look like a call sent during the pause).
    limit_when_in_flight: int = 0
    # Other routes (the batch APIs): (method, path, body, headers) -> (status, body, type).
    routes: Callable[[str, str, bytes, dict[str, str]], tuple[int, bytes, str] | None] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        """Back to an honest, quick judge with no calls seen (one server serves a module)."""
        fresh = FakeJudge()
        names = ("scores", "prompt_tokens", "completion_tokens", "verdict", "fail_next")
        for name in (*names, "system_fingerprint", "limit_next", "limit_status", "retry_after"):
            setattr(self, name, getattr(fresh, name))
        self.content = self.respond = self.routes = None
        self.delay_s = 0.0
        self.release.set()  # frees any answer still held by the previous test
        self.hold_from, self.release, self.answered = 0, threading.Event(), 0
        self.limit_when_in_flight = 0
        with self._lock:
            self.received.clear()
            self.in_flight = self.max_in_flight = 0
            self.limited_at.clear()

    def reply(self, item_id: str | None) -> dict[str, Any]:
        if self.verdict is not None:
            return self.verdict(item_id)
        score = self.scores.get(item_id or "", 3)
        return product_identity_verdict(score, f"fake judge verdict for {item_id}")

    @property
    def calls(self) -> list[Received]:
        """The judge calls received, chat completions and Anthropic messages alike."""
        with self._lock:
            return [r for r in self.received if r.path in (CHAT_PATH, MESSAGES_PATH)]

    @property
    def anthropic_url(self) -> str:
        """What `ANTHROPIC_BASE_URL` is set to: the SDK appends `/v1/messages`."""
        return self.url.removesuffix("/v1")

    def calls_for(self, item_id: str) -> int:
        return sum(1 for r in self.calls if r.item_id == item_id)

    def hold_until_in_flight(self, n: int, timeout_s: float = 60.0) -> None:
        """Hold every answer until `n` calls are in flight at once (or the timeout), then
        answer them all: proves concurrency by a count, not by racing a delay."""
        self.hold_from = 1
        # This test's event: a thread still waiting when the next test resets the judge must
        # not release that test's held answers.
        release = self.release

        def release_when_all_arrived() -> None:
            deadline = time.monotonic() + timeout_s
            while self.in_flight < n and time.monotonic() < deadline and not release.is_set():
                time.sleep(0.01)
            release.set()

        threading.Thread(target=release_when_all_arrived, daemon=True).start()


def sigint_at_default() -> None:
    """For `preexec_fn`: a launcher without job control (a background job, `nohup`, some CI
    runners) starts its children with SIGINT ignored, and a child inherits that; the tests
    that interrupt an inner run send it SIGINT, so the child takes the default back first."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class _FakeServer(ThreadingHTTPServer):
    # socketserver's default backlog is 5: a sixth concurrent connect is dropped and its
    # SYN retried a second later, so a call "sent" at once would arrive 1 s late.
    request_queue_size = 128


def _handler(judge: FakeJudge) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep the outer test output quiet

        def _route(self, method: str, raw: bytes) -> bool:
            """Answer from `judge.routes` (the batch APIs); False if it has no such route."""
            found = None
            if judge.routes is not None:
                headers = dict(self.headers.items())
                found = judge.routes(method, urlsplit(self.path).path, raw, headers)
            if found is None:
                return False
            status, data, kind = found
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            for name, value in SECRET_HEADERS.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            return True

        def do_GET(self) -> None:
            if not self._route("GET", b""):
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self._route("POST", raw):
                return
            try:
                body = json.loads(raw)
            except ValueError:
                body = {}
            path = urlsplit(self.path).path
            received = Received(path, dict(self.headers.items()), body)
            with judge._lock:
                judge.received.append(received)
            if path not in (CHAT_PATH, MESSAGES_PATH):
                self._send(404, {"error": {"message": f"no route {path}"}})
                return
            with judge._lock:
                judge.in_flight += 1
                judge.max_in_flight = max(judge.max_in_flight, judge.in_flight)
            try:
                self._answer(received, body)
            finally:
                with judge._lock:
                    judge.in_flight -= 1

        def _answer(self, received: Received, body: dict[str, Any]) -> None:
            with judge._lock:
                limit, judge.limit_next = judge.limit_next > 0, max(judge.limit_next - 1, 0)
            if limit:  # at once: the client learns of the limit before its other calls end
                deadline = time.monotonic() + 30
                while judge.in_flight < judge.limit_when_in_flight and time.monotonic() < deadline:
                    time.sleep(0.005)
                kind = "overloaded_error" if judge.limit_status == 529 else "rate_limit_error"
                error = {"type": "error", "error": {"message": "slow down", "type": kind}}
                self._send(judge.limit_status, error, {"Retry-After": judge.retry_after})
                with judge._lock:
                    judge.limited_at.append(time.monotonic())
                return
            time.sleep(judge.delay_s)
            with judge._lock:
                judge.answered += 1
                held = 0 < judge.hold_from <= judge.answered
            if held:
                judge.release.wait(timeout=60)
            with judge._lock:
                fail, judge.fail_next = judge.fail_next > 0, max(judge.fail_next - 1, 0)
            if fail:
                self._send(500, {"error": {"message": "overloaded", "type": "server_error"}})
                return
            if judge.respond is not None:
                self._send(*judge.respond(received))
                return
            self._send(200, judged(judge, received))

        def _send(
            self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
        ) -> None:
            data = json.dumps(payload).encode()  # NaN stays NaN: Python's json writes it
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in {**SECRET_HEADERS, **(headers or {})}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


def judged(judge: FakeJudge, received: Received) -> dict[str, Any]:
    """The reply body to one judge request (chat completion or message), sent at once or
    in a batch's results."""
    if judge.content is not None:
        content = judge.content(received)
    else:
        content = json.dumps(judge.reply(received.item_id))
    reply = message if received.path == MESSAGES_PATH else completion
    return reply(judge, received.body, content)


def completion(judge: FakeJudge, body: dict[str, Any], content: str) -> dict[str, Any]:
    """An OpenAI chat completion carrying `content`, with the judge's token usage."""
    return {
        # From the request, not the arrival order: concurrent recordings stay comparable.
        "id": "chatcmpl-fake"
        + hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12],
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": body.get("model", "smollm2-135m"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": judge.prompt_tokens,
            "completion_tokens": judge.completion_tokens,
            "total_tokens": judge.prompt_tokens + judge.completion_tokens,
        },
        **({"system_fingerprint": judge.system_fingerprint} if judge.system_fingerprint else {}),
    }


def message(judge: FakeJudge, body: dict[str, Any], content: str) -> dict[str, Any]:
    """An Anthropic Messages API reply carrying `content`, with the judge's token usage."""
    return {
        "id": "msg_fake"
        + hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12],
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude-sonnet-4-6"),
        "content": [{"type": "text", "text": content}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": judge.prompt_tokens, "output_tokens": judge.completion_tokens},
    }


class FakeJudgeServer:
    """The fake judge on 127.0.0.1, port chosen by the system, served from a thread."""

    def __init__(self) -> None:
        self.judge = FakeJudge()
        self.httpd = _FakeServer(("127.0.0.1", 0), _handler(self.judge))
        self.httpd.daemon_threads = True
        self.judge.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)


# -- the pytester project -----------------------------------------------------------------

# Installed for the project's own suite, unused by these inner runs: left out, each xdist
# worker starts seconds faster on a busy machine.
_UNRELATED_PLUGINS = [
    *("-p", "no:hypothesispytest", "-p", "no:syrupy", "-p", "no:benchmark"),
    *("-p", "no:recording", "-p", "no:anyio"),
]


@dataclass(frozen=True)
class Rebuilt:
    """What `python -m judges report` returned and printed."""

    code: int
    out: str
    err: str


class JudgesProject:
    """A pytester directory laid out like the project: planted set, tests, cassettes, reports."""

    def __init__(self, pytester: pytest.Pytester, judge: FakeJudge) -> None:
        self.pytester = pytester
        self.judge = judge
        self.root = pytester.path
        self.set_dir = self.root / "planted_sets" / JUDGE
        pytester.makefile(".ini", pytest=PYTEST_INI)
        pytester.makepyfile(
            **{
                "regression_tests/test_planted": TEST_PLANTED,
                "regression_tests/test_gates": TEST_GATES,
            }
        )
        self.write_items(ITEMS)

    @property
    def items_path(self) -> Path:
        return self.set_dir / "items.jsonl"

    def write_items(self, items: list[dict[str, Any]]) -> None:
        self.set_dir.mkdir(parents=True, exist_ok=True)
        text = "".join(json.dumps(item) + "\n" for item in items)
        self.items_path.write_text(text, encoding="utf-8")

    def write_set_file(self, name: str, text: str) -> Path:
        path = self.set_dir / name
        path.write_text(text, encoding="utf-8")
        return path

    def run(
        self,
        *args: str,
        workers: str = "0",
        record: str | None = None,
        inprocess: bool | None = None,
        base_url: str | None = None,
    ) -> pytest.RunResult:
        """`pytest -n <workers> [--record[=mode] --judge-base-url <fake>] args`.

        In this process (seconds faster, for tests where workers and process boundaries are
        not the point) or in a subprocess; by default in-process exactly without workers.
        """
        argv = ["-p", "no:cacheprovider", *_UNRELATED_PLUGINS, "-ra", "-n", workers]
        if record is not None:
            flag = "--record" if record == "all" else f"--record={record}"
            argv += [flag, "--judge-base-url", base_url or self.judge.url]
        if workers == "0" if inprocess is None else inprocess:
            return self.pytester.runpytest_inprocess(*argv, *args)
        return self.pytester.runpytest_subprocess(*argv, *args, timeout=300)

    def report(self, *args: str) -> Rebuilt:
        """`python -m judges report` in the project (its `main`, in this process)."""
        out, err = io.StringIO(), io.StringIO()
        folders = ["--reports", str(self.root / "reports")]
        folders += ["--planted-sets", str(self.root / "planted_sets")]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = judges_main(["report", *folders, *args])
        return Rebuilt(code, out.getvalue(), err.getvalue())

    def cassette_dir(self, version: str) -> Path:
        return self.root / "cassettes" / JUDGE / version / MODEL_SLUG

    def cassettes(self) -> list[Path]:
        root = self.root / "cassettes"
        return sorted(root.rglob("*.yaml")) if root.is_dir() else []

    def results(self) -> dict[tuple[str, str, str], dict[str, Any]]:
        """Every row of reports/*/*/results.jsonl by (version, item, run), latency left out."""
        rows = {}
        for path in sorted((self.root / "reports").glob("*/*/results.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                row.pop("latency_s", None)
                rows[(row["prompt_version"], row["item_id"], row["run"])] = row
        return rows

    def files_containing(self, needle: str) -> list[Path]:
        """Every file under the project whose bytes hold `needle`."""
        found = []
        for path in self.root.rglob("*"):
            if path.is_file() and needle.encode() in path.read_bytes():
                found.append(path)
        return found


# The session removes its scratch files (the cost ledger among them) when it ends; a
# project that reads its ledger afterwards keeps a copy when the session finishes.
KEEP_LEDGER = """
import shutil
from pathlib import Path


def pytest_sessionfinish(session):
    for ledger in Path(session.config.rootpath, ".judges-tmp").glob("ledger-*.jsonl"):
        shutil.copy(ledger, Path(session.config.rootpath, ledger.name))
"""


def kept_ledger(root: Path) -> Path:
    """The ledger KEEP_LEDGER copied, and proof that the session removed its own."""
    assert not (root / ".judges-tmp").exists(), "the session left its scratch files"
    (ledger,) = root.glob("ledger-*.jsonl")
    return ledger


def committed_peak(ledger: Path) -> tuple[float, float]:
    """Replay a cost ledger: the most ever spent + held at once, and the final spend."""
    spent, peak = 0.0, 0.0
    held: dict[str, float] = {}
    for text in ledger.read_text(encoding="utf-8").splitlines():
        entry = json.loads(text)
        if entry["kind"] == "hold":
            held[entry["hold"]] = entry["cost_usd"]
        elif entry["kind"] == "release":
            held.pop(entry["hold"])
        else:
            spent += entry["cost_usd"]
        peak = max(peak, spent + sum(held.values()))
    return peak, spent


def nodeid(version: str, item: dict[str, Any]) -> str:
    return f"{PLANTED}[{JUDGE}-{version}-{item['id']}-{item['slug']}]"


def rerecord_lines(output: str) -> list[str]:
    """The distinct re-record commands printed in a run's output, in order of appearance.

    With CI set, pytest repeats each failure's full message in its short summary.
    """
    found = re.findall(r"Re-record it with:\s+(pytest .*)$", output, flags=re.M)
    return list(dict.fromkeys(found))


def rerecords(output: str, node: str) -> bool:
    """Whether the output prints a `pytest --record...` command for exactly this node id."""
    for command in rerecord_lines(output):
        argv = rerecord_argv(command)
        if node in argv and any(arg.startswith("--record") for arg in argv):
            return True
    return False


def rerecord_argv(command: str) -> list[str]:
    """The arguments of a printed `pytest ...` command, as a shell would split them."""
    words = shlex.split(command)
    assert words[0] == "pytest", command
    return words[1:]


def load_cassette(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


SUITE_FILE = "from judges.pytest_plugin.suite import *  # noqa: F403\n"


def write_team_judge(
    root: Path, package: str, judge: str, module: str, files: dict[str, str], *, suite: bool = True
) -> None:
    """A team's repository whose judge is its own callable, `<package>.judge:judge` (the
    text `module`), named in judge_prompts/<judge>/judge.toml, with the harness's pytest.ini
    (and its planted-set suite in judge_tests/ when `suite`) and `files` beside them."""
    ini = "[pytest]\njudges_prompts = judge_prompts\njudges_planted_sets = planted_sets\n"
    ini += "pythonpath = .\n" + ("testpaths = judge_tests\n" if suite else "")
    written = {
        f"{package}/__init__.py": "",
        f"{package}/judge.py": module,
        f"judge_prompts/{judge}/judge.toml": (
            f'name = "{judge}"\ncallable = "{package}.judge:judge"\n'
            'baseline_model = "openai:gpt-4o-mini"\ndimensions = ["score"]\n'
        ),
        "pytest.ini": ini,
        **files,
    }
    if suite:
        written["judge_tests/test_judges.py"] = SUITE_FILE
    for name, text in written.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def forget_modules(package: str) -> None:
    """Drop `package` and its submodules from sys.modules: the next import reads them
    again, as a new process would."""
    for name in [m for m in sys.modules if m.split(".")[0] == package]:
        del sys.modules[name]
