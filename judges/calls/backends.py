"""Judge backends: one small protocol, implementations over the official SDKs, and the
registry that holds every backend's rules in one entry.

Every call goes through the SDK's own HTTP client, so a cassette sees real HTTP and
replays it offline. A backend returns the reply text, whether it was cut off, and the
token usage; the runner turns that into a verdict and the price table into a cost.

What tells the backends apart (its key, whether a base URL applies, its batch API, its
pricing, how many calls it takes at once, the factory that builds it) is one `BackendKind`
entry in `REGISTRY`, at the end of this module. The rest of the package asks the registry
(`backend_of(model).takes_base_url`, `is_imported(model)`, `make_backend`, `price_for`)
instead of comparing backend names, so a new backend is a class and an entry here, and its
prices in `prices.toml` (a test keeps backend names out of comparisons outside `calls/`).
"""

from __future__ import annotations

import copy
import os
import tomllib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from judges.calls import direct_replay
from judges.calls.batch.api import AnthropicBatches, BatchAPI, OpenAIBatches

DEFAULT_PRICES = Path(__file__).parent / "prices.toml"
# The path an imported request is recorded under (an OpenAI-compatible server's).
IMPORTED_PATH = "/v1/chat/completions"
# A model's name becomes a cassette folder (`<backend>-<model>`), and a file name may hold
# 255 bytes: a longer name, or one with control characters, is refused before any call.
MAX_MODEL_NAME_BYTES = 128


class BackendError(ValueError):
    """A backend cannot be built as asked (unknown backend, missing key)."""


class MalformedUsage(ValueError):
    """The server's reply reports token usage that is not a count (NaN, negative, text)."""


def is_timeout(error: BaseException) -> bool:
    """The request got no reply in time (openai's and anthropic's APITimeoutError, httpx's)."""
    return any("Timeout" in kind.__name__ for kind in type(error).__mro__)


def is_transient(error: BaseException) -> bool:
    """Worth retrying: no connection, or the server was busy or failed (408/409/429/5xx)."""
    status = getattr(error, "status_code", None)
    if isinstance(status, int):
        return status in (408, 409, 429) or status >= 500
    return any(kind.__name__ == "APIConnectionError" for kind in type(error).__mro__)


# Errors raised before a request left (no connection): the provider never saw it.
_NOT_SENT = ("ConnectError", "ConnectTimeout", "ConnectionRefusedError", "gaierror")


def error_chain(error: BaseException) -> list[BaseException]:
    """The error and every error it was raised from or during, outermost first."""
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


# The kinds of failure no later call gets past: the server is not there, refuses the key, or
# has no such route (a base URL without its `/v1`). A judgement row says which (`error_kind`).
UNREACHABLE = "unreachable"
UNAUTHORISED = "unauthorised"
NO_ROUTE = "no_route"


@dataclass(frozen=True)
class Unreachable:
    """Why no call to this server can succeed: `kind` (above) and what the error said, in
    a few words (`detail`: the innermost error, or the status and URL)."""

    kind: str
    detail: str


def unreachable(error: BaseException) -> Unreachable | None:
    """The failure no retry gets past, or None: a refused or reset connection, a host name
    that does not resolve (every call would fail the same way), a key refused (401/403), a
    path the server does not serve (404)."""
    status = getattr(error, "status_code", None)
    url = getattr(getattr(error, "request", None), "url", None)
    where = f" for {url}" if url is not None else ""
    if status in (401, 403):
        return Unreachable(UNAUTHORISED, f"HTTP {status}{where}: the key was refused")
    if status == 404:
        return Unreachable(NO_ROUTE, f"HTTP 404{where}: no such path on the server")
    chain = error_chain(error)
    names = {kind.__name__ for link in chain for kind in type(link).__mro__}
    dead = ("gaierror", "ConnectionRefusedError", "ConnectionResetError", "RemoteProtocolError")
    if "ConnectError" in names or any(name in names for name in dead):
        return Unreachable(UNREACHABLE, f"{type(chain[-1]).__name__}: {chain[-1]}")
    return None


def may_have_been_billed(error: BaseException) -> bool:
    """A failed call the provider may still bill: the request was sent and no answer said
    otherwise (a reply cut off mid-body, a read timeout, a reply not understood). An error
    status (429, 5xx) is an answer, not work; a connection never made sent nothing."""
    if isinstance(getattr(error, "status_code", None), int):
        return False
    return not any(
        kind.__name__ in _NOT_SENT for link in error_chain(error) for kind in type(link).__mro__
    )


