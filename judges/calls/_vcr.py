"""Everything that touches vcrpy, in one private module imported lazily, and only by the
cassette facade (`judges.calls.cassettes`).

- Match on method, path and the parsed JSON body; never on headers (both SDKs send
  `x-stainless-*` headers that vary by machine) or host and port (the local server's port
  is random).
- Keep only `content-type` in recorded headers: authorisation, keys, cookies, organisation,
  project and request ids never reach disk. Key-shaped strings and every key the session
  knows, and every piece of one in any form, are redacted from bodies, and credential
  query parameters from URIs (`judges.calls.credentials`).
- Drop non-2xx interactions: a retried call leaves only its success.
- Cassettes are written atomically; recording always starts a fresh cassette, so N
  identical requests (repeats) are all recorded and replay in order, each once.
- A record phase records from many threads at once (`threaded_recording`): vcrpy's patch
  is per process, so the transports are patched once and each request goes to the
  cassette its own thread opened, through vcrpy's own stub, cassette and persister: the
  file is the one a sequential recording writes.
- A batch recording answers each thread's requests from downloaded batch results
  (`answering`): recorded by vcrpy as if the network had answered them.
- A judge callable that outlived its time is abandoned (`abandon`): every cassette refuses
  what its thread sends later, so a late request is neither recorded nor answered.
- Only the SDKs' HTTP transport is patched (see `_skipped_patchers`), which keeps opening
  a cassette cheap: most cassettes hold one judgement.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import importlib.util
import json
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import vcr
import yaml
from vcr.cassette import Cassette, CassetteContextDecorator
from vcr.errors import CannotOverwriteExistingCassetteException, MissingMetadataError
from vcr.patch import PATCHER_NAMES
from vcr.persisters.filesystem import CassetteNotFoundError
from vcr.serialize import deserialize, serialize

from judges.calls.backends import error_chain
from judges.calls.cassette_files import FINGERPRINT_KEY
from judges.calls.credentials import scrub, scrub_bytes, strip_credentials
from judges.calls.direct_replay import ReplayMiss, UnreadableCassette
from judges.storage.files import atomic_write_text

_KEEP_HEADERS = {"content-type"}
# The transports the SDKs send through (openai 3.x and anthropic 2.x: httpx2; older: httpx).
_SDK_TRANSPORTS = ("httpx2", "httpx")


class _AtomicPersister:
    """vcrpy's filesystem persister, but writes go through temp file + rename."""

    def __init__(self, fresh: bool) -> None:
        self.fresh = fresh

    def load_cassette(self, cassette_path: str, serializer: Any) -> tuple[list, list]:
        path = Path(cassette_path)
        if self.fresh or not path.is_file():
            raise CassetteNotFoundError()
        try:
            return deserialize(path.read_text(encoding="utf-8"), serializer)
        except (UnicodeDecodeError, ValueError, KeyError, TypeError, yaml.YAMLError) as error:
            # Not vcrpy's CassetteDecodeError: vcrpy swallows that and replays an empty
            # cassette, which would blame the request instead of the file.
            # An empty file or a YAML list reaches vcrpy as None or a list: a TypeError.
            reason = " ".join(str(error).split())[:160]
            if isinstance(error, TypeError):
                reason = "it is empty or not a mapping with 'interactions'"
            raise UnreadableCassette(f"cassette {path} cannot be read ({reason})") from None

    def save_cassette(self, cassette_path: str, cassette_dict: dict, serializer: Any) -> None:
        atomic_write_text(Path(cassette_path), serialize(cassette_dict, serializer))


def _redact(body: Any) -> Any:
    if isinstance(body, bytes):
        return scrub_bytes(body)
    if isinstance(body, str):
        return scrub(body)
    return body


def scrub_request(request: Any) -> Any:
    for name in list(request.headers):
        if name.lower() not in _KEEP_HEADERS:
            del request.headers[name]
    request.body = _redact(request.body)
    request.uri = strip_credentials(request.uri)
    return request


def scrub_response(response: dict[str, Any]) -> dict[str, Any] | None:
    if not 200 <= response["status"]["code"] < 300:
        return None
    response["headers"] = {
        name: value for name, value in response["headers"].items() if name.lower() in _KEEP_HEADERS
    }
    body = response.get("body", {})
    if "string" in body:
        body["string"] = _redact(body["string"])
    return response


