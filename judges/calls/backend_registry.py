"""Every backend's rules in one entry: its key, whether a base URL applies, its batch API,
its pricing, how many calls it takes at once, and the factory that builds it.

The rest of the package asks this registry (`backend_of(model).takes_base_url`,
`is_imported(model)`, `make_backend`, `price_for`) instead of comparing backend names, so
a new backend is a class in `judges.calls.backends`, an entry here, and its prices in
`prices.toml` (a layout test keeps backend names out of comparisons outside `calls/`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from judges.calls.backends import (
    AnthropicBackend,
    Backend,
    BackendError,
    ImportedBackend,
    LocalBackend,
    ModelRef,
    OpenAIBackend,
    Price,
)
from judges.calls.batch.api import AnthropicBatches, BatchAPI, OpenAIBatches

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