def token_count(value: Any, name: str) -> int:
    """A usage field as a count; a missing one is 0, anything but a count is an error."""
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MalformedUsage(f"the server reported usage {name} = {value!r}, not a token count")
    return value


def _shown(text: str, limit: int = 60) -> str:
    """A user's string quoted in a message, cut short: an error need not repeat 3,000 bytes."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text)} characters)"


@dataclass(frozen=True)
class ModelRef:
    """`backend:model`, e.g. `local:smollm2-135m` or `openai:gpt-4o-2024-11-20`."""

    backend: str
    model: str

    @classmethod
    def parse(cls, text: str) -> ModelRef:
        backend, sep, model = text.partition(":")
        if not sep or not model or backend not in BACKENDS:
            raise BackendError(
                f"judge model {_shown(text)} must be backend:model with backend one of "
                f"{', '.join(BACKENDS)} (e.g. local:smollm2-135m, openai:gpt-4o-2024-11-20, "
                "anthropic:claude-sonnet-4-6, imported:GPT-4)"
            )
        size = len(model.encode("utf-8", errors="surrogatepass"))
        if size > MAX_MODEL_NAME_BYTES:
            raise BackendError(
                f"judge model {_shown(text)}: its model name is {size} bytes long, over "
                f"the limit of {MAX_MODEL_NAME_BYTES} (it names the model's cassette folder)"
            )
        if any(ord(char) < 32 or ord(char) == 127 for char in model):
            raise BackendError(
                f"judge model {_shown(text)}: a model name holds no control characters (it names "
                "the model's cassette folder)"
            )
        return cls(backend, model)

    def __str__(self) -> str:
        return f"{self.backend}:{self.model}"

    @property
    def slug(self) -> str:
        """A folder name: `local-smollm2-135m`."""
        return f"{self.backend}-{self.model}".replace("/", "_").replace(":", "-")


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6


def load_prices(*paths: Path, batch: bool = False) -> dict[str, Price]:
    """Price table in USD per million tokens; later files override earlier ones. With
    `batch`, the prices through the batch APIs (`load_batch_prices`)."""
    if batch:
        return load_batch_prices(*paths)
    prices: dict[str, Price] = {}
    for path in (DEFAULT_PRICES, *paths):
        try:
            table = tomllib.loads(path.read_text(encoding="utf-8"))
            for model, row in table.get("models", {}).items():
                prices[model] = Price(float(row["input_per_mtok"]), float(row["output_per_mtok"]))
        except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as error:
            raise BackendError(
                f'{path}: price table must hold [models."backend:model"] tables with '
                f"input_per_mtok and output_per_mtok ({error!r})"
            ) from None
    return prices


def load_batch_prices(*paths: Path) -> dict[str, Price]:
    """Prices through the providers' batch APIs: a model's `batch_input_per_mtok` and
    `batch_output_per_mtok`, else its prices times the top-level `batch_discount` (the last
    file that sets one wins). A model with neither has no batch price."""
    prices = load_prices(*paths)
    explicit: dict[str, Price] = {}
    discount: float | None = None
    for path in (DEFAULT_PRICES, *paths):
        table = tomllib.loads(path.read_text(encoding="utf-8"))
        try:
            if "batch_discount" in table:
                discount = float(table["batch_discount"])
                if not 0 < discount <= 1:
                    raise ValueError(f"batch_discount = {discount} is not in (0, 1]")
            for model, row in table.get("models", {}).items():
                keys = ("batch_input_per_mtok", "batch_output_per_mtok")
                if any(key in row for key in keys):
                    explicit[model] = Price(*(float(row[key]) for key in keys))
        except (KeyError, TypeError, ValueError) as error:
            raise BackendError(
                f"{path}: batch prices need both batch_input_per_mtok and "
                f"batch_output_per_mtok, and batch_discount a factor in (0, 1] ({error!r})"
            ) from None
    found = dict(explicit)
    if discount is not None:
        for model, price in prices.items():
            found.setdefault(
                model, Price(price.input_per_mtok * discount, price.output_per_mtok * discount)
            )
    return found


@dataclass(frozen=True)
class JudgeRequest:
    """Everything a backend needs for one call."""

    system: str
    prompt: str
    schema_name: str
    schema: dict[str, Any]
    max_tokens: int
    temperature: float | None = None
    seed: int | None = None
    timeout: float | None = None  # seconds for this request; None: the client's own


@dataclass(frozen=True)
class JudgeResponse:
    text: str
    truncated: bool
    input_tokens: int
    output_tokens: int
    # False: the reply carried no token counts, so its cost is not known (a missing count
    # reads as 0 above); the ledger then charges the call's worst case.
    usage_reported: bool = True


def reported(*counts: Any) -> bool:
    """Whether a reply's usage holds every token count (a missing one is None)."""
    return all(count is not None for count in counts)