# The body of one request is parsed once, not once per recorded interaction it is compared
# with: vcrpy's own body matcher re-parses every stored body for every request.
_CANONICAL: dict[bytes, Any] = {}


def _canonical_body(body: Any) -> Any:
    if body is None:
        return None
    raw = body if isinstance(body, bytes) else str(body).encode()
    if raw not in _CANONICAL:
        try:
            _CANONICAL[raw] = json.dumps(json.loads(raw), sort_keys=True)
        except ValueError:
            _CANONICAL[raw] = raw
    return _CANONICAL[raw]


def json_body(r1: Any, r2: Any) -> None:
    if _canonical_body(r1.body) != _canonical_body(r2.body):
        raise AssertionError("request bodies differ")


@functools.cache
def _skipped_patchers() -> tuple[str, ...]:
    """Every vcrpy patcher but those of the SDK transports that are installed.

    Judge calls only ever go through the SDKs. Left to itself vcrpy, on every cassette it
    opens, re-imports each HTTP library it supports (a missing one is searched for on disk
    again each time) and patches every one it finds: more work than the replay itself.
    Offline runs block sockets as well (judges.calls.network), so nothing else gets out.
    """
    installed = {name for name in _SDK_TRANSPORTS if importlib.util.find_spec(name) is not None}
    return tuple(name for name in PATCHER_NAMES if name not in installed)


def make_vcr(*, record: bool, every_transport: bool = False) -> vcr.VCR:
    """The harness's vcrpy. `every_transport`: patch every HTTP library vcrpy knows (a
    team's judge callable may send through any), not the SDK transports only."""
    recorder = vcr.VCR(
        record_mode="all" if record else "none",
        match_on=("method", "path", "json_body"),
        before_record_request=scrub_request,
        before_record_response=scrub_response,
        decode_compressed_response=True,
        skip_patchers=() if every_transport else _skipped_patchers(),
    )
    recorder.register_matcher("json_body", json_body)
    recorder.register_persister(_AtomicPersister(fresh=record))
    return recorder


class _Threads(threading.local):
    cassette: Any = None
    answer: Any = None  # answers this thread's requests instead of the network (`answering`)
    tap: list[Any] | None = None  # the response bodies of this thread's requests (`tapped`)


@contextmanager
def tapped() -> Iterator[list[Any]]:
    """The body of every response this thread's requests get inside the block, recorded or
    replayed through a cassette opened with `every_transport` (its JSON, or None)."""
    seen: list[Any] = []
    _THREADS.tap = seen
    try:
        yield seen
    finally:
        _THREADS.tap = None


def _tap_responses(recorded: Any) -> None:
    """Send what `recorded` answers or records to this thread's tap, when one is open."""
    play, append = recorded.play_response, recorded.append

    def played(request: Any) -> Any:
        response = play(request)
        _to_tap(response)
        return response

    def appended(request: Any, response: Any) -> None:
        append(request, response)
        _to_tap(response)

    recorded.play_response, recorded.append = played, appended


def _to_tap(response: Any) -> None:
    if _THREADS.tap is None:
        return
    body = (response or {}).get("body", {}).get("string") if isinstance(response, dict) else None
    try:
        _THREADS.tap.append(json.loads(body) if body else None)
    except ValueError:
        _THREADS.tap.append(None)


_THREADS = _Threads()
_threaded = threading.Event()  # set while `threaded_recording` patches the transports
# Threads of judge callables that outlived their time: whatever they send later is refused
# by every cassette (vcrpy's patch is per process, so it would land in the one open then).
_ABANDONED: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


class AbandonedRequest(RuntimeError):
    """A request sent by a judge callable after its judgement timed out."""


def abandon(thread: threading.Thread) -> None:
    """From now on, no cassette records or answers a request `thread` sends."""
    _ABANDONED.add(thread)


def _refuse_abandoned(recorded: Any) -> None:
    """Make `recorded` refuse what an abandoned thread sends: neither written nor answered."""
    play, append = recorded.play_response, recorded.append

    def check() -> None:
        if threading.current_thread() in _ABANDONED:
            raise AbandonedRequest(
                f"{threading.current_thread().name}: a request sent after its judgement "
                "timed out is neither recorded nor answered"
            )

    def played(request: Any) -> Any:
        check()
        return play(request)

    def appended(request: Any, response: Any) -> None:
        check()
        append(request, response)

    recorded.play_response, recorded.append = played, appended


