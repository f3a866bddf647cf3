"""Unit tests for judges.calls._vcr (what reaches a cassette) and judges.calls.ledger."""

from __future__ import annotations

import base64
import json
import random
import threading
from pathlib import Path

import pytest
from vcr.cassette import Cassette
from vcr.errors import CannotOverwriteExistingCassetteException
from vcr.request import Request

from judges.calls import credentials
from judges.calls._vcr import (
    is_replay_miss,
    json_body,
    scrub_request,
    scrub_response,
)
from judges.calls.credentials import REDACTED, remember, scrub, scrub_bytes, strip_credentials
from judges.calls.ledger import CostCapReached, Ledger
from judges.core.results import JudgementRow, Usage
from tests._key_forms import ANTHROPIC_KEY as FAKE_ANTHROPIC_KEY
from tests._key_forms import LOCAL_KEY as LOCAL
from tests._key_forms import OPENAI_KEY as FAKE_OPENAI_KEY
from tests._key_forms import body_of, fragments_in, key_forms

SECRET_HEADERS = {
    "Authorization": "Bearer sk-proj-abcdefghijklmnopqrstuvwx",
    "x-api-key": "sk-ant-api03-abcdefghijkl",
    "Cookie": "session=abc",
    "Set-Cookie": "session=abc; Path=/",
    "OpenAI-Organization": "org-123",
    "OpenAI-Project": "proj_123",
    "x-request-id": "req_123",
    "request-id": "req_456",
}
OPENAI_KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123"
ANTHROPIC_KEY = "sk-ant-api03-AbCd_EfGh-IjKl"
BEARER = "Bearer eyJhbGciOiJIUzI1NiJ9.abc.def"


def chat_request(body: bytes | str | None, headers: dict[str, str] | None = None) -> Request:
    return Request(
        "POST",
        "https://api.openai.com/v1/chat/completions",
        body,
        {"Content-Type": "application/json", **(SECRET_HEADERS if headers is None else headers)},
    )


def response(code: int = 200, body: bytes | str = b'{"ok": true}') -> dict:
    return {
        "status": {"code": code, "message": "OK"},
        "headers": {
            "Content-Type": ["application/json"],
            "x-request-id": ["req_789"],
            "request-id": ["req_789"],
            "openai-organization": ["org-123"],
            "openai-project": ["proj_123"],
            "set-cookie": ["__cf_bm=abc"],
        },
        "body": {"string": body},
    }


# --------------------------------------------------------------------------- requests


def test_scrub_request_keeps_only_content_type() -> None:
    scrubbed = scrub_request(chat_request(b'{"model": "gpt-4o"}'))
    assert dict(scrubbed.headers) == {"Content-Type": "application/json"}
    assert scrubbed.body == b'{"model": "gpt-4o"}'


def test_scrub_request_header_names_are_case_insensitive() -> None:
    upper = {name.upper(): value for name, value in SECRET_HEADERS.items()}
    scrubbed = scrub_request(chat_request(b"{}", upper))
    assert list(scrubbed.headers) == ["Content-Type"]


@pytest.mark.parametrize("secret", [OPENAI_KEY, ANTHROPIC_KEY, BEARER])
@pytest.mark.parametrize("as_bytes", [True, False], ids=["bytes", "str"])
def test_scrub_request_redacts_keys_in_the_body(secret: str, as_bytes: bool) -> None:
    text = json.dumps({"messages": [{"role": "user", "content": f"my key is {secret} ok"}]})
    scrubbed = scrub_request(chat_request(text.encode() if as_bytes else text))
    body = scrubbed.body.decode() if isinstance(scrubbed.body, bytes) else scrubbed.body
    assert secret not in body
    assert f"my key is {REDACTED} ok" in body
    assert json.loads(body)["messages"][0]["role"] == "user"


def test_scrub_request_without_a_body() -> None:
    assert scrub_request(chat_request(None)).body is None


def test_an_unsecret_body_is_left_byte_for_byte() -> None:
    body = json.dumps({"content": "Nestlé sk-short Bearer x"}, ensure_ascii=False).encode()
    assert scrub_request(chat_request(body)).body == body


# --------------------------------------------------------------------------- responses


def test_scrub_response_keeps_only_content_type() -> None:
    scrubbed = scrub_response(response())
    assert scrubbed is not None
    assert scrubbed["headers"] == {"Content-Type": ["application/json"]}
    assert scrubbed["body"]["string"] == b'{"ok": true}'
    assert scrubbed["status"]["code"] == 200


