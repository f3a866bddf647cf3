"""Block outgoing connections while replaying: offline must mean offline."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _socket import socket as BaseSocket  # where the stubs declare connect and connect_ex


class NetworkBlocked(OSError):
    """A connection was attempted during an offline (replay) run."""


def block_network() -> Callable[[], None]:
    """Refuse every non-Unix connection until the returned function is called."""
    original = socket.socket.connect
    original_ex = socket.socket.connect_ex

    def refuse(self: BaseSocket, address: Any) -> None:
        if self.family == getattr(socket, "AF_UNIX", None):
            return original(self, address)
        raise NetworkBlocked(
            f"network access to {address!r} during an offline run; judge calls replay from "
            "cassettes (run with --record to make live calls)"
        )

    def refuse_ex(self: BaseSocket, address: Any) -> int:
        if self.family == getattr(socket, "AF_UNIX", None):
            return original_ex(self, address)
        raise NetworkBlocked(f"network access to {address!r} during an offline run")

    # The methods are replaced on purpose; mypy refuses any assignment to a method.
    socket.socket.connect = refuse  # type: ignore[method-assign]
    socket.socket.connect_ex = refuse_ex  # type: ignore[method-assign]

    def restore() -> None:
        socket.socket.connect = original  # type: ignore[method-assign]
        socket.socket.connect_ex = original_ex  # type: ignore[method-assign]

    return restore
