"""Cells on local worker processes (``[run] executor = "processes"``): every core for a CPU-bound grid.

Threads share one GIL, so cells that compute (replay, recall, scoring) rather than wait on a
backend run one at a time however many threads run them.  Here each cell runs in one of up to
``max_cells`` worker processes (the machine's usable CPUs when ``max_cells`` is 1), as a Ray task
runs it (``_cell_task``): the worker builds its own backends and embedders from their specs,
lazily, bounded and deduplicated per machine, and sends back the cell's rows and log events; the
driver writes the events, then the rows atomically, as each cell comes back, so layout, rows and
resume are those of a serial run.

Workers are forked where the platform allows (Linux): measured on 2 cores with all of LoCoMo
(``benchmarks/harness_overhead.py``), two forked workers answer their first cell ~5 ms after
the pool starts, two spawned ones only after ~1.4 s (each imports lyra-lab, pandas and numpy
again and is sent the corpus), a forkserver with lyra-lab preloaded after ~1.1 s (the server
imports them once).  A forked worker shares the driver's memory copy-on-write, so the corpus, the
spec and objects given as ``backends=``/``embedders=`` (e.g. a ``FakeLLM``) reach it without
pickling.  The workers are forked before the run opens its log or builds anything, so they inherit
no run-log handle, no SQLite connection, no live client or server and no thread of the run (a
notebook's own threads are inherited as threads always are: not at all, only their memory); a
worker never writes to the run folder and leaves through ``os._exit``, flushing nothing inherited.
Elsewhere (macOS, Windows) workers are spawned and injected objects are pickled: one that cannot
be is a ``ConfigError`` before any worker starts.

Workers ignore Ctrl-C (a terminal sends it to the whole process group); the driver stops them: on
Ctrl-C or an error, cells in flight are terminated, and every worker is gone when the run returns.
A worker that dies (killed, out of memory) fails the cell it was running, with its exit signal,
and the run goes on with the others; with none left, the cells not yet run fail the same way.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import shutil
import signal
import tempfile
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, Iterator, Sequence

from lyra_lab._machine import usable_cores
from lyra_lab.runs import CellRows
from lyra_lab.experiments.executors._cell_task import CellResult, WorkerResources, delivered, run_cell_task, shippable
from lyra_lab.experiments.cells import Cell
from lyra_lab.experiments.executors._in_process import CellJob, CellOutcome, RunContext
from lyra_lab.experiments.grid import Injected

STOP_WAIT_S = 5.0  # a worker asked to stop gets this long before it is killed


class WorkerDied(Exception):
    """The worker process running a cell ended without sending it back (killed, crashed, out of memory)."""


def start_method() -> str:
    """``fork`` where it is safe and available (Linux and other POSIX but macOS), else ``spawn``."""
    import sys

    return "fork" if sys.platform != "darwin" and "fork" in multiprocessing.get_all_start_methods() else "spawn"


def cells_at_once(max_cells: int) -> int:
    """Worker processes for ``max_cells``: itself when > 1, else the CPUs this process may use."""
    if max_cells > 1:
        return max_cells
    return usable_cores()


@dataclass
class _Worker:
    process: BaseProcess  # started: its pid is set
    conn: Connection
    cell: Cell | None = None  # the cell it is running


class CellProcesses:
    """A pool of worker processes for one run's cells; a context manager (the workers are gone on exit).

    Args:
        job: the run's cell setup and corpus, as every cell gets them.
        workers: processes to start (the runner passes ``min(cells_at_once(max_cells), cells to run)``).
        cache_dir: the run's cache folder (the workers' caches and machine-wide locks).
        injected: objects given to ``run_experiment``, inherited (fork) or pickled (spawn).
        method: the start method (default ``start_method()``).

    Raises:
        ConfigError: (spawn, forkserver) an injected backend or embedder cannot be pickled.
    """

    def __init__(self, job: CellJob, workers: int, cache_dir: Path, injected: Injected, method: str | None = None):
        self.method = method or start_method()
        if self.method != "fork":
            injected = shippable(injected, pickle.dumps, to="worker processes",
                                 instead="'serial' or 'threads' (or 'processes' on Linux, where workers are forked)")
        self._job = job
        self._args = (job, str(cache_dir), injected)
        self._count = workers
        self._workers: list[_Worker] = []
        self._back: list[tuple[Cell, _Worker, str | None]] = []  # received, not handed back yet
        self._tmp = ""

    def __enter__(self) -> "CellProcesses":
        ctx: Any = multiprocessing.get_context(self.method)
        if self.method == "fork":
            preload(self._job)
        elif self.method == "forkserver":
            ctx.set_forkserver_preload(["lyra_lab.experiments", "lyra_lab.measures", "bpe_openai"])
        self._tmp = tempfile.mkdtemp(prefix="lyra-cells-")  # the workers' cell logs; removed with the pool
        try:
            for _ in range(self._count):
                ours, theirs = ctx.Pipe()
                process = ctx.Process(target=_serve, args=(theirs, *self._args, self._tmp),
                                      daemon=True, name="lyra-cell-worker")
                process.start()
                theirs.close()
                self._workers.append(_Worker(process, ours))
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pids(self) -> list[int | None]:
        return [w.process.pid for w in self._workers]

    def outcomes(self, todo: Sequence[Cell], run: RunContext) -> Iterator[CellOutcome]:
        """Each cell as a ``CellOutcome``, in the order they finish.

        Writes each cell's events to the run's log before yielding it; adds the backends the workers
        started to ``run.started``.  A worker that dies yields its cell with a ``WorkerDied`` error.

        Raises:
            ConfigError: a worker could not build what a spec names.
            RuntimeError: a cell raised something other than ``BackendError``/``ConfigError`` (a bug),
                with the worker's traceback.
        """
        run.log.event("processes_started", workers=len(self._workers), method=self.method, pids=self.pids)
        queue = sorted(todo, key=self._work)  # the largest cells first (popped from the end), so
        # the last ones to finish are short and the workers end together (longest processing time first)
        idle = list(self._workers)
        try:
            while queue or any(w.cell for w in self._workers):
                self._dispatch(queue, idle)
                busy = [(w, w.cell) for w in self._workers if w.cell is not None]
                if not busy:
                    for cell in reversed(queue):
                        yield CellOutcome(cell, CellRows(), WorkerDied("no worker process is left to run this cell"))
                    return
                ready = set(wait([w.conn for w, _ in busy] + [w.process.sentinel for w, _ in busy]))
                back = self._back  # a cell back, its worker, its result file (None: the worker died)
                for worker, cell in busy:
                    if worker.conn not in ready and worker.process.sentinel not in ready:
                        continue
                    worker.cell = None
                    message = _receive(worker)
                    if message is None:
                        back.append((cell, worker, None))  # no file: the worker died
                        self._workers.remove(worker)
                    elif message[0] == "crash":
                        raise RuntimeError(f"cell {cell.cell_id} raised in worker process {worker.process.pid}:\n"
                                           f"{message[1]}")
                    else:
                        back.append((cell, worker, message[1]))
                        idle.append(worker)
                self._dispatch(queue, idle)  # the next cells go out before the driver writes these
                while back:
                    cell, worker, path = back.pop(0)
                    if path is None:
                        yield CellOutcome(cell, CellRows(), WorkerDied(_death(worker)))
                        continue
                    result = _load(Path(path))
                    yield delivered(result, cell, run, task_event="process_task",
                                    where=f"in worker process {result.pid}")
        finally:
            for worker in self._workers:
                if worker.cell is not None:  # stopped early (an error, Ctrl-C): its cell is abandoned
                    worker.process.terminate()

    def drain(self, run: RunContext) -> list[CellOutcome]:
        """The cells whose workers sent them back but that were not handed back yet (their events written first).

        Those received before an interrupt, and those a busy worker has finished since.
        """
        for worker in self._workers:
            if worker.cell is not None and worker.conn.poll():
                message = _receive(worker)
                if message is not None and message[0] == "result":
                    self._back.append((worker.cell, worker, message[1]))
                worker.cell = None
        out = []
        while self._back:
            cell, _, path = self._back.pop(0)
            if path is not None:
                result = _load(Path(path))
                out.append(delivered(result, cell, run, task_event="process_task",
                                     where=f"in worker process {result.pid}"))
        return out

    def _work(self, cell: Cell) -> int:
        """A cell's expected work, for the order of dispatch only.

        Its turns × (its probes + 1), since every probe ranks a memory that grows with the turns.
        """
        corpus = self._job.corpus
        turns = sum(1 for _ in corpus.conversation(cell.conversation_id).turns())
        return turns * (len(corpus.probes_for(cell.conversation_id)) + 1)

    def _dispatch(self, queue: list[Cell], idle: list[_Worker]) -> None:
        """Send the next cells of ``queue`` (last first) to ``idle`` workers; a worker found dead is dropped."""
        while queue and idle:
            worker = idle.pop()
            try:
                worker.conn.send(queue[-1])
            except OSError:  # it died while idle: the cell stays queued
                self._workers.remove(worker)
                continue
            worker.cell = queue.pop()

    def close(self) -> None:
        """Stop every worker: idle ones are asked to, then any still alive after ``STOP_WAIT_S`` is killed."""
        for worker in self._workers:
            try:
                worker.conn.send(None)
            except OSError:
                pass
        for worker in self._workers:
            worker.process.join(STOP_WAIT_S)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
        self._workers = []
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)


def preload(job: CellJob) -> None:
    """Load here what every cell loads on first use, so forked workers inherit it rather than each loading it.

    The tokenizer (bpe-openai's extension and its table of token lengths) and the scoring modules:
    loaded by each of two workers instead, they cost a LoCoMo cell ~1.3 CPU s more (measured when
    the tokenizer still meant ``import bpe_openai``'s three tables).
    """
    import lyra_lab.measures  # noqa: F401 - imported for its side effect: loaded once, before forking
    from lyra_lab.backends import token_counter

    for tokenizer in job.tokenizers:
        token_counter(tokenizer)("warm")  # loads the tokenizer (cached per process)


def _load(path: Path) -> CellResult:
    """A worker's result file, read and removed."""
    try:
        result: CellResult = pickle.loads(path.read_bytes())
        return result
    finally:
        path.unlink()


def _receive(worker: _Worker) -> tuple[str, str] | None:
    """What a worker sent for its cell (``("result", path)`` or ``("crash", traceback)``), or None if it died first."""
    try:
        if worker.conn.poll():
            sent: tuple[str, str] = worker.conn.recv()
            return sent
    except (EOFError, OSError):
        pass
    return None


def _death(worker: _Worker) -> str:
    """How a dead worker ended, for its cell's error (the process is reaped, its pipe closed)."""
    worker.conn.close()
    worker.process.join(STOP_WAIT_S)
    code = worker.process.exitcode
    how = (f"was killed by {signal.Signals(-code).name}" if code is not None and code < 0
           else f"exited with code {code}")
    return f"the worker process {worker.process.pid} running this cell {how} before finishing it"


def _serve(conn: Connection, job: CellJob, cache_dir: str, injected: Injected, log_dir: str) -> None:
    """A worker: run each cell the driver sends until it sends None (or goes away)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the driver stops us
    res = WorkerResources(job.setup.cache, Path(cache_dir), injected)
    try:
        while True:
            try:
                cell = conn.recv()
            except EOFError:  # the driver is gone
                return
            if cell is None:
                return
            try:
                result = run_cell_task(job, cell, res, node="localhost", log_dir=log_dir)
            except Exception:  # noqa: BLE001 - a bug: its traceback goes back and the driver stops the run
                conn.send(("crash", traceback.format_exc()))
                continue
            # through a file, not the pipe: a pipe holds 64 KiB, so the worker would wait (idle) until the
            # driver, busy writing another cell, read its megabytes
            path = Path(log_dir) / f"{os.getpid()}-{cell.cell_id}.pickle"
            with open(path, "wb") as fh:
                pickle.dump(result, fh, protocol=pickle.HIGHEST_PROTOCOL)
            try:
                conn.send(("result", str(path)))
            except OSError:  # the driver is gone (killed): nobody wants the result
                return
    finally:
        res.close()
