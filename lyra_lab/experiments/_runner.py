"""``run_experiment``: every cell of the grid, resumable, into a run folder.

Cells run one after another by default; ``[run] max_cells`` runs up to that many
at once on a thread pool (requests in flight stay bounded by each backend's
``max_concurrency``, shared by every cell on that backend; within a cell,
summaries may run ``workers`` windows ahead).  The runner's thread alone writes
the run folder, and rows do not depend on the order cells finish in.  Each finished
cell's rows land atomically in ``rows/<cell_id>.jsonl`` and the log is fsynced,
so killing the process at any moment loses no finished cell and duplicates
none; running again skips finished cells (a ``cell_resumed`` event each) and
runs the rest, whichever executor ran them (``[run] executor``: serial, threads,
worker processes, see ``_processes``, or Ray tasks, see ``_ray``; the rows are the same).  A cell whose
backend fails for good (``BackendError``) is logged as ``cell_failed`` and
skipped; the run goes on, and the next run retries it.  A pipeline that
builds the same memory as an earlier one (``spec.aliases``) is not run: each of
its cells gets its source cell's rows, copied with its own identifiers, as soon
as the source finishes (an ``alias`` event in the log).
"""

from __future__ import annotations

import contextlib
import gc
import os
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Generator, Iterator, Mapping

import pandas as pd
from tqdm.auto import tqdm

from lyra_lab.backends import Backend, BackendError, Embedder
from lyra_lab.experiments._cells import Cell, cell_id
from lyra_lab.experiments._combos import alias_rows, alias_sources
from lyra_lab.experiments._cell_run import run_cell
from lyra_lab.experiments._labels import pipeline_labels
from lyra_lab.experiments._resources import Resources, spec_key
from lyra_lab.runs import CellRows, RunFolder, RunLog, file_sha256, load_results, read_log
from lyra_lab.experiments._select import load_corpus, select
from lyra_lab.experiments._spec import ExperimentSpec, vars_of
from lyra_lab.replay import Registries


def plan_cells(spec: ExperimentSpec, corpus: Any, corpus_sha256: str) -> list[Cell]:
    """Every cell: memory pipeline × backend × embedder × seed × conversation (in that nesting)."""
    labels = pipeline_labels(spec.pipelines)
    recallers = [{"label": label, **_spec(r)} for label, r in spec.recallers]
    cells = []
    for pipeline in spec.pipelines:
        for backend in spec.backends:
            for embedder in spec.embedders:
                for seed in spec.seeds:
                    for conv in corpus.conversations:
                        payload = {
                            "corpus_sha256": corpus_sha256, "conversation_id": conv.id,
                            "sessions": [s.id for s in conv.sessions],
                            "probes": [p.id for p in corpus.probes_for(conv.id)],
                            "pipeline": pipeline.to_dict(), "recallers": recallers, "backend": backend,
                            "embedder": embedder, "seed": seed, "ks": list(spec.ks),
                            "qa": vars_of(spec.qa), "judge": vars_of(spec.judge),
                        }
                        if spec.score_adversarial_retrieval:  # only when set: older cell ids stay valid
                            payload["score_adversarial_retrieval"] = True
                        cells.append(Cell(cell_id(payload, conv.id), pipeline, labels[pipeline], backend,
                                          embedder, seed, conv.id))
    return cells


def run_experiment(
    spec: ExperimentSpec | str | os.PathLike[str],
    run_dir: str | os.PathLike[str] | None = None,
    resume: bool = True,
    progress: bool = True,
    *,
    backends: Mapping[str, Backend] | None = None,
    embedders: Mapping[str, Embedder] | None = None,
    registries: Registries | None = None,
    ray_address: str | None = None,
) -> pd.DataFrame:
    """Run (or resume) an experiment and return its tidy results.

    Args:
        spec: an ``ExperimentSpec`` or the path of its TOML file.
        run_dir: the run folder (default ``runs/<name>``).
        resume: keep finished cells (default); False starts the folder over.
        progress: tqdm bars (shown only on a terminal).
        backends, embedders: objects to use for spec labels instead of building them.
        registries: strategy registries for a TOML path (default: lyra-lab's own).
        ray_address: with ``executor = "ray"``, the Ray cluster to join (default: start a local one).

    Returns:
        The tidy long frame of RESULTS_SCHEMA; ``df.attrs["failed_cells"]`` lists
        ``(cell_id, error)`` of cells that failed in this run.  Each row's ``attempt``
        names the run attempt that produced it (its environment is line ``attempt``
        of the folder's ``attempts.jsonl``).

    Raises:
        ConfigError: the folder holds another experiment, or a run folder of a schema
            version this lyra-lab does not write (see ``RunFolder``); on Ray, an injected
            backend or embedder that cannot be pickled.
    """
    if not isinstance(spec, ExperimentSpec):
        spec = ExperimentSpec.from_toml(spec, registries)
    if ray_address is not None and executor_of(spec) != "ray":
        from lyra_lab._registry import ConfigError

        raise ConfigError(f"a Ray address ({ray_address}) needs executor 'ray', not {executor_of(spec)!r}")
    folder = RunFolder(run_dir if run_dir is not None else Path("runs") / spec.name)
    with folder.lock(), fewer_collections():
        return _run(spec, folder, resume, progress, backends, embedders, ray_address)


