"""The judge backends of a command that judges (`finale`, `corpus judge`): in a replay the
network is blocked; with --record the embedded llama.cpp judge is started when a local
model has no --base-url, and stopped when the command ends."""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from judges.calls.backends import Backend, ModelRef, Price
    from judges.calls.local_server import LocalServer


def add_call_options(parser: argparse.ArgumentParser) -> None:
    """--judge-timeout and --judge-prices, as every command that calls a model spells them."""
    parser.add_argument(
        "--judge-timeout", type=float, default=120.0, metavar="SECONDS",
        help="seconds to wait for one reply (default: 120)",
    )  # fmt: skip
    parser.add_argument(
        "--judge-prices", type=Path, action="append", default=[], metavar="FILE",
        help="extra price table (TOML) overriding judges/calls/prices.toml",
    )  # fmt: skip


@contextmanager
def judging_backends(
    models: Mapping[str, ModelRef],
    *,
    record: bool,
    base_url: str | None,
    price_files: Sequence[Path] = (),
    error: type[Exception] = ValueError,
    own_clients: frozenset[str] = frozenset(),
) -> Iterator[tuple[dict[str, Backend], dict[str, Price]]]:
    """Backends and prices per model name; a problem starting the embedded judge raises
    `error` (the command's own, so it prints as that command's failure). `own_clients`: the
    model names a team's judge callable calls with its own client (their backend only names
    the model, so no key is read for them)."""
    # Here, not at the top: the commands import this module to declare their options, and
    # the backends bring in both SDKs (0.2 s of every `corpus report`).
    from judges.calls.backends import backend_of, load_prices, make_backend, price_for

    prices = load_prices(*price_files)
    resolved = {name: price_for(prices, model, live=record) for name, model in models.items()}
    server = None
    restore = None
    try:
        if not record:
            from judges.calls.network import block_network

            restore = block_network()
        elif base_url is None and any(
            backend_of(m).starts_embedded_server for m in models.values()
        ):
            server = _start_embedded_judge(models, error)
            base_url = server.base_url
        backends = {
            name: make_backend(model, base_url=base_url, live=record and name not in own_clients)
            for name, model in models.items()
        }
        yield backends, resolved
    finally:
        if server is not None:
            server.stop()
        if restore is not None:
            restore()


def _start_embedded_judge(models: Mapping[str, ModelRef], error: type[Exception]) -> LocalServer:
    """The embedded llama.cpp judge, for local models that have no --base-url."""
    from judges.calls.backends import backend_of, embedded_server_key
    from judges.calls.local_server import EMBEDDED_MODEL, LocalServerError, start_local_server

    other = sorted(n for n, m in models.items() if backend_of(m).starts_embedded_server
                   and m.model != EMBEDDED_MODEL)  # fmt: skip
    if other:
        raise error(
            f"the embedded judge serves local:{EMBEDDED_MODEL} only; pass --base-url "
            f"for {', '.join(other)}"
        )
    try:
        return start_local_server(log_dir=Path(".judges-tmp"), api_key=embedded_server_key())
    except LocalServerError as failure:
        raise error(f"{failure}. Or pass --base-url URL.") from None