@contextmanager
def threaded_recording() -> Iterator[None]:
    """Let threads record their own cassettes at once (see the module's docstring)."""
    from vcr.stubs.httpx_stubs import _vcr_handle_request

    patched: list[tuple[Any, Any]] = []
    for name in _SDK_TRANSPORTS:
        if importlib.util.find_spec(name) is None:
            continue
        module = importlib.import_module(name)
        real = module.HTTPTransport.handle_request

        def handle(self: Any, request: Any, real: Any = real, module: Any = module) -> Any:
            current = _THREADS.cassette
            if current is None:
                return real(self, request)
            source = real if _THREADS.answer is None else _THREADS.answer
            return _vcr_handle_request(current, source, self, request, module)

        patched.append((module.HTTPTransport, real))
        module.HTTPTransport.handle_request = handle
    _threaded.set()
    try:
        yield
    finally:
        _threaded.clear()
        for transport, real in patched:
            transport.handle_request = real


@contextmanager
def answering(answer: Any) -> Iterator[None]:
    """Inside `threaded_recording`, this thread's requests are answered by
    `answer(transport, request) -> response` instead of the network, and recorded as if the
    network had answered (a batch recording writes its downloaded replies this way)."""
    _THREADS.answer = answer
    try:
        yield
    finally:
        _THREADS.answer = None


def is_answering() -> bool:
    """Whether this thread's requests are answered by `answering` (not sent anywhere)."""
    return _THREADS.answer is not None and _threaded.is_set()


@contextmanager
def _thread_cassette(path: Path) -> Iterator[Any]:
    """Record one cassette in this thread, built and saved as vcrpy's `use_cassette` does."""
    config = make_vcr(record=True).get_merged_config(path=str(path))
    skip = CassetteContextDecorator._non_cassette_arguments
    recorded = Cassette.load(**{k: v for k, v in config.items() if k not in skip})
    _refuse_abandoned(recorded)
    _THREADS.cassette = recorded
    try:
        yield recorded
    finally:
        _THREADS.cassette = None
        recorded._save()


@contextmanager
def cassette(path: Path, *, record: bool, every_transport: bool = False) -> Iterator[Any]:
    """Replay (record=False) or freshly record (record=True) one cassette file.

    `every_transport` (a team's judge callable) patches every HTTP library, which vcrpy does
    per process: such a cassette is never recorded while threads record their own."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if record and _threaded.is_set():
        if every_transport:
            raise RuntimeError(f"{path}: a judge callable records outside threaded_recording")
        with _thread_cassette(path) as recorded:
            yield recorded
        return
    with make_vcr(record=record, every_transport=every_transport).use_cassette(
        str(path)
    ) as recorded:
        if every_transport:  # a team's callable: its runner counts what its calls used
            _tap_responses(recorded)
        _refuse_abandoned(recorded)
        yield recorded


# The endpoints a reply fixture answers, each with its reply in the provider's own shape.
def _chat_completion(text: str, model: str, number: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-fixture-{number}", "object": "chat.completion", "created": 0,
        "model": model, "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                     "message": {"role": "assistant", "content": text}}],
    }  # fmt: skip


def _anthropic_message(text: str, model: str, number: int) -> dict[str, Any]:
    return {
        "id": f"msg_fixture_{number}", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 0, "output_tokens": 0},
    }  # fmt: skip


def _openai_response(text: str, model: str, number: int) -> dict[str, Any]:
    return {
        "id": f"resp_fixture_{number}", "object": "response", "created_at": 0, "model": model,
        "status": "completed", "output": [{
            "type": "message", "id": f"msg_fixture_{number}", "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }], "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
    }  # fmt: skip


FIXTURE_ENDPOINTS = {
    "/chat/completions": _chat_completion,
    "/messages": _anthropic_message,
    "/responses": _openai_response,
}


def endpoint(r1: Any, r2: Any) -> None:
    """vcrpy matcher: both requests go to the same answered endpoint, whatever the host
    and the path before it (a proxy's `/openai/v1`, a gateway's prefix)."""
    ends = [next((e for e in FIXTURE_ENDPOINTS if r.path.endswith(e)), r.path) for r in (r1, r2)]
    if ends[0] != ends[1]:
        raise AssertionError(f"endpoint {ends[0]} is not {ends[1]}")


class _FixturePersister:
    """A cassette made of reply fixtures: each reply, in order, at every endpoint answered
    (a request plays the first unplayed one of its endpoint). Nothing is saved."""

    def __init__(self, replies: list[str], model: str) -> None:
        self.replies, self.model = replies, model

    def load_cassette(self, cassette_path: str, serializer: Any) -> tuple[list, list]:
        from vcr.request import Request

        requests, responses = [], []
        for number, text in enumerate(self.replies, 1):
            for path, shape in FIXTURE_ENDPOINTS.items():
                requests.append(Request("POST", f"http://fixture.invalid/v1{path}", b"", {}))
                body = json.dumps(shape(text, self.model, number), ensure_ascii=False)
                responses.append({
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"content-type": ["application/json"]},
                    "body": {"string": body.encode()},
                })  # fmt: skip
        return requests, responses

    def save_cassette(self, cassette_path: str, cassette_dict: dict, serializer: Any) -> None:
        return None


@contextmanager
def fixture_replies(replies: list[str], model: str) -> Iterator[Any]:
    """Answer every HTTP request sent inside the block (any library vcrpy patches) with the
    next reply fixture, in the provider's reply shape of the endpoint it went to; a request
    to another endpoint, or one past the last reply, raises vcrpy's miss."""
    recorder = vcr.VCR(record_mode="none", match_on=("method", "endpoint"))
    recorder.register_matcher("endpoint", endpoint)
    recorder.register_persister(_FixturePersister(replies, model))
    with recorder.use_cassette("reply-fixtures") as fixtures:
        play = fixtures.play_response
        answered = len(FIXTURE_ENDPOINTS)

        def play_in_order(request: Any) -> Any:
            # Reply n answers the n-th request, whichever endpoint it went to: once played,
            # its copies at the other endpoints are spent too.
            before = set(fixtures.play_counts)
            response = play(request)
            for index in set(fixtures.play_counts) - before:
                first = index - index % answered
                for sibling in range(first, first + answered):
                    fixtures.play_counts[sibling] = max(fixtures.play_counts[sibling], 1)
            return response

        fixtures.play_response = play_in_order
        yield fixtures