@contextlib.contextmanager
def fewer_collections(allocations: int = 50_000) -> Iterator[None]:
    """Python's cyclic garbage collector run every ``allocations`` net allocations (default 700) while inside.

    A run keeps hundreds of thousands of live objects (hits, rows) that are not garbage, and each
    collection walks them again: on all of LoCoMo (``benchmarks/harness_overhead.py``) collections
    cost ~1 CPU s of ~10.  Reference counting still frees everything at once; only cycles wait
    longer.  The thresholds in force before are restored on the way out.
    """
    before = gc.get_threshold()
    gc.set_threshold(max(allocations, before[0]), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def executor_of(spec: ExperimentSpec) -> str:
    """How the cells run: ``[run] executor``, else serial (``max_cells = 1``) or threads."""
    return spec.executor or ("serial" if spec.max_cells == 1 else "threads")


def _run(spec: ExperimentSpec, folder: RunFolder, resume: bool, progress: bool,
         backends: Mapping[str, Backend] | None, embedders: Mapping[str, Embedder] | None,
         ray_address: str | None = None) -> pd.DataFrame:
    folder.prepare(fresh=not resume)
    corpus = load_corpus(spec.corpus)
    selection = select(corpus, spec.corpus)
    sha = corpus.sha256 or file_sha256(spec.corpus.path)
    folder.write_spec({**spec.to_dict(), "corpus_sha256": sha})
    cells = plan_cells(spec, selection.corpus, sha)
    finished = folder.finished()
    sources = alias_sources(spec.aliases, cells)  # alias cells are not run: their source's rows are copied
    todo = [c for c in cells if c.cell_id not in finished and c.cell_id not in sources]
    waiting: dict[str, list[Cell]] = {}  # source cell id -> its alias cells still without rows
    for c in cells:
        if c.cell_id in sources and c.cell_id not in finished:
            waiting.setdefault(sources[c.cell_id].cell_id, []).append(c)
    failed: list[tuple[str, str]] = []
    disable = None if progress else True
    # worker processes start first: before the run opens its log, builds anything or starts a thread
    with _cell_processes(spec, todo, selection.corpus, folder, backends, embedders) as pool, \
            RunLog(folder.log_path) as log, Resources(spec.cache, folder.cache_dir, backends, embedders) as res:
        n_waiting = sum(map(len, waiting.values()))
        env = folder.start_attempt(sha, {"cells": len(cells), "executor": executor_of(spec),
                                         "cells_finished_before": len(cells) - len(todo) - n_waiting})
        attempt = env["attempt"]
        log.event("run_started", run=spec.name, attempt=attempt, cells=len(cells), todo=len(todo),
                  aliases=n_waiting, executor=executor_of(spec),
                  started_at=env["started_at"], git=env["git"],
                  corpus=str(spec.corpus.path), corpus_sha256=sha, probes=len(selection.corpus.probes),
                  dropped_probes=selection.dropped_probes, dropped_sessions=selection.dropped_sessions)
        if pool is not None:
            log.event("processes_started", workers=len(pool.pids), method=pool.method, pids=pool.pids)
        _recover_done_events(folder, finished, log)
        for c in cells:
            if c.cell_id in finished:
                log.event("cell_resumed", cell_id=c.cell_id, pipeline=c.label)
        if todo:  # check every backend spec now (starting nothing), so a missing API key fails before any work
            specs = [*(c.backend for c in todo), spec.qa.backend, spec.judge.backend,
                     *(j.backend for j in spec.qa.judges)]
            for backend in {spec_key(b): b for b in specs if b}.values():
                res.check_backend(backend)
        recallers = dict(spec.recallers)
        for source_id in [s for s in waiting if s in finished]:  # sources finished by an earlier run
            _copy_aliases(folder, log, folder.read_rows(source_id), sources, waiting.pop(source_id), recallers)
        _share_resources(spec, todo, res)
        bar = tqdm(total=len(todo), desc=f"{spec.name}: cells", unit="cell", disable=disable)
        started: dict[str, Any] = {}  # backends Ray tasks or worker processes started (the driver's own are in res)
        if executor_of(spec) == "ray":
            from lyra_lab.experiments._ray import ray_outcomes

            outcomes = ray_outcomes(spec, todo, selection.corpus, log, cache_dir=folder.cache_dir.resolve(),
                                    backends=backends, embedders=embedders, address=ray_address, started=started)
        elif pool is not None:
            outcomes = pool.outcomes(todo, log, started)
        else:
            outcomes = _cell_outcomes(spec, todo, selection.corpus, res, log, progress)
        try:
            for cell, rows, error in outcomes:
                if error is not None:
                    log.event("cell_failed", cell_id=cell.cell_id, pipeline=cell.label, error=str(error))
                    log.sync()
                    failed.append((cell.cell_id, str(error)))
                    failed += [(a.cell_id, f"alias of {cell.cell_id}: {error}") for a in waiting.pop(cell.cell_id, [])]
                else:
                    rows.set_column("attempt", attempt)
                    folder.write_rows(cell.cell_id, rows)
                    log.event("cell_done", cell_id=cell.cell_id, pipeline=cell.label, rows=len(rows),
                              attempt=attempt)
                    log.sync()
                    if cell.cell_id in waiting:
                        _copy_aliases(folder, log, rows, sources, waiting.pop(cell.cell_id), recallers)
                bar.update(1)
        except KeyboardInterrupt:
            log.event("run_interrupted", run=spec.name)
            raise
        finally:
            outcomes.close()  # stops a thread pool or Ray (also on Ctrl-C)
            bar.close()
        log.event("run_done", run=spec.name, failed=len(failed), backends={**res.describe(), **started})
    df = load_results(folder.path)
    df.attrs["failed_cells"] = failed
    return df


def _cell_processes(spec: ExperimentSpec, todo: list[Cell], corpus: Any, folder: RunFolder,
                    backends: Mapping[str, Backend] | None, embedders: Mapping[str, Embedder] | None
                    ) -> contextlib.AbstractContextManager[Any]:
    """The worker processes of ``executor = "processes"`` (a ``CellProcesses``), or None when the run needs none."""
    if executor_of(spec) != "processes" or not todo:
        return contextlib.nullcontext()
    from lyra_lab.experiments._processes import CellProcesses, cells_at_once

    return CellProcesses(spec, corpus, min(cells_at_once(spec.max_cells), len(todo)),
                         cache_dir=folder.cache_dir.resolve(), backends=backends, embedders=embedders)


def _share_resources(spec: ExperimentSpec, todo: list[Cell], res: Resources) -> None:
    """Make every backend and embedder proxy now, on this thread (building nothing), so all cells share them.

    ``Resources`` makes one proxy per spec on first request; asking from one thread before any cell starts
    means concurrent cells can never race to make two, so each backend's ``max_concurrency`` bounds the
    requests of every cell on it together.
    """
    from lyra_lab.experiments._judges import judges_of

    for cell in todo:
        res.backend(cell.backend)
        res.embedder(cell.embedder)
    if not todo:
        return
    qa = [spec.qa.backend] if spec.qa.enabled and spec.qa.backend else []  # as run_cell asks for them
    for backend in (*qa, *(j.backend for j in judges_of(spec))):
        res.backend(backend)


def _cell_outcomes(spec: ExperimentSpec, todo: list[Cell], corpus: Any, res: Resources, log: RunLog,
                   progress: bool) -> Generator[tuple[Cell, CellRows, Exception | None], None, None]:
    """``(cell, rows, None)`` or ``(cell, CellRows(), error)`` for each cell, in the order they finish.

    ``max_cells = 1`` runs the cells one after another on this thread (as before ``max_cells``
    existed); more runs them on a thread pool with at most ``max_cells`` in flight.  Only this
    generator's caller writes to the run folder, so it stays the single writer.  An error other
    than ``BackendError`` is a bug: it stops the run (cells not yet started are cancelled).
    """
    if executor_of(spec) == "serial" or len(todo) <= 1:
        for cell in todo:
            try:
                yield cell, run_cell(spec, cell, corpus, res, log, progress=progress), None
            except BackendError as exc:
                yield cell, CellRows(), exc
        return
    # per-cell bars from several threads would overwrite each other: only the bar over cells is shown
    pool = ThreadPoolExecutor(max_workers=spec.max_cells, thread_name_prefix="cell")
    try:
        futures = {pool.submit(run_cell, spec, cell, corpus, res, log, progress=False): cell for cell in todo}
        for future in as_completed(futures):
            cell = futures[future]
            try:
                yield cell, future.result(), None
            except BackendError as exc:
                yield cell, CellRows(), exc
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _copy_aliases(folder: RunFolder, log: RunLog, rows: CellRows, sources: Mapping[str, Cell],
                  aliases: list[Cell], recallers: dict[str, Any]) -> None:
    """Write each alias cell's rows, copied from its source cell's ``rows``, and log ``alias`` + ``cell_done``."""
    for alias in aliases:
        source = sources[alias.cell_id]
        copied = alias_rows(rows, source, alias, recallers)
        folder.write_rows(alias.cell_id, copied)
        log.event("alias", cell_id=alias.cell_id, pipeline=alias.label, same_as=source.cell_id,
                  same_as_pipeline=source.label, rows=len(copied))
        log.event("cell_done", cell_id=alias.cell_id, pipeline=alias.label, rows=len(copied),
                  alias_of=source.cell_id)
        log.sync()


def _recover_done_events(folder: RunFolder, finished: set[str], log: RunLog) -> None:
    """Log ``cell_done`` for cells whose rows landed but whose event did not (killed between the two)."""
    logged = {e.get("cell_id") for e in read_log(folder.log_path) if e.get("event") == "cell_done"}
    for done in sorted(finished - logged):
        log.event("cell_done", cell_id=done, recovered=True)


def _spec(strategy: Any) -> dict[str, Any]:
    from lyra_lab.replay import strategy_spec

    return strategy_spec(strategy)
