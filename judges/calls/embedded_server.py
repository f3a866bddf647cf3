"""`python -m judges.calls.embedded_server ARGS`: llama_cpp.server, each request from scratch.

llama-cpp-python keeps the previous request's tokens in its context and evaluates only
what differs from them. The reused part was computed in other batch shapes, so the logits
differ in their last bits, and a sampled reply can differ: a request got different replies
depending on the request before it. Here every request is evaluated from an empty context,
so a reply depends on the request alone. The cost is small: the planted items differ from
their first lines, so little was being reused anyway.

Takes the arguments of `python -m llama_cpp.server`; needs the `local` extra.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

FRESH_CONTEXT = "fresh per request"  # what the judge's fingerprint says of this server


def from_empty_context(generate: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap `Llama.generate` so that no token of an earlier request is reused."""

    @functools.wraps(generate)
    def fresh(self: Any, *args: Any, **kwargs: Any) -> Any:
        self.reset()  # n_tokens = 0: nothing to match a prefix against; the KV is rewritten
        return generate(self, *args, **kwargs)

    return fresh


def main() -> None:
    import llama_cpp
    from llama_cpp.server.__main__ import main as serve

    llama_cpp.Llama.generate = from_empty_context(llama_cpp.Llama.generate)
    serve()


if __name__ == "__main__":
    main()
