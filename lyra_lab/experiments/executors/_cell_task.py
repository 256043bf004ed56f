"""One cell run in another process (a Ray task or a local worker process), and its result back in the driver.

The executors that run cells outside the driver's process (``_ray``, ``_processes``) share this:
the task body (``run_cell`` with its log events captured, each with its own time, and errors
mapped as the serial runner maps them: ``CELL_FAILURES`` fail the cell, ``ConfigError`` stops the
run), what it sends back (``CellResult``), the worker's ``Resources`` (built from specs, bounded
and deduplicated per machine), the check that injected objects can travel, and the driver's side
(``delivered``: the events written to the run log, then the outcome handed to the runner, which
writes the rows).  The driver stays the run folder's single writer.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from lyra_lab.runs import CellRows
from lyra_lab._registry import ConfigError
from lyra_lab.backends import Backend, BackendSpec, EmbeddingCacheStats
from lyra_lab.experiments.cells import Cell, run_cell
from lyra_lab.experiments.executors._in_process import CELL_FAILURES, CellJob, CellOutcome, RunContext
from lyra_lab.experiments.executors._machine_locks import MachineSlots, OneCallAcrossProcesses
from lyra_lab.experiments.grid import Injected, Resources
from lyra_lab.runs import RunLog


class RemoteCellError(Exception):
    """A cell's ``BackendError`` as its task reported it (the same text a serial run records)."""


@dataclass
class CellResult:
    """What a task sends back: rows, or the error that failed the cell; its events; where it ran."""

    rows: CellRows
    log_lines: bytes  # the cell's run-log lines, as the task's own RunLog wrote them
    error: str | None = None
    config_error: str | None = None
    started: dict[str, Any] = field(default_factory=dict)  # Resources.describe() of what it built
    node: str = ""
    pid: int = 0
    embeddings: list[dict[str, Any]] = field(default_factory=list)  # this cell's embedding cache stats, per embedder


def run_cell_task(job: CellJob, cell: Cell, res: Resources, *, node: str = "", log_dir: str | None = None) -> CellResult:
    """Run one cell on ``res``; its events go to a private log file (in ``log_dir``) and come back with the rows.

    Errors other than ``CELL_FAILURES`` and ``ConfigError`` are bugs and propagate.
    """
    with tempfile.TemporaryDirectory(prefix="lyra-cell-", dir=log_dir) as tmp:
        path = Path(tmp) / "log.jsonl"
        error = config_error = None
        rows = CellRows()
        before = {stats.embedder: stats for stats in res.embedding_stats()}
        with RunLog(path, durable=False) as log:  # the run log's own lines, appended by the driver as they are
            try:
                rows = run_cell(job.setup, cell, job.corpus, res, log)
            except CELL_FAILURES as exc:
                error = str(exc)
            except ConfigError as exc:
                config_error = str(exc)
        log_lines = path.read_bytes()
    started = {k: v for k, v in res.describe().items() if v.get("started", True) is not False}
    embeddings = [embedding_delta(stats, before.get(stats.embedder)) for stats in res.embedding_stats()]
    return CellResult(rows, log_lines, error, config_error, started, node, os.getpid(), embeddings)


def embedding_delta(now: EmbeddingCacheStats, before: EmbeddingCacheStats | None) -> dict[str, Any]:
    """What an embedder's cache served between two snapshots (``EmbeddingCacheStats.fields()``)."""
    if before is None:
        return now.fields()
    return {"embedder": now.embedder, "hits": now.hits - before.hits, "misses": now.misses - before.misses,
            "embedded_chars": now.embedded_chars - before.embedded_chars, "embed_s": now.embed_s - before.embed_s}


def add_embeddings(total: dict[str, dict[str, Any]], stats: list[dict[str, Any]]) -> None:
    """Add per-embedder stats (``EmbeddingCacheStats.fields()``) into ``total`` (embedder -> summed fields)."""
    for item in stats:
        into = total.setdefault(item["embedder"], {"embedder": item["embedder"], "hits": 0, "misses": 0,
                                                   "embedded_chars": 0, "embed_s": 0.0})
        for key in ("hits", "misses", "embedded_chars", "embed_s"):
            into[key] += item[key]


def delivered(result: CellResult, cell: Cell, run: RunContext, *, task_event: str, where: str) -> CellOutcome:
    """The runner's ``CellOutcome`` for a task's result, its events written to the run's log first.

    The events are appended as the task wrote them (each with its own ``"t"``; neither parsed nor
    encoded again); ``task_event`` (e.g. ``ray_task``) then records where the cell ran.  Adds the backends the task started to ``started``.

    Raises:
        ConfigError: the task could not build what a spec names (``where`` says where it ran).
    """
    if result.config_error is not None:
        raise ConfigError(f"cell {cell.cell_id} {where}: {result.config_error}")
    run.log.append_lines(result.log_lines)  # as written there: neither parsed nor encoded again
    run.log.event(task_event, cell_id=cell.cell_id, node=result.node, pid=result.pid)
    run.started.update(result.started)
    add_embeddings(run.embeddings, result.embeddings)
    return CellOutcome(cell, result.rows, None if result.error is None else RemoteCellError(result.error))


def shippable(injected: Injected, dumps: Callable[[object], object], *, to: str, instead: str) -> Injected:
    """The injected objects, checked to pickle by ``dumps``; ``ConfigError`` names the first that does not.

    ``to`` says where they would go ("Ray tasks"), ``instead`` which executors need no pickling.
    """
    for kind, given in (("backends", injected.backends), ("embedders", injected.embedders)):
        for label, obj in given.items():
            try:
                dumps(obj)
            except Exception as exc:  # noqa: BLE001 - pickling fails in many ways (TypeError, PicklingError…)
                raise ConfigError(
                    f"{kind}[{label!r}]: a {type(obj).__name__} cannot be sent to {to} ({exc}); name it by "
                    f"a spec in [run] {kind}, or use executor {instead}") from None
    return injected


class WorkerResources(Resources):
    """``Resources`` of a worker process: requests bounded per machine, a cache miss paid once per machine."""

    def _cached(self, backend: Backend) -> Backend:
        import hashlib
        import json

        caps = backend.capabilities
        slots = caps.max_concurrency
        if isinstance(slots, int) and slots > 0:
            name = hashlib.sha256(json.dumps(caps.identity, sort_keys=True, default=str).encode()).hexdigest()[:16]
            backend = MachineSlots(backend, self.cache_dir / "slots" / name, slots)
        return super()._cached(backend)

    def _build_backend(self, spec: BackendSpec) -> Backend:
        backend = super()._build_backend(spec)
        return backend if self.cache == "off" else OneCallAcrossProcesses(backend, self.cache_dir / "inflight")