class Backend(Protocol):
    model: ModelRef

    def complete(self, request: JudgeRequest) -> JudgeResponse: ...


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline `$defs`, drop titles, close every object: what all three grammars accept."""
    defs = schema.get("$defs", {})

    def walk(node: Any, in_properties: bool = False) -> Any:
        if isinstance(node, dict):
            if "$ref" in node and not in_properties:
                return walk(copy.deepcopy(defs[node["$ref"].rsplit("/", 1)[-1]]))
            if in_properties:  # keys here are field names, even one called "title"
                return {k: walk(v) for k, v in node.items()}
            out = {
                k: walk(v, in_properties=k == "properties")
                for k, v in node.items()
                if k not in ("$defs", "title")
            }
            if out.get("type") == "object":
                out["additionalProperties"] = False
            if out.get("type") == "integer" and {"minimum", "maximum"} <= out.keys():
                # An enum binds every grammar; not all of them honour minimum/maximum.
                out["enum"] = list(range(out.pop("minimum"), out.pop("maximum") + 1))
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)


def without_tuples(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace tuple arrays (`prefixItems`) by arrays of any of their entries.

    Hosted structured-output modes do not all accept `prefixItems`; a local grammar does,
    and keeps it. The length bounds stay, so the shape is still one entry per position.
    """

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: walk(v) for k, v in node.items() if k != "prefixItems"}
            if "prefixItems" in node:
                out["items"] = {"anyOf": walk(node["prefixItems"])}
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)


class OpenAIBackend:
    """Chat completions with a JSON-schema response format."""

    def __init__(self, model: ModelRef, client: Any) -> None:
        self.model = model
        self.client = client

    def _response_format(self, request: JudgeRequest) -> dict[str, Any]:
        return {
            "type": "json_schema",
            "json_schema": {
                "name": request.schema_name,
                "schema": without_tuples(request.schema),
                "strict": True,
            },
        }

    def body(self, request: JudgeRequest) -> dict[str, Any]:
        """The JSON body the SDK sends for `request` (what a cassette's request holds)."""
        body: dict[str, Any] = {
            "model": self.model.model,
            "messages": [
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.prompt},
            ],
            "max_tokens": request.max_tokens,
            "response_format": self._response_format(request),
        }
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.seed is not None:
            body["seed"] = request.seed
        return body

    def complete(self, request: JudgeRequest) -> JudgeResponse:
        options = {} if request.timeout is None else {"timeout": request.timeout}
        completion = self.client.chat.completions.create(**self.body(request), **options)
        choice = completion.choices[0]
        prompt_tokens = getattr(completion.usage, "prompt_tokens", None)
        completion_tokens = getattr(completion.usage, "completion_tokens", None)
        return JudgeResponse(
            text=choice.message.content or "",
            truncated=choice.finish_reason == "length",
            input_tokens=token_count(prompt_tokens, "prompt_tokens"),
            output_tokens=token_count(completion_tokens, "completion_tokens"),
            usage_reported=reported(prompt_tokens, completion_tokens),
        )


class LocalBackend(OpenAIBackend):
    """An OpenAI-compatible server (llama.cpp, Ollama, vLLM) at a base URL.

    llama.cpp's server turns `{"type": "json_object", "schema": ...}` into a grammar; it
    does not accept OpenAI's `json_schema` form.
    """

    def _response_format(self, request: JudgeRequest) -> dict[str, Any]:
        return {"type": "json_object", "schema": bound_strings(request.schema)}