def write_cassette(
    path: Path,
    exchanges: list[tuple[dict[str, Any], dict[str, Any]]],
    fingerprint: dict[str, str],
    uri: str,
) -> bool:
    """Write a cassette of (request body, response body) pairs, as a recording would have;
    return whether the file changed (an unchanged file is not rewritten)."""
    from vcr.request import Request
    from vcr.serializers import yamlserializer

    requests, responses = [], []
    for request, response in exchanges:
        body = json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode()
        requests.append(Request("POST", uri, body, {"content-type": ["application/json"]}))
        text = json.dumps(response, ensure_ascii=False, separators=(",", ":"))
        responses.append(
            {
                "status": {"code": 200, "message": "OK"},
                "headers": {"content-type": ["application/json"]},
                "body": {"string": text},
            }
        )
    cassette = {
        "requests": requests,
        "responses": responses,
        "metadata": {FINGERPRINT_KEY: fingerprint},
    }
    text = serialize(cassette, yamlserializer)
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)
    return True


def store_fingerprint(recorded: Any, fingerprint: dict[str, str]) -> None:
    """Save the judge's fingerprint in the cassette, next to (not inside) its interactions."""
    stored = recorded.get_metadata(FINGERPRINT_KEY, {})
    stored.clear()
    stored.update(fingerprint)


def stored_fingerprint(recorded: Any) -> dict[str, str] | None:
    """The fingerprint a cassette was recorded with; None for cassettes from before it."""
    try:
        found = recorded.get_metadata(FINGERPRINT_KEY, None)
    except MissingMetadataError:
        return None
    if not isinstance(found, dict):
        return None
    return {str(key): str(value) for key, value in found.items()}


def unplayed(recorded: Any) -> str | None:
    """What a replayed vcrpy cassette holds that the judge never asked for, or None."""
    if recorded.all_played:
        return None
    return (
        f"it holds {len(recorded)} recorded requests and the judge sent "
        f"{len(recorded.play_counts)} of them: its code changed what it sends, or caught a "
        "failed request and answered anyway"
    )


