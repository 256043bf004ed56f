"""``run_experiment``: every cell of the grid, resumable, into a run folder.

The path of every number: the experiment file is validated into an ``ExperimentSpec``; the
corpus is loaded and cut (``select``); the spec is expanded into cells (``grid_cells``: one
per memory pipeline × backend × embedder × seed × conversation, each id a hash of what its
rows depend on) and resolved once into the ``CellSetup`` every cell runs with; an executor
(``executors``: serial, threads, worker processes or Ray tasks, ``[run] executor``) runs the
cells not finished yet and hands each back as it finishes; this process alone writes the run
folder: each finished cell's rows land atomically in ``rows/<cell_id>.jsonl`` and the log is
fsynced, so killing the process at any moment loses no finished cell and duplicates none.

Running again skips finished cells (a ``cell_resumed`` event each) and runs the rest,
whichever executor ran them.  A finished cell whose rows are degraded (a fallback taken or a
call lost for good, ``degraded`` > 0) is run again by default, the response cache serving every
call that succeeded, so a resume pays only the calls that failed (and those whose prompts quoted
a fallback); its ``cell_resumed`` event says ``rerun: "degraded"``.  ``RunOptions(keep_degraded=True)``
(``lyra-lab run --keep-degraded``) keeps such cells as they are.  A cell whose backend fails for good (``BackendError``), or whose
memory system fails (``MemorySystemError``), is logged as ``cell_failed`` and skipped; the run goes on, and the next run retries it
-- unless the failure would happen again (a bad request, a system that cannot start: ``cells._failures``): then the cell's rows say
``failed.<stage>.<reason>``, and a resume keeps them unless ``RunOptions(retry_failed=True)`` (``lyra-lab run --retry-failed``).
Which cells run is decided once, by ``forecast.decide``, which ``plan`` shares.  A
pipeline that builds the same memory as an earlier one (``spec.aliases``) is not run: each
of its cells gets its source cell's rows, copied with its own identifiers, as soon as the
source finishes (an ``alias`` event in the log).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, NamedTuple

import pandas as pd
from tqdm.auto import tqdm

from lyra_lab._registry import ConfigError
from lyra_lab.backends import StopToken, stoppable
from lyra_lab.experiments.cells import (Cell, CellSetup, alias_rows, alias_sources, cell_setup, check_capabilities,
                                       executor_of, grid_cells)
from lyra_lab.experiments.executors import (CellCount, CellExecutor, CellJob, CellOutcome, Heartbeat, RunContext,
                                            SerialCells, ThreadCells)
from lyra_lab.experiments._interrupt import RunInterrupted, kept_work
from lyra_lab.experiments.forecast import Work, decide
from lyra_lab.experiments._road import Ask, consent, remote_of
from lyra_lab.experiments.grid import ExperimentSpec, Injected, Resources, Selection, load_corpus, select, spec_key
from lyra_lab.recall import Recaller
from lyra_lab.runs import CellRows, RunFolder, RunLog, file_sha256, load_results, read_log


@dataclass(frozen=True)
class RunOptions:
    """How ``run_experiment`` runs, beyond what the experiment file says (nothing here changes rows).

    Attributes:
        resume: keep finished cells (default); False starts the folder over.
        progress: progress bars (shown only on a terminal).
        ray_address: with ``executor = "ray"``, the Ray cluster to join (default: start a local one).
        keep_degraded: on resume, keep finished cells whose rows are degraded instead of running them again.
        retry_failed: on resume, run again the cells that failed for good (``failed.<stage>.<reason>``), which a
            plain resume keeps (they would fail the same way).
        forecast: the run's plan (``Forecast.to_dict()``), logged as a ``plan`` event when the run starts.
        status_line: print the run's heartbeat as a line on stderr every 10 s (``lyra-lab run`` off a terminal;
            notebooks keep their progress bars).
        yes: agree up front to send the corpus's text wherever the cells to run send it (``--yes``).
        ask: without ``yes``, the question asked before text goes to a place that is not this machine
            (``_road.Ask``; the CLI asks on a terminal); None: such a run stops with one ``ConfigError`` line.
    """

    resume: bool = True
    progress: bool = True
    ray_address: str | None = None
    keep_degraded: bool = False
    retry_failed: bool = False
    forecast: Mapping[str, Any] | None = None
    status_line: bool = False
    yes: bool = False
    ask: Ask | None = None


def run_experiment(spec: ExperimentSpec | str | os.PathLike[str], run_dir: str | os.PathLike[str] | None = None,
                   options: RunOptions | None = None, injected: Injected | None = None) -> pd.DataFrame:
    """Run (or resume) an experiment and return its tidy results.

    The public entry is ``lyra_lab.experiments.run_experiment`` (``_legacy_run``: it also takes the last
    round's keywords, with a ``DeprecationWarning``); its docstring gives the arguments, the result and
    the errors, which are this function's.
    """
    if not isinstance(spec, ExperimentSpec):
        spec = ExperimentSpec.from_toml(spec)
    options = options or RunOptions()
    if options.ray_address is not None and executor_of(spec) != "ray":
        raise ConfigError(f"a Ray address ({options.ray_address}) needs executor 'ray', not {executor_of(spec)!r}")
    check_capabilities(spec)  # a missing extra (Ray, mem0, MCP) is one line before the run folder is touched
    folder = RunFolder(run_dir if run_dir is not None else Path("runs") / spec.name)
    injected = injected or Injected()
    grid = _grid_of(spec)
    # consent, before the folder is touched (a refused fresh run deletes nothing, a refused new one leaves nothing)
    work = decide(grid.cells, alias_sources(spec.aliases, grid.cells), folder if options.resume else None,
                  keep_degraded=options.keep_degraded, retry_failed=options.retry_failed)
    planned = options.forecast.get("remote_endpoints") if options.forecast is not None else None
    remote = remote_of(work.todo, cell_setup(spec, grid.selection.corpus.name), injected, planned)
    consent(spec, remote, grid.sha, options.yes, options.ask)
    with folder.lock():
        return _Run(spec, folder, options, injected, grid).run()


class _Grid(NamedTuple):
    """The corpus a run replays, as selected, its hash, and the grid's cells."""

    selection: Selection
    sha: str
    cells: list[Cell]


def _grid_of(spec: ExperimentSpec) -> _Grid:
    corpus = load_corpus(spec.corpus)
    selection = select(corpus, spec.corpus)
    sha = corpus.sha256 or file_sha256(spec.corpus.path)
    return _Grid(selection, sha, grid_cells(spec, selection.corpus, sha))


@dataclass
class _Aliases:
    """A run's alias cells (not run: their source cell's rows are copied).

    Attributes:
        sources: alias cell id → its source cell.
        waiting: source cell id → its alias cells still without rows.
    """

    sources: Mapping[str, Cell]
    waiting: dict[str, list[Cell]] = field(default_factory=dict)


class _CellCounts(NamedTuple):
    """The cells of a run attempt: all of them, those to run, and alias cells waiting for their source."""

    cells: int
    todo: int
    aliases: int


class _Run:
    """One attempt at a run folder: its cells, resume, execute, write (the steps of ``run_experiment``)."""

    def __init__(self, spec: ExperimentSpec, folder: RunFolder, options: RunOptions, injected: Injected, grid: _Grid):
        self.spec, self.folder, self.options, self.injected, self.grid = spec, folder, options, injected, grid
        self.failed: list[tuple[str, str]] = []
        self.cells = 0  # the grid's cells, once planned
        self.stop = StopToken()  # every call of this run, on any thread, stops with it (``backends._stopping``)

    def run(self) -> pd.DataFrame:
        """Run the cells not finished yet and return every finished cell's rows."""
        spec, folder = self.spec, self.folder
        folder.prepare(fresh=not self.options.resume)
        selection, sha, cells = self.grid
        folder.write_spec({**spec.to_dict(), "corpus_sha256": sha})
        if spec.source is None and spec.data is not None:  # built in Python: what `export` puts in the file
            folder.write_experiment(spec.data)
        work = decide(cells, alias_sources(spec.aliases, cells), folder, keep_degraded=self.options.keep_degraded,
                      retry_failed=self.options.retry_failed)
        todo, finished = list(work.todo), work.kept
        aliases = _Aliases(work.sources, {source: list(a) for source, a in work.waiting.items()})
        sources, waiting = aliases.sources, aliases.waiting
        job = CellJob(cell_setup(spec, selection.corpus.name, self.options.progress), selection.corpus,
                      tuple(dict.fromkeys(p.tokenizer for p in spec.pipelines)))
        # worker processes start first: before the run opens its log, builds anything or starts a thread;
        # the stop token is left last, so calls still running stop before the log and the backends close
        with self._executor(job, todo) as executor, RunLog(folder.log_path) as log, \
                Resources(spec.cache, folder.cache_dir, self.injected) as res, self._stopping():
            run = RunContext(log, res, folder.cache_dir.resolve())
            counts = _CellCounts(len(cells), len(todo), sum(map(len, waiting.values())))
            attempt = self._start(run, counts, selection, sha)
            for c in cells:  # what this resume picked up: each finished cell, kept or run again
                _log_resumed(log, c, work)
            if todo:  # check every backend spec now (starting nothing), so a missing API key fails before any work
                self._check_backends(todo, job.setup, res)
            for source_id in [s for s in waiting if s in finished]:  # sources finished by an earlier run
                self._copy_aliases(log, folder.read_rows(source_id), sources, waiting.pop(source_id))
            _share_resources(job.setup, todo, res)
            self.cells = len(cells)
            self._execute(executor, todo, run, attempt, aliases)
            log.event("run_done", run=spec.name, failed=len(self.failed), backends={**res.describe(), **run.started},
                      embeddings=_all_embeddings(res, run))
        df = load_results(folder.path)
        df.attrs["failed_cells"] = self.failed
        return df

    @contextlib.contextmanager
    def _stopping(self) -> Iterator[None]:
        """The run's calls carry its stop token; leaving (done, interrupted, failed) stops what is still running."""
        try:
            with stoppable(self.stop):
                yield
        finally:
            self.stop.stop()

    def _executor(self, job: CellJob, todo: list[Cell]) -> CellExecutor:
        """The executor of ``[run] executor`` (serial or threads by ``max_cells`` when unset)."""
        kind, spec = executor_of(self.spec), self.spec
        cache_dir = self.folder.cache_dir.resolve()
        if kind == "processes" and todo:
            from lyra_lab.experiments.executors import CellProcesses, cells_at_once

            return CellProcesses(job, min(cells_at_once(spec.max_cells), len(todo)), cache_dir, self.injected)
        if kind == "ray":
            from lyra_lab.experiments.executors import RayCells

            return RayCells(job, spec.max_cells, cache_dir, self.injected, self.options.ray_address)
        if kind == "threads" and len(todo) > 1:
            return ThreadCells(job, spec.max_cells)
        return SerialCells(job)

    def _start(self, run: RunContext, counts: _CellCounts, selection: Selection, sha: str) -> int:
        """Record the attempt (``attempts.jsonl``, ``run_started``) and return its number."""
        spec = self.spec
        env = self.folder.start_attempt(sha, {"cells": counts.cells, "executor": executor_of(spec),
                                              "cells_finished_before": counts.cells - counts.todo - counts.aliases})
        run.log.event("run_started", run=spec.name, attempt=env["attempt"], cells=counts.cells, todo=counts.todo,
                      aliases=counts.aliases, executor=executor_of(spec), started_at=env["started_at"], git=env["git"],
                      corpus=str(spec.corpus.path), corpus_sha256=sha, probes=len(selection.corpus.probes),
                      dropped_probes=selection.dropped_probes, dropped_sessions=selection.dropped_sessions)
        if self.options.forecast is not None:  # what plan said, beside what the run measures
            run.log.event("plan", **self.options.forecast)
        _recover_done_events(self.folder, run.log)
        return int(env["attempt"])

    def _check_backends(self, todo: list[Cell], setup: CellSetup, res: Resources) -> None:
        """Check every backend of the cells to run; that it is installed, where a cell calls it.

        An LLM-free grid calls none: its default ``local`` needs no llama.cpp (``lyra-lab[local]``).
        """
        called = {spec_key(b): b for c in todo for b in c.kind.needs(c, setup).backends}
        named = {spec_key(c.backend): c.backend for c in todo}
        for key, backend in {**named, **called}.items():
            res.check_backend(backend, installed=key in called)

    def _execute(self, executor: CellExecutor, todo: list[Cell], run: RunContext, attempt: int,
                 aliases: _Aliases) -> None:
        """Write each cell the executor hands back: its rows (and its aliases'), or its failure.

        On Ctrl-C, the cell being written and every cell that finished but was not handed back yet
        (``CellExecutor.drain``) are written before the interrupt goes on: ``run_interrupted`` names them.
        """
        # one count of cells from the first line to the last: the grid's, finished ones and aliases included
        cells = self.cells
        done = cells - len(todo) - sum(map(len, aliases.waiting.values()))
        bar = tqdm(total=cells, initial=done, desc=f"{self.spec.name}: cells", unit="cell",
                   disable=None if self.options.progress else True)
        written: set[str] = set()
        current: CellOutcome | None = None
        beat = Heartbeat(run.log, self.spec.name, CellCount(cells, done, len(todo)),
                         status_line=self.options.status_line)
        try:
            beat.start()
            for current in executor.outcomes(todo, run):
                copies = 0 if current.error is not None else len(aliases.waiting.get(current.cell.cell_id, []))
                self._write(current, run, attempt, aliases)
                written.add(current.cell.cell_id)
                bar.update(1 + copies)
        except KeyboardInterrupt:
            self.stop.stop()  # calls in flight and their retries, on every thread: no request is sent after this
            kept = [o for o in [current] if o is not None and o.cell.cell_id not in written]
            kept += executor.drain(run)
            for outcome in kept:
                self._write(outcome, run, attempt, aliases)
            embeddings = _all_embeddings(run.res, run)
            run.log.event("run_interrupted", run=self.spec.name,
                          kept=[o.cell.cell_id for o in kept if o.error is None], embeddings=embeddings)
            run.log.sync()
            work = kept_work(self.folder.log_path, len(self.folder.finished()), cells, embeddings, self.spec.cache)
            raise RunInterrupted(work) from None
        finally:
            beat.stop()
            bar.close()

    def _write(self, outcome: CellOutcome, run: RunContext, attempt: int, aliases: _Aliases) -> None:
        """Write one cell the executor handed back: its rows (and its aliases'), or its failure."""
        cell, waiting = outcome.cell, aliases.waiting
        if outcome.error is not None:
            run.log.event("cell_failed", cell_id=cell.cell_id, pipeline=cell.label, error=str(outcome.error))
            run.log.sync()
            self.failed.append((cell.cell_id, str(outcome.error)))
            self.failed += [(a.cell_id, f"alias of {cell.cell_id}: {outcome.error}")
                            for a in waiting.pop(cell.cell_id, [])]
            return
        outcome.rows.set_column("attempt", attempt)
        self.folder.write_rows(cell.cell_id, outcome.rows)
        run.log.event("cell_done", cell_id=cell.cell_id, pipeline=cell.label, rows=len(outcome.rows),
                      attempt=attempt)
        run.log.sync()
        if cell.cell_id in waiting:
            self._copy_aliases(run.log, outcome.rows, aliases.sources, waiting.pop(cell.cell_id))

    def _copy_aliases(self, log: RunLog, rows: CellRows, sources: Mapping[str, Cell], aliases: list[Cell]) -> None:
        """Write each alias cell's rows, copied from its source cell's ``rows``, and log ``alias`` + ``cell_done``."""
        recallers: dict[str, Recaller] = dict(self.spec.recallers)
        for alias in aliases:
            source = sources[alias.cell_id]
            copied = alias_rows(rows, source, alias, recallers)
            self.folder.write_rows(alias.cell_id, copied)
            log.event("alias", cell_id=alias.cell_id, pipeline=alias.label, same_as=source.cell_id,
                      same_as_pipeline=source.label, rows=len(copied))
            log.event("cell_done", cell_id=alias.cell_id, pipeline=alias.label, rows=len(copied),
                      alias_of=source.cell_id)
            log.sync()


def _log_resumed(log: RunLog, cell: Cell, work: Work) -> None:
    """A ``cell_resumed`` event for a cell with rows: kept (``rerun`` null) or run again (``degraded``, ``failed``)."""
    cid = cell.cell_id
    extra: dict[str, object] = {}
    if cid in work.degraded:
        extra["degraded"] = work.degraded[cid]
    if cid in work.failed:
        extra["failed"] = work.failed[cid]
    if cid in work.kept:
        log.event("cell_resumed", cell_id=cid, pipeline=cell.label, rerun=None, **extra)
    elif cid in work.why and work.why[cid] != "new":
        log.event("cell_resumed", cell_id=cid, pipeline=cell.label, rerun=work.why[cid], **extra)


def _share_resources(setup: CellSetup, todo: list[Cell], res: Resources) -> None:
    """Make every backend and embedder proxy now, on this thread (building nothing), so all cells share them.

    ``Resources`` makes one proxy per spec on first request; asking from one thread before any cell starts
    means concurrent cells can never race to make two, so each backend's ``max_concurrency`` bounds the
    requests of every cell on it together.
    """
    for cell in todo:
        res.backend(cell.backend)
        res.embedder(cell.embedder)
    if not todo or setup.answering is None:
        return
    answerer = [setup.answering.backend] if setup.answering.backend else []
    for backend in (*answerer, *(j.backend for j in setup.judges)):
        res.backend(backend)


def _all_embeddings(res: Resources, run: RunContext) -> list[dict[str, Any]]:
    """Every embedder's cache hits and misses: this process's and the worker processes' (or Ray tasks')."""
    from lyra_lab.experiments.executors import add_embeddings

    total: dict[str, dict[str, Any]] = {}
    add_embeddings(total, [stats.fields() for stats in res.embedding_stats()])
    add_embeddings(total, list(run.embeddings.values()))
    return list(total.values())


def _recover_done_events(folder: RunFolder, log: RunLog) -> None:
    """Log ``cell_done`` for cells whose rows landed but whose event did not (killed between the two)."""
    logged = {e.get("cell_id") for e in read_log(folder.log_path) if e.get("event") == "cell_done"}
    for done in sorted(folder.finished() - logged):
        log.event("cell_done", cell_id=done, recovered=True)