class ImportedBackend(LocalBackend):
    """Judgements imported from a release: replayed from their cassettes, never called.

    The importer writes each cassette with this backend's request body, so a replay answers
    it straight from the cassette (`judges.calls.direct_replay`): no SDK, no HTTP.
    """

    def __init__(self, model: ModelRef) -> None:
        super().__init__(model, client=None)

    def complete(self, request: JudgeRequest) -> JudgeResponse:
        reply = direct_replay.answer("POST", IMPORTED_PATH, self.body(request))
        try:
            choice = reply["choices"][0]
            text, finish = choice["message"]["content"], choice.get("finish_reason")
            usage = reply.get("usage") or {}
            if not (text is None or isinstance(text, str)) or not isinstance(usage, dict):
                raise TypeError
        except (KeyError, IndexError, TypeError, AttributeError):
            raise BackendError(
                f"an imported reply of {self.model} is not a chat completion (a string or "
                "null at choices[0].message.content); import the release again"
            ) from None
        # As the SDK reads it; a release's missing usage costs nothing: imported is free.
        prompt_tokens, completion_tokens = (
            usage.get("prompt_tokens"),
            usage.get("completion_tokens"),
        )
        return JudgeResponse(
            text=text or "",
            truncated=finish == "length",
            input_tokens=token_count(prompt_tokens, "prompt_tokens"),
            output_tokens=token_count(completion_tokens, "completion_tokens"),
            usage_reported=reported(prompt_tokens, completion_tokens),
        )


def bound_strings(schema: dict[str, Any], limit: int = 160) -> dict[str, Any]:
    """Give every free string a maximum length.

    A small local model otherwise keeps writing inside its rationale until `max_tokens` and
    the reply is cut off before the JSON closes.
    """

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: walk(v) for k, v in node.items()}
            if out.get("type") == "string" and "enum" not in out:
                out.setdefault("maxLength", limit)
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)


class AnthropicBackend:
    """Messages with JSON-schema output. The 2.x SDK has no temperature: repeats vary."""

    def __init__(self, model: ModelRef, client: Any) -> None:
        self.model = model
        self.client = client

    def complete(self, request: JudgeRequest) -> JudgeResponse:
        options = {} if request.timeout is None else {"timeout": request.timeout}
        message = self.client.messages.create(
            model=self.model.model,
            max_tokens=request.max_tokens,
            system=request.system,
            messages=[{"role": "user", "content": request.prompt}],
            output_config={
                "format": {"type": "json_schema", "schema": without_tuples(request.schema)}
            },
            **options,
        )
        text = "".join(block.text for block in message.content if block.type == "text")
        input_tokens = getattr(message.usage, "input_tokens", None)
        output_tokens = getattr(message.usage, "output_tokens", None)
        return JudgeResponse(
            text=text,
            truncated=message.stop_reason == "max_tokens",
            input_tokens=token_count(input_tokens, "input_tokens"),
            output_tokens=token_count(output_tokens, "output_tokens"),
            usage_reported=reported(input_tokens, output_tokens),
        )


# --------------------------------------------------------------------------- the registry

# vcrpy cannot decode zstd, which httpx2 may advertise; pin an encoding it can.
PINNED_HEADERS = {"Accept-Encoding": "gzip, deflate"}
HOSTED_CONCURRENCY = 8  # judgements in flight against a hosted API
LOCAL_CONCURRENCY = 1  # llama.cpp serves one request at a time unless started with slots
LOCAL_DEFAULT_URL = "http://127.0.0.1:8080/v1"


@dataclass(frozen=True)
class BackendKind:
    """What the package needs to know of one backend, and how to build it."""

    name: str
    served: str  # where its judgements come from, for messages ("served locally")
    key_variable: str | None  # the environment variable holding its API key
    key_required: bool  # a live call without that key is refused before any test
    takes_base_url: bool  # `--judge-base-url` applies (and the server's fingerprint with it)
    starts_embedded_server: bool  # a live run without a base URL starts the embedded judge
    replay_only: bool  # imported from a release: replayed, never called nor recorded
    free_when_unpriced: bool  # no row in the price table costs nothing (not an error)
    concurrency: int  # a record phase's judgements in flight by default
    batch_api: Callable[[Any], BatchAPI] | None  # its provider's batch API over its client
    build: Callable[..., Backend]  # the factory; see `make_backend`


def _api_key(kind: BackendKind, environ: Mapping[str, str]) -> str:
    variable = kind.key_variable or ""
    key = environ.get(variable, "")
    if not key:
        raise BackendError(
            f"live {kind.name} calls need {variable} in the environment; export it, or replay "
            "the recorded cassettes by running pytest without --record"
        )
    return key


