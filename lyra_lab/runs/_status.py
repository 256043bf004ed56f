"""``run_status(run_dir)``: how far a run folder got, from its rows and its run log.

``cells`` is the number of cells the last attempt planned (its ``run_started`` event), ``finished``
the cells with a rows file, ``failed`` the cells whose last word in the log is ``cell_failed``
(and that have no rows since); ``failed_for_good`` the finished cells whose rows say they failed for good
(``failed.<stage>.<reason>``: a plain resume keeps them, ``lyra-lab run --retry-failed`` runs them again).
The state, in one word:

* ``finished`` — every planned cell has its rows;
* ``failed`` — some cell failed (re-running the same command retries it);
* ``partial`` — cells are missing and none failed: the run was stopped (``run_interrupted``), is
  still running, or was killed;
* ``empty`` — no cell finished.

Only the lines that can matter are parsed, so a large log is read quickly.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from lyra_lab._records import RecordError, iter_jsonl
from lyra_lab.runs._cell_rows import failure_of

_EVENTS = (b'"run_started"', b'"run_done"', b'"run_interrupted"', b'"cell_done"', b'"cell_failed"')


@dataclass(frozen=True)
class RunStatus:
    """How far a run got (see the module docstring)."""

    state: str
    cells: int | None  # planned by the last attempt; None without a log
    finished: int
    failed: tuple[str, ...]  # cell ids
    attempts: int
    started_at: str | None  # of the last attempt
    stopped: bool  # the last attempt logged run_interrupted, or never logged run_done
    failed_for_good: int = 0  # finished cells whose rows are a failure that would recur (failed.<stage>.<reason>)

    def describe(self) -> str:
        """``"6 of 8 cells finished, 2 failed"``: the status as a phrase."""
        of = f" of {self.cells}" if self.cells is not None else ""
        text = f"{self.finished}{of} cells finished"
        if self.failed:
            text += f", {len(self.failed)} failed"
        if self.failed_for_good:
            text += f", {self.failed_for_good} failed for good (--retry-failed runs them again)"
        if self.state == "partial" and self.stopped:
            text += " (stopped, or still running)"
        return text


def run_status(run_dir: str | os.PathLike[str]) -> RunStatus:
    """The ``RunStatus`` of ``run_dir`` (a folder without a log is judged by its rows alone)."""
    run_dir = Path(run_dir)
    rows = list((run_dir / "rows").glob("*.jsonl"))
    finished = {p.stem for p in rows}
    log = run_dir / "log.jsonl"
    cells: int | None = None
    attempts, started_at, stopped = 0, None, False
    last_word: dict[str, str] = {}
    if log.exists():
        for event in iter_jsonl(log, keep=lambda raw: any(e in raw for e in _EVENTS)):
            kind = event.get("event")
            if kind == "run_started":
                attempts += 1
                cells, started_at, stopped = event.get("cells"), event.get("started_at"), True
                last_word = {}
            elif kind == "run_done":
                stopped = False
            elif kind == "run_interrupted":
                stopped = True
            elif kind in ("cell_done", "cell_failed") and event.get("cell_id"):
                last_word[str(event["cell_id"])] = kind
    failed = tuple(sorted(c for c, word in last_word.items() if word == "cell_failed" and c not in finished))
    if failed:
        state = "failed"
    elif not finished:
        state = "empty"
    elif cells is None or len(finished) >= cells:
        state = "finished"
    else:
        state = "partial"
    for_good = sum(_failed_for_good(p) for p in rows)
    return RunStatus(state, cells if isinstance(cells, int) else None, len(finished), failed, attempts, started_at,
                     stopped, for_good)


def _failed_for_good(path: Path) -> bool:
    """Whether a rows file is a failure that would recur (a file that cannot be read is not: ``load_results`` says why)."""
    try:
        return failure_of(path, RecordError) is not None
    except (RecordError, OSError):
        return False
