"""How a run's cells are run: one protocol, four executors (serial, threads, worker processes, Ray tasks).

An executor takes the cells left to run and hands each back as it finishes, as a
``CellOutcome`` (its rows, or the error that failed it); the runner writes what comes back,
so it stays the run folder's single writer and the rows do not depend on the executor.
A cell is a pure function of (``CellJob``, cell) plus the response cache, so every executor
gives the same rows.  A ``BackendError`` or a ``MemorySystemError`` (a memory system of the grid that
crashed, hung or answered garbage) fails its cell (``CELL_FAILURES``); any other error is a bug: it
stops the run (cells not yet started are cancelled).  Each executor is a context manager: leaving it stops
whatever it started (threads, worker processes, a local Ray), also on Ctrl-C.  After a Ctrl-C,
before leaving it, the runner asks ``drain`` for the cells that finished but were not handed
back yet, and writes them: an interrupted concurrent run keeps every cell that finished its calls.
"""

from __future__ import annotations

import contextlib
import contextvars
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Iterator, NamedTuple, Protocol, Sequence

from lyra_lab.corpus import Corpus
from lyra_lab.experiments.cells import CELL_FAILURES, Cell, CellSetup, run_cell
from lyra_lab.experiments.grid import Resources
from lyra_lab.runs import CellRows, RunLog

EXECUTORS = ("serial", "threads", "processes", "ray")
__all__ = ["CELL_FAILURES", "EXECUTORS", "CellExecutor", "CellJob", "CellOutcome", "RunContext", "SerialCells",
           "ThreadCells"]


class CellOutcome(NamedTuple):
    """One cell back from an executor: its rows, or the error that failed it (rows empty)."""

    cell: Cell
    rows: CellRows
    error: Exception | None = None


@dataclass(frozen=True)
class CellJob:
    """Everything a cell needs besides its own coordinates.

    The cell setup, the corpus and the tokenizers its pipelines count with (loaded once before worker
    processes fork).
    """

    setup: CellSetup
    corpus: Corpus
    tokenizers: tuple[str, ...] = ("o200k_base",)


@dataclass
class RunContext:
    """What the runner hands an executor once the run has started: its log and its resources.

    ``started`` collects the backends that other processes started (their records, for the run log);
    ``embeddings`` their embedding cache stats (embedder -> ``EmbeddingCacheStats.fields()`` summed).
    """

    log: RunLog
    res: Resources
    cache_dir: Path
    started: dict[str, object] = field(default_factory=dict)
    embeddings: dict[str, dict[str, Any]] = field(default_factory=dict)


class CellExecutor(Protocol):
    """Runs cells and hands each back as it finishes (a context manager: leaving it stops what it started)."""

    def outcomes(self, todo: Sequence[Cell], run: RunContext) -> Iterator[CellOutcome]:
        """Each cell of ``todo`` as a ``CellOutcome``, in the order they finish (their events in ``run.log``)."""
        ...

    def drain(self, run: RunContext) -> list[CellOutcome]:
        """After an interrupt: the cells that finished but were not handed back yet (none still running)."""
        ...

    def __enter__(self) -> "CellExecutor":
        """Start what the executor needs (worker processes start before the run opens its log)."""
        ...

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        """Stop everything it started."""
        ...


class SerialCells(contextlib.AbstractContextManager["SerialCells"]):
    """The cells one after another, on this thread (``max_cells = 1``)."""

    def __init__(self, job: CellJob):
        self.job = job

    def outcomes(self, todo: Sequence[Cell], run: RunContext) -> Iterator[CellOutcome]:
        """Each cell run here, in order."""
        for cell in todo:
            try:
                yield CellOutcome(cell, run_cell(self.job.setup, cell, self.job.corpus, run.res, run.log))
            except CELL_FAILURES as exc:
                yield CellOutcome(cell, CellRows(), exc)

    def drain(self, run: RunContext) -> list[CellOutcome]:
        """None: a serial run hands each cell back as it finishes."""
        return []

    def __exit__(self, *exc: object) -> None:
        """Nothing to stop."""


def _outcome(cell: Cell, future: "Future[CellRows]") -> CellOutcome:
    """A finished thread's cell: its rows, or its cell failure (``CELL_FAILURES``; anything else is raised)."""
    try:
        return CellOutcome(cell, future.result())
    except CELL_FAILURES as exc:
        return CellOutcome(cell, CellRows(), exc)


class ThreadCells(contextlib.AbstractContextManager["ThreadCells"]):
    """Up to ``max_cells`` cells at once on a thread pool: cells that wait on a backend overlap.

    Requests in flight stay bounded by each backend's ``max_concurrency``, shared by every cell on
    it.  Per-cell progress bars from several threads would overwrite each other, so only the bar
    over cells is shown.
    """

    def __init__(self, job: CellJob, max_cells: int):
        self.job, self.max_cells = job, max_cells
        self._pool: ThreadPoolExecutor | None = None
        self._unclaimed: dict[Future[CellRows], Cell] = {}  # submitted, not handed back yet

    def outcomes(self, todo: Sequence[Cell], run: RunContext) -> Iterator[CellOutcome]:
        """Each cell as its thread finishes it."""
        self._pool = ThreadPoolExecutor(max_workers=self.max_cells, thread_name_prefix="cell")
        # each cell's thread runs in a copy of this context: its calls carry the run's stop token
        futures: dict[Future[CellRows], Cell] = {
            self._pool.submit(contextvars.copy_context().run, run_cell, self.job.setup, cell, self.job.corpus,
                              run.res, run.log): cell
            for cell in todo}
        self._unclaimed = dict(futures)
        for future in as_completed(futures):
            cell = self._unclaimed.pop(future)
            yield _outcome(cell, future)

    def drain(self, run: RunContext) -> list[CellOutcome]:
        """The cells whose threads finished (rows or a cell failure) but were not handed back yet."""
        done = [(f, c) for f, c in self._unclaimed.items() if f.done() and not f.cancelled()
                and (f.exception() is None or isinstance(f.exception(), CELL_FAILURES))]
        for f, _ in done:
            del self._unclaimed[f]
        return [_outcome(c, f) for f, c in done]

    def __exit__(self, *exc: object) -> None:
        """Cancel the cells not yet started; the ones running finish on their own (daemon summarizers aside)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