def _split_query(url: str) -> tuple[str, dict[str, str]]:
    """The base URL without its query, and the query's parameters (sent with every request:
    the SDK would append paths after the query). A key among them never reaches a cassette
    (`judges.calls.credentials`)."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", parts.fragment)), query


def _openai_client(key: str, base_url: str | None, timeout: float) -> Any:
    import openai

    base, query = _split_query(base_url) if base_url else (None, {})
    return openai.OpenAI(
        api_key=key,
        base_url=base,
        default_query=query or None,
        max_retries=0,
        timeout=timeout,
        default_headers=PINNED_HEADERS,
    )


REPLAY_KEY = "replay-no-key"  # what a replay's client holds: no request leaves the machine


@contextmanager
def replay_keys() -> Iterator[None]:
    """While a team's judge callable replays: each provider key variable that is unset holds
    `REPLAY_KEY`, since the team's client refuses to start without a key and the replay
    sends nothing. Set ones are left as they are."""
    added = [
        kind.key_variable
        for kind in REGISTRY.values()
        if kind.key_required and kind.key_variable and not os.environ.get(kind.key_variable)
    ]
    for variable in added:
        os.environ[variable] = REPLAY_KEY
    try:
        yield
    finally:
        for variable in added:
            os.environ.pop(variable, None)


def _build_openai(
    model: ModelRef, *, base_url: str | None, live: bool, environ: Mapping[str, str],
    timeout: float,
) -> Backend:  # fmt: skip
    key = _api_key(REGISTRY["openai"], environ) if live else REPLAY_KEY
    return OpenAIBackend(model, _openai_client(key, base_url, timeout))


def _build_local(
    model: ModelRef, *, base_url: str | None, live: bool, environ: Mapping[str, str],
    timeout: float,
) -> Backend:  # fmt: skip
    key = environ.get(REGISTRY["local"].key_variable or "") or "local-no-key"
    return LocalBackend(model, _openai_client(key, base_url or LOCAL_DEFAULT_URL, timeout))


def _build_anthropic(
    model: ModelRef, *, base_url: str | None, live: bool, environ: Mapping[str, str],
    timeout: float,
) -> Backend:  # fmt: skip
    import anthropic

    key = _api_key(REGISTRY["anthropic"], environ) if live else REPLAY_KEY
    # The SDK's own variable (a proxy, a gateway, a test server); cassettes match on the
    # path, never the host, so they replay whichever host recorded them.
    client = anthropic.Anthropic(
        api_key=key,
        base_url=environ.get("ANTHROPIC_BASE_URL") or None,
        max_retries=0,
        timeout=timeout,
        default_headers=PINNED_HEADERS,
    )
    return AnthropicBackend(model, client)


def _build_imported(
    model: ModelRef, *, base_url: str | None, live: bool, environ: Mapping[str, str],
    timeout: float,
) -> Backend:  # fmt: skip
    if live:
        raise BackendError(
            f"{model} holds judgements imported from a release: they are replayed, never "
            "called live; import them again with `python -m judges import`, or record "
            "another judge model with --judge-model"
        )
    return ImportedBackend(model)


REGISTRY: Mapping[str, BackendKind] = {
    kind.name: kind
    for kind in (
        BackendKind(
            "openai", "served by OpenAI's API", "OPENAI_API_KEY", key_required=True,
            takes_base_url=True, starts_embedded_server=False, replay_only=False,
            free_when_unpriced=False, concurrency=HOSTED_CONCURRENCY,
            batch_api=OpenAIBatches, build=_build_openai,
        ),
        # Anthropic's base URL is the SDK's own ANTHROPIC_BASE_URL, never --judge-base-url.
        BackendKind(
            "anthropic", "served by Anthropic's API", "ANTHROPIC_API_KEY", key_required=True,
            takes_base_url=False, starts_embedded_server=False, replay_only=False,
            free_when_unpriced=False, concurrency=HOSTED_CONCURRENCY,
            batch_api=AnthropicBatches, build=_build_anthropic,
        ),
        # An OpenAI-compatible server (llama.cpp, Ollama, vLLM); its key is optional.
        BackendKind(
            "local", "served locally", "JUDGES_LOCAL_API_KEY", key_required=False,
            takes_base_url=True, starts_embedded_server=True, replay_only=False,
            free_when_unpriced=True, concurrency=LOCAL_CONCURRENCY,
            batch_api=None, build=_build_local,
        ),
        # Judgements released by others (`python -m judges import`): nothing was spent here.
        BackendKind(
            "imported", "imported from a release", None, key_required=False,
            takes_base_url=False, starts_embedded_server=False, replay_only=True,
            free_when_unpriced=True, concurrency=HOSTED_CONCURRENCY,
            batch_api=None, build=_build_imported,
        ),
    )
}  # fmt: skip

# The backend names `ModelRef.parse` accepts, in the registry's order.
BACKENDS = tuple(REGISTRY)
# The backend whose models are imported, for the importer to name the models it writes.
IMPORTED = next(kind.name for kind in REGISTRY.values() if kind.replay_only)
# Every key variable, scrubbed by value wherever it shows (`judges.calls.credentials`).
KEY_VARIABLES = tuple(kind.key_variable for kind in REGISTRY.values() if kind.key_variable)


def backend_of(model: ModelRef | str) -> BackendKind:
    """The entry of a model (`ModelRef`, or its text `openai:gpt-4o`) or of a bare backend
    name (`imported`, as a fingerprint holds it)."""
    name = model.backend if isinstance(model, ModelRef) else model.partition(":")[0]
    try:
        return REGISTRY[name]
    except KeyError:
        raise BackendError(f"unknown backend {name!r}: one of {', '.join(REGISTRY)}") from None


def is_imported(model: ModelRef | str | None) -> bool:
    """Whether a model, or a backend name, holds imported judgements (replayed only); an
    unknown or missing name is not."""
    name = model.backend if isinstance(model, ModelRef) else (model or "").partition(":")[0]
    kind = REGISTRY.get(name)
    return kind is not None and kind.replay_only


def base_url_for(model: ModelRef, base_url: str | None) -> str | None:
    """The session's `--judge-base-url` if it applies to this model's backend, else None."""
    return base_url if backend_of(model).takes_base_url else None


def missing_key(model: ModelRef, environ: Mapping[str, str] | None = None) -> str | None:
    """The key variable a live call to this model needs and the environment lacks."""
    kind = backend_of(model)
    environ = os.environ if environ is None else environ
    if kind.key_required and kind.key_variable and not environ.get(kind.key_variable):
        return kind.key_variable
    return None


def embedded_server_key(environ: Mapping[str, str] | None = None) -> str | None:
    """The API key the embedded judge is started with (its backend's key variable)."""
    environ = os.environ if environ is None else environ
    kind = next(kind for kind in REGISTRY.values() if kind.starts_embedded_server)
    return environ.get(kind.key_variable or "")


def open_batch_api(model: ModelRef | str, client: Any) -> BatchAPI:
    """The batch API of a model's SDK client (with retries: polling must outlast blips)."""
    kind = backend_of(model)
    if kind.batch_api is None:
        raise BackendError(f"{model} is {kind.served}: it has no batch API")
    return kind.batch_api(client.with_options(max_retries=3))


def price_for(prices: Mapping[str, Price], model: ModelRef, *, live: bool = True) -> Price:
    """Unknown local models are free; an unknown paid model is an error, not a silent 0,
    when a call would be made (`live`). A replay spends nothing, so it needs no price: a
    priced model's replayed rows count the calls as the recording did, an unpriced one's
    at no cost."""
    if str(model) in prices:
        return prices[str(model)]
    if backend_of(model).free_when_unpriced or not live:
        return Price(0.0, 0.0)
    raise BackendError(
        f'no price for {model}; add [models."{model}"] with input_per_mtok and '
        "output_per_mtok to a price file passed with --judge-prices"
    )


def make_backend(
    model: ModelRef,
    *,
    base_url: str | None = None,
    live: bool,
    environ: Mapping[str, str] | None = None,
    timeout: float = 120.0,
) -> Backend:
    """Build the SDK client. In replay no key is needed. `base_url` is dropped for a
    backend it does not apply to (`base_url_for`).

    The SDKs never retry: the runner does, within the judgement's time budget (an SDK
    retries each timeout again at full length). Replay must not retry at all: anthropic
    wraps vcrpy's "no match" error in a connection error and retries it with sleeps.
    """
    environ = dict(os.environ) if environ is None else environ
    return backend_of(model).build(
        model, base_url=base_url_for(model, base_url), live=live, environ=environ,
        timeout=timeout,
    )  # fmt: skip