def _cassette_miss(error: BaseException) -> CannotOverwriteExistingCassetteException | None:
    """vcrpy's miss behind an error, also when an SDK wrapped it."""
    found = (
        e for e in error_chain(error) if isinstance(e, CannotOverwriteExistingCassetteException)
    )
    return next(found, None)


def missed_uri(error: BaseException) -> str | None:
    """The URI of the request a replay found no recorded response for (vcrpy's miss, also
    when an SDK wrapped it); None for a direct replay's miss or any other error."""
    miss = _cassette_miss(error)
    if miss is None:
        return None
    return str(getattr(miss.failed_request, "uri", "")) or None


def request_change(error: BaseException) -> str | None:
    """What differs between the request a replay sent and the closest recorded one (same
    method and path), e.g. `messages[0].content: recorded "...RL..." now "...rl..."`;
    None when vcrpy found nothing to compare with."""
    miss = _cassette_miss(error)
    if miss is None or getattr(miss, "failed_request", None) is None:
        return None
    similar = getattr(miss, "similar_requests", None) or []
    if not similar:
        return None
    sent = miss.failed_request
    try:
        now = json.loads(_text(sent.body))
    except ValueError:
        return None
    then = _closest(miss.cassette, [found[0] for found in similar], now)
    if then is None:
        return None
    changes = list(_differences(then, now, ""))
    if not changes:
        return None
    shown = "; ".join(changes[:3]) + (f"; and {len(changes) - 3} more" if len(changes) > 3 else "")
    return scrub(shown)


def _closest(cassette: Any, candidates: list[Any], now: Any) -> Any:
    """The recorded body the sent one most likely replaced: an unplayed one first (a
    judgement's earlier requests were answered), then the fewest differences, then the
    most text in common."""
    played = {id(request) for index, (request, _) in enumerate(cassette.data)
              if cassette.play_counts[index]}  # fmt: skip
    ranked = []
    for order, request in enumerate(candidates):
        try:
            then = json.loads(_text(request.body))
        except ValueError:
            continue
        common = difflib.SequenceMatcher(None, json.dumps(then), json.dumps(now)).quick_ratio()
        differences = len(list(_differences(then, now, "")))
        ranked.append(((id(request) in played, differences, -common, order), then))
    return min(ranked, key=lambda found: found[0])[1] if ranked else None


def _text(body: Any) -> str:
    if body is None:
        return "null"
    return body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)


def _differences(then: Any, now: Any, where: str) -> Iterator[str]:
    """Each place where the recorded JSON `then` and the sent JSON `now` differ."""
    if isinstance(then, dict) and isinstance(now, dict):
        for key in [*then, *(k for k in now if k not in then)]:
            place = f"{where}.{key}" if where else str(key)
            if key not in now:
                yield f"{place} recorded, now absent"
            elif key not in then:
                yield f"{place} added ({_short(now[key])})"
            else:
                yield from _differences(then[key], now[key], place)
    elif isinstance(then, list) and isinstance(now, list):
        for index, (old, new) in enumerate(zip(then, now, strict=False)):
            yield from _differences(old, new, f"{where}[{index}]")
        if len(then) != len(now):
            yield f"{where or 'the body'} has {len(now)} entries, recorded {len(then)}"
    elif then != now or type(then) is not type(now):
        if isinstance(then, str) and isinstance(now, str):
            old, new = _around_first_difference(then, now)
            yield f"{where}: recorded {old}, now {new}"
        else:
            yield f"{where}: recorded {_short(then)}, now {_short(now)}"


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _around_first_difference(then: str, now: str, context: int = 24) -> tuple[str, str]:
    """Both strings around where they first differ, quoted, with `...` for what is cut."""
    start = next(
        (i for i, (a, b) in enumerate(zip(then, now, strict=False)) if a != b),
        min(len(then), len(now)),
    )
    begin = max(0, start - context)

    def cut(text: str) -> str:
        piece = text[begin : start + context]
        return (
            ("..." if begin else "")
            + json.dumps(piece, ensure_ascii=False)
            + ("..." if start + context < len(text) else "")
        )

    return cut(then), cut(now)


def is_replay_miss(error: BaseException) -> bool:
    """True for a replay's "no recorded response" (vcrpy's, or a direct replay's), also when
    an SDK wrapped it."""
    misses = (CannotOverwriteExistingCassetteException, ReplayMiss)
    return any(isinstance(link, misses) for link in error_chain(error))