@pytest.mark.parametrize("code", [199, 301, 400, 401, 429, 500, 529])
def test_scrub_response_drops_non_2xx(code: int) -> None:
    assert scrub_response(response(code)) is None


@pytest.mark.parametrize("code", [200, 201, 299])
def test_scrub_response_keeps_2xx(code: int) -> None:
    assert scrub_response(response(code)) is not None


@pytest.mark.parametrize("secret", [OPENAI_KEY, ANTHROPIC_KEY, BEARER])
@pytest.mark.parametrize("as_bytes", [True, False], ids=["bytes", "str"])
def test_scrub_response_redacts_keys_in_the_body(secret: str, as_bytes: bool) -> None:
    text = json.dumps({"echo": secret})
    scrubbed = scrub_response(response(body=text.encode() if as_bytes else text))
    body = scrubbed["body"]["string"]
    body = body.decode() if isinstance(body, bytes) else body
    assert json.loads(body) == {"echo": REDACTED}


def test_scrub_response_without_a_body_string() -> None:
    plain = response()
    plain["body"] = {}
    assert scrub_response(plain)["body"] == {}


def test_ordinary_hyphenated_words_are_not_redacted() -> None:
    text = json.dumps({"content": "a task-specific-fine-tuning baseline"})
    scrubbed = scrub_response(response(body=text))
    assert scrubbed["body"]["string"] == text


# --------------------------------------------------------------------------- replay misses


@pytest.fixture
def miss(tmp_path: Path) -> CannotOverwriteExistingCassetteException:
    cassette = Cassette(str(tmp_path / "absent.yaml"), record_mode="none")
    return CannotOverwriteExistingCassetteException(
        cassette=cassette, failed_request=chat_request(b"{}")
    )


class APIConnectionError(Exception):
    """Stands in for an SDK's connection error that wraps the transport's exception."""


def test_a_bare_miss(miss: CannotOverwriteExistingCassetteException) -> None:
    assert "Can't play back this request" in str(miss)
    assert is_replay_miss(miss)


def test_a_miss_wrapped_with_from(miss: CannotOverwriteExistingCassetteException) -> None:
    try:
        try:
            raise miss
        except CannotOverwriteExistingCassetteException as error:
            raise APIConnectionError("Connection error.") from error
    except APIConnectionError as wrapped:
        assert wrapped.__cause__ is miss
        assert is_replay_miss(wrapped)


def test_a_miss_found_through_context_twice_removed(
    miss: CannotOverwriteExistingCassetteException,
) -> None:
    try:
        try:
            try:
                raise miss
            except CannotOverwriteExistingCassetteException:
                raise OSError("transport failed")  # noqa: B904 - implicit chaining on purpose
        except OSError:
            raise APIConnectionError("Connection error.")  # noqa: B904
    except APIConnectionError as outer:
        assert outer.__cause__ is None
        assert outer.__context__.__context__ is miss
        assert is_replay_miss(outer)


def test_other_errors_are_not_misses() -> None:
    outer = APIConnectionError("Connection error.")
    outer.__cause__ = ValueError("bad")
    assert not is_replay_miss(outer)
    assert not is_replay_miss(KeyError("x"))


def test_a_cyclic_chain_ends() -> None:
    first, second = APIConnectionError("a"), OSError("b")
    first.__context__ = second
    second.__context__ = first
    assert is_replay_miss(first) is False


# --------------------------------------------------------------------------- matching helpers


def test_json_body_ignores_key_order_and_white_space() -> None:
    json_body(chat_request(b'{"a": 1, "b": [1, 2]}'), chat_request('{"b":[1,2],"a":1}'))
    with pytest.raises(AssertionError, match="request bodies differ"):
        json_body(chat_request(b'{"a": 1}'), chat_request(b'{"a": 2}'))
    json_body(chat_request(None), chat_request(None))
    json_body(chat_request(b"not json"), chat_request(b"not json"))


# --------------------------------------------------------------------------- the ledger


