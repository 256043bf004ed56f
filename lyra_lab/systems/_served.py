"""One of lyra-lab's pipelines served by ``lyra-lab serve-memory`` in a process of its own, as a system of the grid.

What another harness or an agent would see of a tuned pipeline: the ``served``
system writes a serve config (the pipeline, the recaller, the backend and
embedder presets the served process builds if the pipeline needs them) into the
session's temp folder and starts ``python -m lyra_lab.cli serve-memory`` there:

- ``via = "mcp"``: the command speaks MCP on stdio; the session is the ``mcp``
  system mapped to its tools (``served_pipeline_mcp``);
- ``via = "http"``: the command serves lyra-lab's memory protocol on a free port
  of 127.0.0.1 (it prints the URL); the session is the ``http`` system on it.

Closing the session stops the process (SIGTERM, then SIGKILL of its process
group) and whatever it left in its folder.  The label names the route and the
pipeline: ``served-mcp:turn_window+bm25``.  Compared with the same pipeline in
process (``pipeline``, or the grid's own replay), the memory is the same once the
conversation ended (``replay.PipelineMemory``); only the time differs.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Sequence, TypeVar

from lyra_lab._params import param
from lyra_lab.backends import DEFAULT_EMBEDDER, Backend, Embedder
from lyra_lab.corpus import Turn
from lyra_lab.systems._base import BaseSession, BaseSystem
from lyra_lab.systems._http import HttpSystem
from lyra_lab.systems._mcp import served_pipeline_mcp
from lyra_lab.systems._mcp_client import SERVER_LOG, log_tail, reap
from lyra_lab.systems._pipeline import PipelineSystem, pipeline_param, recaller_param
from lyra_lab.systems._types import SYSTEMS, Declared, IngestReport, MemorySession, MemorySystemError, SystemHit

T = TypeVar("T")
ROUTES = ("mcp", "http")
CONFIG = "serve.json"


@SYSTEMS.register("served")
@dataclass(frozen=True)
class ServedSystem(BaseSystem):
    """A lyra-lab pipeline served by ``lyra-lab serve-memory`` in its own process, over MCP or HTTP."""

    via: str = param("mcp", choices=ROUTES, doc="how the served pipeline is reached: mcp (stdio) or http "
                                                "(lyra-lab's memory protocol on 127.0.0.1).")
    pipeline: str = pipeline_param("the memory pipeline served, as in an experiment file's pipeline tables.")
    recaller: str = recaller_param("how the served memory answers a query.")
    backend: str = param("local", doc="the served process's backend preset (built only if the pipeline "
                                      "summarizes or rolls up).")
    embedder: str = param(DEFAULT_EMBEDDER, doc="the served process's embedder (built only if the recaller embeds).")
    timeout_s: float = param(60.0, gt=0, doc="seconds one call may take before the session fails.")
    start_timeout_s: float = param(120.0, gt=0, doc="seconds the served process may take to start.")

    def served(self) -> PipelineSystem:
        """The pipeline system the served process runs."""
        return PipelineSystem(pipeline=self.pipeline, recaller=self.recaller)

    def label(self) -> str:
        """``served-<via>:<pipeline>`` (``served-mcp:turn_window+bm25``)."""
        return f"served-{self.via}:{self.served().label().removeprefix('pipeline:')}"

    def declare(self) -> Declared:
        """The ``serve-memory`` process receives the text, and passes it to the presets its pipeline needs."""
        needs = self.served().needs()
        return Declared(processes=(f"lyra-lab serve-memory --{self.via}",),
                        backends=(self.backend,) if needs.backend else (),
                        embedders=(self.embedder,) if needs.embedder else (),
                        capabilities=("system:mcp",) if self.via == "mcp" else ())

    def open(self, conversation_id: str, backend: Backend | None, embedder: Embedder | None) -> "ServedSession":
        return ServedSession(self, conversation_id)


class ServedSession(BaseSession):
    """A ``serve-memory`` process and the ``mcp`` or ``http`` session on it; every failure is named by this label."""

    def __init__(self, system: ServedSystem, conversation_id: str):
        super().__init__(system.label())
        self.system = system
        self.workdir = tempfile.mkdtemp(prefix="lyra-served-")
        self._process: subprocess.Popen[str] | None = None
        self._inner: MemorySession | None = None
        config = os.path.join(self.workdir, CONFIG)
        with open(config, "w", encoding="utf-8") as f:
            json.dump({"pipeline": json.loads(system.pipeline), "recaller": json.loads(system.recaller),
                       "backend": system.backend, "embedder": system.embedder,
                       "conversation_id": conversation_id}, f)
        command = [sys.executable, "-m", "lyra_lab.cli", "serve-memory", config, f"--{system.via}"]
        try:
            self._inner = self._relabel("open", lambda: self._start(command, conversation_id))
        except BaseException:
            self._stop()
            self.closed = True
            raise

    def _start(self, command: list[str], conversation_id: str) -> MemorySession:
        system = self.system
        if system.via == "mcp":
            env = tuple(f"{k}={v}" for k, v in _child_env().items() if _passed_on(k))
            return served_pipeline_mcp(command, env=env, timeout_s=system.timeout_s,
                                       start_timeout_s=system.start_timeout_s).open(conversation_id, None, None)
        with open(os.path.join(self.workdir, SERVER_LOG), "w", encoding="utf-8") as errlog:
            self._process = subprocess.Popen([*command, "--port", "0"], cwd=self.workdir, stdout=subprocess.PIPE,
                                             stderr=errlog, text=True, start_new_session=True, env=_child_env())
        url = self._served_url(self._process)
        return HttpSystem(url=url, timeout_s=system.timeout_s).open(conversation_id, None, None)

    def _served_url(self, process: subprocess.Popen[str]) -> str:
        """The URL ``serve-memory --http`` prints once it serves (``… on http://127.0.0.1:PORT``)."""
        assert process.stdout is not None
        deadline = time.monotonic() + self.system.start_timeout_s
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                if not selector.select(timeout=min(1.0, max(0.0, deadline - time.monotonic()))):
                    if process.poll() is not None:
                        break
                    continue
                line = process.stdout.readline()
                if not line and process.poll() is not None:
                    break
                if " on http://" in line:
                    return line.rsplit(" on ", 1)[1].strip()
        tail = log_tail(self.workdir)
        why = f"exited with code {process.returncode}" if process.poll() is not None \
            else f"printed no URL within {self.system.start_timeout_s:g} s"
        raise RuntimeError(f"serve-memory --http {why}" + (f" (server: {tail})" if tail else ""))

    def _relabel(self, call: str, fn: Callable[[], T]) -> T:
        """``fn()``, a failure named by this system (not by the mcp/http session it runs on)."""
        try:
            return fn()
        except MemorySystemError as exc:
            raise MemorySystemError(self.label, exc.call, exc.reason, exc.recurs) from None
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - a process that would not start: one line
            raise MemorySystemError(self.label, call, f"{type(exc).__name__}: {exc}") from None

    def _session(self) -> MemorySession:
        if self._inner is None:
            raise MemorySystemError(self.label, "query", "the served process is not running")
        return self._inner

    def _ingest(self, turns: list[Turn], final: bool) -> IngestReport:
        return self._relabel("ingest", lambda: self._session().ingest(turns, final=final))

    def _query(self, question: str, k: int, now: datetime | None) -> Sequence[SystemHit]:
        return self._relabel("query", lambda: self._session().query(question, k, now=now))

    def _contents(self) -> Sequence[SystemHit] | None:
        return self._relabel("contents", lambda: self._session().contents())

    def _close(self) -> None:
        self._stop()

    def _stop(self) -> None:
        """Close the session on the served process, stop the process and whatever it left, remove the folder."""
        inner, self._inner = self._inner, None
        try:
            if inner is not None:
                self._relabel("close", inner.close)
        finally:
            process, self._process = self._process, None
            if process is not None:
                _terminate(process)
            reap(self.workdir)
            shutil.rmtree(self.workdir, ignore_errors=True)


def _child_env() -> dict[str, str]:
    """This process's environment with ``PYTHONPATH`` made absolute.

    The served process runs in its own folder, where a relative entry (``PYTHONPATH=.``) would name
    another ``lyra_lab`` than the one running here.
    """
    env = dict(os.environ)
    if env.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in env["PYTHONPATH"].split(os.pathsep))
    return env


def _passed_on(name: str) -> bool:
    """Whether the served MCP process gets this environment variable.

    The MCP SDK passes on only a safe few; the served process also needs what lyra-lab reads (its
    cache folder, the import path, BLAS threads) and the API keys its backends name.
    """
    return name in ("PYTHONPATH", "OPENBLAS_NUM_THREADS") or name.startswith("LYRA_LAB_") or name.endswith("_API_KEY")


def _terminate(process: subprocess.Popen[str], grace_s: float = 5.0) -> None:
    """SIGTERM (serve-memory stops its server and exits), then SIGKILL of its process group after ``grace_s``."""
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=grace_s)
    if process.stdout is not None:
        process.stdout.close()
