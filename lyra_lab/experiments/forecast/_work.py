"""The work a run does: one decision, from the grid's cells and the run folder, shared by plan, run and resume.

Each cell of the grid is, for this run, one of:

* **new**: no rows yet: it runs;
* **finished**: rows, kept as they are;
* **degraded**: rows that fell back or lost calls (``degraded`` > 0): it runs again (the response
  cache serves every call that succeeded), unless the run keeps degraded cells (``keep_degraded``);
* **failed for good**: rows of a deterministic failure (``failed.<stage>.<reason>``, ``_failures``):
  kept, since it would fail the same way; ``retry_failed`` (``lyra-lab run --retry-failed``) runs it again;
* **alias**: it builds the same memory as an earlier pipeline's cell (``spec.aliases``): never run,
  its source's rows are copied (it waits for them unless it has kept rows of its own).

``lyra-lab plan`` forecasts exactly ``Work.todo``, which is what ``lyra-lab run`` then runs: the
plan of a resume is the resume.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from lyra_lab.experiments.cells import Cell
from lyra_lab.runs import RunFolder

#: Why a cell runs: it has no rows yet, its rows are degraded, or it failed for good and the run retries it.
REASONS = ("new", "degraded", "failed")


@dataclass(frozen=True)
class Resume:
    """A run folder to resume, and what the resume runs again (as ``RunOptions`` says for ``run_experiment``).

    Attributes:
        run_dir: the run folder.
        keep_degraded: keep degraded cells as they are (``--keep-degraded``).
        retry_failed: run the cells that failed for good again (``--retry-failed``).
        from_cache: the folder's response cache (``cache/responses.sqlite``) answers calls, so the plan counts
            only those it does not hold (a rescore's cache, restored from its export; read, never written).
    """

    run_dir: str | os.PathLike[str]
    keep_degraded: bool = False
    retry_failed: bool = False
    from_cache: bool = False


@dataclass(frozen=True)
class Work:
    """What a run will do with each cell (see the module docstring).

    Attributes:
        cells: every cell of the grid, in order.
        todo: the cells to run, in grid order.
        why: cell id → why it runs (``REASONS``), for each cell of ``todo``.
        kept: cells whose rows are kept as they are (finished, degraded kept, failed for good not retried).
        degraded: cell id → its ``degraded`` count, for each degraded cell with rows (run again or kept).
        failed: cell id → its ``failed.<stage>.<reason>``, for each cell that failed for good (retried or kept).
        sources: alias cell id → its source cell.
        waiting: source cell id → its alias cells without kept rows (they get the source's rows).
    """

    cells: tuple[Cell, ...]
    todo: tuple[Cell, ...]
    why: Mapping[str, str]
    kept: frozenset[str]
    degraded: Mapping[str, int] = field(default_factory=dict)
    failed: Mapping[str, str] = field(default_factory=dict)
    sources: Mapping[str, Cell] = field(default_factory=dict)
    waiting: Mapping[str, tuple[Cell, ...]] = field(default_factory=dict)

    def reasons(self) -> dict[str, int]:
        """How many cells run and why: ``{"new": 4, "degraded": 1, "failed": 0}``."""
        counts = Counter(self.why.values())
        return {reason: counts.get(reason, 0) for reason in REASONS}

    def failed_kept(self) -> dict[str, str]:
        """The cells that failed for good and stay so (not retried): cell id → ``failed.<stage>.<reason>``."""
        return {c: m for c, m in self.failed.items() if c in self.kept}

    def aliases_waiting(self) -> int:
        """Alias cells that get their source's rows in this run."""
        return sum(map(len, self.waiting.values()))


def decide(cells: Sequence[Cell], sources: Mapping[str, Cell], folder: RunFolder | None, *,
           keep_degraded: bool = False, retry_failed: bool = False) -> Work:
    """The ``Work`` of a run of ``cells`` into ``folder`` (None, or a folder without rows: a fresh run).

    Args:
        cells: the grid's cells (``grid_cells``).
        sources: alias cell id → its source cell (``alias_sources``).
        folder: the run folder resumed.
        keep_degraded: keep degraded cells as they are (``lyra-lab run --keep-degraded``).
        retry_failed: run the cells that failed for good again (``lyra-lab run --retry-failed``).
    """
    has_rows = folder is not None and folder.rows_dir.is_dir()
    finished = folder.finished() if has_rows and folder is not None else set()
    failed = folder.failed() if has_rows and folder is not None else {}
    degraded = {c: n for c, n in (folder.degraded().items() if has_rows and folder is not None else ())
                if c not in failed}
    again = (set() if keep_degraded else set(degraded)) | (set(failed) if retry_failed else set())
    kept = frozenset(finished - again)
    why: dict[str, str] = {}
    todo: list[Cell] = []
    waiting: dict[str, list[Cell]] = {}
    for cell in cells:
        cid = cell.cell_id
        if cid in kept:
            continue
        if cid in sources:
            waiting.setdefault(sources[cid].cell_id, []).append(cell)
            continue
        todo.append(cell)
        why[cid] = "failed" if cid in failed else "degraded" if cid in degraded else "new"
    return Work(tuple(cells), tuple(todo), why, kept, degraded, failed, dict(sources),
                {source: tuple(a) for source, a in waiting.items()})