def test_charges_add_up_per_model(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "nested" / "ledger.jsonl")
    assert ledger.spent_usd() == 0
    assert ledger.totals() == {}
    ledger.charge("openai:gpt-4o-mini", 100, 10, 0.25)
    ledger.charge("anthropic:claude-sonnet-4-6", 50, 5, 0.5)
    ledger.charge("openai:gpt-4o-mini", 200, 20, 0.125)
    assert ledger.spent_usd() == pytest.approx(0.875)
    assert ledger.totals() == {
        "anthropic:claude-sonnet-4-6": Usage(
            calls=1, input_tokens=50, output_tokens=5, cost_usd=0.5
        ),
        "openai:gpt-4o-mini": Usage(calls=2, input_tokens=300, output_tokens=30, cost_usd=0.375),
    }
    assert list(ledger.totals()) == sorted(ledger.totals())


def test_no_cap_never_stops(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    ledger.charge("openai:gpt-4o", 1, 1, 1e6)
    ledger.ensure_budget()


def test_the_cap_stops_at_the_cap(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl", cap_usd=1.0)
    ledger.ensure_budget()
    ledger.charge("openai:gpt-4o", 1, 1, 0.75)
    ledger.ensure_budget()
    ledger.charge("openai:gpt-4o", 1, 1, 0.25)
    with pytest.raises(CostCapReached, match=r"\$1\.0000 spent of \$1\.0000"):
        ledger.ensure_budget()


def test_a_zero_cap_stops_at_once(tmp_path: Path) -> None:
    with pytest.raises(CostCapReached):
        Ledger(tmp_path / "ledger.jsonl", cap_usd=0.0).ensure_budget()


def test_two_ledgers_on_one_file_share_the_budget(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    worker_a, worker_b = Ledger(path, cap_usd=1.0), Ledger(path, cap_usd=1.0)
    worker_a.charge("openai:gpt-4o", 10, 1, 0.5)
    worker_b.ensure_budget()
    worker_b.charge("openai:gpt-4o", 10, 1, 0.5)
    assert worker_a.totals() == worker_b.totals()
    assert worker_a.totals()["openai:gpt-4o"].calls == 2
    for worker in (worker_a, worker_b):
        with pytest.raises(CostCapReached):
            worker.ensure_budget()
    assert Ledger(path).spent_usd() == pytest.approx(1.0), "reopening keeps what was spent"


def test_concurrent_charges_are_all_kept(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    workers = [Ledger(path) for _ in range(4)]

    def charge(ledger: Ledger) -> None:
        for _ in range(50):
            ledger.charge("local:smollm2-135m", 3, 2, 0.001)

    threads = [threading.Thread(target=charge, args=(w,)) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = path.read_text().splitlines()
    assert len(lines) == 200
    assert all(json.loads(line)["model"] == "local:smollm2-135m" for line in lines)
    total = workers[0].totals()["local:smollm2-135m"]
    assert (total.calls, total.input_tokens, total.output_tokens) == (200, 600, 400)
    assert total.cost_usd == pytest.approx(0.2)


@pytest.mark.parametrize(
    "name", ["key", "api_key", "api-key", "API_KEY", "apikey", "token", "access_token", "sig"]
)
def test_credential_query_parameters_are_stripped_from_recorded_uris(name: str) -> None:
    request = Request("POST", f"http://h:1/v1/chat/completions?{name}=abc&v=2", b"{}", {})
    assert scrub_request(request).uri == "http://h:1/v1/chat/completions?v=2"


def test_a_parameter_holding_a_known_key_is_stripped_whatever_its_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "opaquevalue123456")
    url = "https://user:pw@h/v1?custom=opaquevalue123456&mode=fast"
    assert strip_credentials(url) == "https://h/v1?mode=fast"
    assert strip_credentials("https://h/v1?mode=fast") == "https://h/v1?mode=fast"


def test_known_keys_are_scrubbed_by_value_in_bodies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGES_LOCAL_API_KEY", "plainkey0123456789")
    response = {
        "status": {"code": 200, "message": "OK"},
        "headers": {},
        "body": {"string": b'{"echo": "plainkey0123456789"}'},
    }
    assert json.loads(scrub_response(response)["body"]["string"]) == {"echo": REDACTED}
    assert scrub("short key x1") == "short key x1"  # nothing known, nothing key-shaped


def test_a_remembered_value_is_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(credentials, "_remembered", set())  # this process's, for this test
    remember("remembered-credential-42")
    remember("k3y9")  # short: scrubbed where it stands alone, not inside other words
    text = "a remembered-credential-42, a k3y9, (k3y9) and k3y9s or xk3y9"
    assert scrub(text) == f"a {REDACTED}, a {REDACTED}, ({REDACTED}) and k3y9s or xk3y9"


@pytest.mark.parametrize("key", ["ollama", "EMPTY", "ab", "x9"])
def test_a_short_key_from_the_environment_never_reaches_disk(
    monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    monkeypatch.setenv("JUDGES_LOCAL_API_KEY", key)
    echoed = f'{{"echo": "Bearer {key}", "key": "{key}", "word": "{key}able"}}'.encode()
    cleaned = scrub_bytes(echoed).decode()
    assert json.loads(cleaned) == {"echo": f"Bearer {REDACTED}", "key": REDACTED,
                                   "word": f"{key}able"}  # fmt: skip
    assert strip_credentials(f"http://h/v1?custom={key}&mode=fast") == "http://h/v1?mode=fast"


def test_a_row_scrubs_every_key_it_echoes_at_any_depth(monkeypatch: pytest.MonkeyPatch) -> None:
    # safe_value reads the known keys once per value: every string of it is still scrubbed.
    monkeypatch.setattr(credentials, "_remembered", set())
    monkeypatch.setenv("OPENAI_API_KEY", "plain-env-key-0123")
    remember("remembered-key-4567")
    echoed = "plain-env-key-0123 and remembered-key-4567"
    row = JudgementRow(
        judge="j", prompt_version="1", prompt_hash="h", model="local:m", item_id="I-1",
        category="c", control=False, status="ok", error=echoed,
        verdict={"why": echoed, echoed: [echoed, {"deep": [echoed]}], "n": 3},
    )  # fmt: skip
    written = row.model_dump_json()
    assert "plain-env-key-0123" not in written and "remembered-key-4567" not in written
    both = f"{REDACTED} and {REDACTED}"
    assert row.verdict == {"why": both, both: [both, {"deep": [both]}], "n": 3}
    assert row.error == both


# --------------------------------------------------------------------------- key fragments


@pytest.fixture
def configured(monkeypatch: pytest.MonkeyPatch) -> None:
    """The three fake keys set as a session sets them: two variables and one remembered."""
    monkeypatch.setattr(credentials, "_remembered", set())
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_ANTHROPIC_KEY)
    monkeypatch.delenv("JUDGES_LOCAL_API_KEY", raising=False)
    remember(LOCAL)  # as a credential of --judge-base-url is


FAKE_KEYS = [
    pytest.param(FAKE_OPENAI_KEY, id="openai"),
    pytest.param(FAKE_ANTHROPIC_KEY, id="anthropic"),
    pytest.param(LOCAL, id="local"),
]
FORMS = list(key_forms(LOCAL))


@pytest.mark.usefixtures("configured")
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("key", FAKE_KEYS)
def test_every_form_of_a_key_is_scrubbed(key: str, form: str) -> None:
    echoed = key_forms(key)[form]
    cleaned = scrub(f"the judge said: {echoed} and more")
    assert fragments_in(cleaned, key) == [], cleaned
    assert cleaned.startswith(f"the judge said: {REDACTED}") and cleaned.endswith(" and more")


@pytest.mark.usefixtures("configured")
@pytest.mark.parametrize("key", FAKE_KEYS)
def test_a_key_split_by_any_run_of_white_space_is_scrubbed(key: str) -> None:
    spread = "  \t".join(key[i : i + 3] for i in range(0, len(key), 3))
    assert scrub(f"[{spread}]") == f"[{REDACTED}]"
    assert scrub(f"[{key[:15]}\r\n  {key[15:]}]") == f"[{REDACTED}]"


@pytest.mark.usefixtures("configured")
@pytest.mark.parametrize("key", FAKE_KEYS)
@pytest.mark.parametrize("as_bytes", [True, False], ids=["bytes", "str"])
def test_a_fragment_inside_json_with_escapes_is_scrubbed(key: str, as_bytes: bool) -> None:
    body = body_of(key)
    base64_body = base64.b64encode(("ab" + body).encode()).decode()[3:]
    echo = {
        "split": f"{body[:9]}\n\t{body[9:24]}",
        "quoted": f'"{body[3:18]}"',
        "escaped slashes": f"<{base64_body}>",
        "upper": f"key={key.upper()}",
    }
    text = json.dumps({"echo": echo}).replace("/", "\\/")
    assert "\\n\\t" in text and '\\"' in text
    scrubbed = scrub_response(response(body=text.encode() if as_bytes else text))
    raw = scrubbed["body"]["string"]
    raw = raw.decode() if isinstance(raw, bytes) else raw
    assert fragments_in(raw, key) == [], raw
    assert json.loads(raw)["echo"] == {
        "split": REDACTED,
        "quoted": f'"{REDACTED}"',
        "escaped slashes": f"<{REDACTED}>",
        "upper": f"key={REDACTED}",
    }


@pytest.mark.usefixtures("configured")
def test_several_keys_and_forms_in_one_text_are_all_scrubbed() -> None:
    keys = [FAKE_OPENAI_KEY, FAKE_ANTHROPIC_KEY, LOCAL]
    text = " | ".join(form for key in keys for form in key_forms(key).values())
    cleaned = scrub(text)
    for key in keys:
        assert fragments_in(cleaned, key) == []
    assert cleaned.count(REDACTED) >= 3 * len(FORMS) - 3  # adjacent forms may merge


@pytest.mark.usefixtures("configured")
def test_short_pieces_and_shared_prefixes_are_kept() -> None:
    body = body_of(FAKE_ANTHROPIC_KEY)
    kept = [
        f"eleven: {body[:11]} and {LOCAL[5:16]}",  # shorter than a fragment
        "every key starts with sk-ant-api03- or sk-proj-",  # the shared prefix is no secret
        "a task-specific-fine-tuning baseline, 0123456789 abcdefghijklmnop",
    ]
    for text in kept:
        assert scrub(text) == text


def test_a_key_shorter_than_16_is_scrubbed_whole_but_not_by_fragment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(credentials, "_remembered", set())
    monkeypatch.setenv("JUDGES_LOCAL_API_KEY", "Wq3Er5Ty7Ui9Op1")  # 15 characters
    assert scrub("the key Wq3Er5Ty7Ui9Op1 itself") == f"the key {REDACTED} itself"
    assert scrub("a piece Wq3Er5Ty7Ui9O of it") == "a piece Wq3Er5Ty7Ui9O of it"


@pytest.mark.usefixtures("configured")
def test_the_fragment_index_is_built_once_per_set_of_keys() -> None:
    keys = credentials.known_secrets()
    assert credentials.fragment_index(keys) is credentials.fragment_index(tuple(keys))
    remember("Yh6Tg5Rf4Ed3Ws2Qa1Zx9Cv")
    assert credentials.fragment_index(credentials.known_secrets()) is not (
        credentials.fragment_index(keys)
    )


@pytest.mark.usefixtures("configured")
def test_a_row_scrubs_every_form_it_echoes() -> None:
    forms = key_forms(FAKE_OPENAI_KEY)
    row = JudgementRow(
        judge="j", prompt_version="1", prompt_hash="h", model="openai:m", item_id="I-1",
        category="c", control=False, status="ok", error=forms["upper case"],
        verdict={"rationale": forms["split by a newline"], "b": [forms["base64 of the body"]]},
    )  # fmt: skip
    assert fragments_in(row.model_dump_json(), FAKE_OPENAI_KEY) == []
    assert row.verdict == {"rationale": REDACTED, "b": [REDACTED]}


@pytest.mark.usefixtures("configured")
@pytest.mark.parametrize("seed", range(5))
def test_random_pieces_cases_gaps_and_encodings_are_all_scrubbed(seed: int) -> None:
    """Pieces of random length and place, case flipped at random or base64-encoded after
    random text, split by a random gap, among non-ASCII words that change length in lower
    case ("İ")."""
    chance = random.Random(seed)
    for key in (FAKE_OPENAI_KEY, FAKE_ANTHROPIC_KEY, LOCAL):
        body = body_of(key)
        for _ in range(40):
            start = chance.randrange(len(body) - 12)
            piece = body[start : chance.randrange(start + 12, len(body) + 1)]
            if chance.random() < 0.3:
                encoded = chance.choice([base64.b64encode, base64.urlsafe_b64encode])
                around = "".join(chance.choices("xyz", k=chance.randrange(3)))
                piece = encoded((around + piece).encode()).decode()
            else:
                piece = "".join(c.upper() if chance.random() < 0.5 else c for c in piece)
            cut = chance.randrange(1, len(piece))
            gap = chance.choice([" ", "\n", "\t  ", "\\n", "\r\n"])
            text = f"İstanbul Nestlé {piece[:cut]}{gap}{piece[cut:]} ünd"
            cleaned = scrub(text)
            assert fragments_in(cleaned, key) == [], (text, cleaned)
            assert cleaned.startswith("İstanbul Nestlé ") and cleaned.endswith(" ünd")
