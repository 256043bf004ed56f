"""A run's heartbeat: every 10 seconds, where the run stands, in the run log and (off a terminal) on stderr.

Long model work inside a cell reports progress only when a unit of it finishes (a batch of texts
embedded, a window summarized), and a batch can take longer than that.  The heartbeat thread
does not wait for one: every ``every_s`` seconds it reads what the cells logged since its last
beat (``cell_started`` with the cell's window count, ``progress`` of an embedder, ``summary_written``),
and writes a ``progress`` event (``source: "heartbeat"``) with the current phase's done, total,
rate and ETA and the run's finished cells; with ``status_line`` it also prints one line to
stderr, for a run whose stderr is a file or a pipe, where progress bars show nothing.

Cells in worker processes or Ray tasks send their events back when they finish, so there the
heartbeat says how many cells are done and the run's ETA from their rate.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from lyra_lab._terminal import fit
from lyra_lab.backends import ProgressEvent
from lyra_lab.runs import RunLog

EVERY_S = 10.0
_WATCHED = (b'"cell_started"', b'"progress"', b'"summary_written"', b'"answer"', b'"cell_done"', b'"cell_failed"')


class CellCount(NamedTuple):
    """The grid's cells: all of them, those already finished (earlier runs, aliases copied), those run now."""

    total: int
    done: int = 0
    to_run: int | None = None  # None: ``total - done``


@dataclass
class _Cell:
    """What the heartbeat knows of one cell in flight."""

    label: str
    started: float
    flushes: int = 0
    summarizes: bool = True  # its windows go through a summarizer (else they are stored as they are)
    system: bool = False  # a memory system's cell: ingest and queries, no windows to count
    written: int = 0
    answers: int = 0  # the answers its QA stage will give (0: no QA)
    answered: int = 0
    answered_first: float = 0.0  # when its first and its last answer were logged
    answered_at: float = 0.0
    embedding: dict[str, Any] | None = None  # its last embedder progress (ProgressEvent fields)
    embedding_at: float = 0.0
    summary_at: float = 0.0


class Heartbeat:
    """A thread writing a ``progress`` event (and a status line) every ``every_s`` seconds while a run runs.

    Every line counts the grid's cells, as the progress bar and the run's last line do: those finished
    before (``done``) and alias cells (copied, not run) count as done too; the ETA is the time per cell
    run here times the cells left to run.

    Args:
        log: the run log (read from its file, written through the object).
        run: the experiment's name (the status line's first word).
        cells: the grid's cells (a number: none finished yet, all to run; or a ``CellCount``).
        every_s: seconds between beats (default ``EVERY_S``).
        status_line: also print each beat's line to stderr.
    """

    def __init__(self, log: RunLog, run: str, cells: int | CellCount, every_s: float | None = None,
                 status_line: bool = False):
        count = cells if isinstance(cells, CellCount) else CellCount(cells)
        self.log, self.run, self.cells, self.status_line = log, run, count.total, status_line
        self.every_s = EVERY_S if every_s is None else every_s
        self.done = count.done
        self.to_run = count.total - count.done if count.to_run is None else count.to_run
        self.ran = 0  # cells run here that finished or failed
        self._in_flight: dict[str, _Cell] = {}
        self._offset = log.path.stat().st_size if log.path.exists() else 0
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="lyra-heartbeat", daemon=True)

    def start(self) -> None:
        """Start beating (with a status line, the first one now: where the run starts from)."""
        if self.status_line:
            print(self.line(None), file=sys.stderr, flush=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop beating (waits for a beat under way)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _beat(self) -> None:
        due = time.monotonic() + self.every_s
        # on a fixed schedule: a beat's own work does not push the next one past ``every_s``
        while not self._stop.wait(max(0.0, due - time.monotonic())):
            due += self.every_s
            try:
                self._read(self.log.path)
                event = self.status()
                self.log.event("progress", source="heartbeat", cells_done=self.done, cells_total=self.cells,
                               **(event.fields() if event is not None else {}))
                if self.status_line:
                    print(self.line(event), file=sys.stderr, flush=True)
            except Exception:  # noqa: BLE001 - a heartbeat never breaks the run
                continue

    def _read(self, path: Path) -> None:
        with open(path, "rb") as fh:
            fh.seek(self._offset)
            data = fh.read()
        end = data.rfind(b"\n") + 1  # a line being written is read at the next beat
        self._offset += end
        for line in data[:end].splitlines():
            if any(marker in line for marker in _WATCHED):
                self._see(json.loads(line))

    def _see(self, e: dict[str, Any]) -> None:
        kind, cell_id = e.get("event"), str(e.get("cell_id", ""))
        # when it happened (the log's wall time), on the monotonic clock: a beat reads events late
        now = time.monotonic() - max(0.0, time.time() - float(e.get("t") or time.time()))
        if kind == "cell_started":
            label = f"{e.get('pipeline')} · {e.get('conversation_id')}"
            summarizer = (e.get("spec") or {}).get("summarizer", "none") if isinstance(e.get("spec"), dict) else None
            self._in_flight[cell_id] = _Cell(label, now, int(e.get("flushes") or 0),
                                             summarizes=summarizer not in (None, "none"), system="system" in e,
                                             answers=int(e.get("answers") or 0))
        elif kind in ("cell_done", "cell_failed") and e.get("source") != "heartbeat":
            if self._in_flight.pop(cell_id, None) is not None:
                self.done, self.ran = self.done + 1, self.ran + 1
            elif e.get("alias_of"):  # an alias cell's rows copied from its source: done, not run
                self.done += 1
        elif cell_id in self._in_flight:
            cell = self._in_flight[cell_id]
            if kind == "progress":
                cell.embedding, cell.embedding_at = e, now
            elif kind == "summary_written":
                cell.written, cell.summary_at = cell.written + 1, now
            elif kind == "answer":
                cell.answered, cell.answered_at = cell.answered + 1, now
                cell.answered_first = cell.answered_first or now

    def status(self) -> ProgressEvent | None:
        """The stage running in the most recently active cell in flight (None: nothing in flight seen).

        An embedder's progress while it works; else ``summarize`` with windows summarized of all while
        a summarizer works through the conversation, ``store`` for windows stored as they are (no
        summarizer); ``recall`` once every window is written (probes asked); ``ingest and query`` for a
        memory system, which reports no count (``total`` 0); ``answer`` with answers given of all once a
        QA cell's first answer is logged (its rate and ETA from the answers since the first).
        """
        if not self._in_flight:
            return None
        cell = max(self._in_flight.values(), key=lambda c: max(c.embedding_at, c.summary_at, c.answered_at, c.started))
        now = time.monotonic()
        if cell.answers and cell.answered:
            return _answering(cell, now)
        if cell.embedding is not None and not cell.embedding.get("finished") and cell.embedding_at >= cell.summary_at:
            e = cell.embedding
            return ProgressEvent(str(e["task"]), int(e["done"]), int(e["total"]), str(e["unit"]),
                                 round(float(e["elapsed_s"]) + now - cell.embedding_at, 3), float(e["rate"]),
                                 None if e.get("eta_s") is None else max(0.0, float(e["eta_s"]) - (now - cell.embedding_at)))
        elapsed = now - cell.started
        if cell.system or cell.written >= cell.flushes:
            stage = "ingest and query" if cell.system else "recall"
            return ProgressEvent(f"{stage}: {cell.label}", 0, 0, "probe", round(elapsed, 3), 0.0, None)
        rate = cell.written / elapsed if elapsed > 0 else 0.0
        eta = (cell.flushes - cell.written) / rate if rate > 0 else None
        stage = "summarize" if cell.summarizes else "store"
        return ProgressEvent(f"{stage}: {cell.label}", cell.written, cell.flushes, "window", round(elapsed, 3),
                             round(rate, 3), None if eta is None else round(eta, 1))

    def line(self, event: ProgressEvent | None) -> str:
        """``[2m10s] demo: 3/8 cells · embed passages: e5 1,200/5,882 texts (20%), 31.2 texts/s, ETA 2m30s``.

        One ETA a line: the stage in flight's own (its units left at its measured rate) when it has
        one; else the run's, from the time per cell run here (``run ETA``: on its own it only follows
        the elapsed time, as cached and cheap cells finish first).  Wrapped at ``COLUMNS`` columns
        (``lyra_lab._terminal.fit``), never cut.
        """
        elapsed = time.monotonic() - self._started
        counted = event is not None and event.total > 0
        eta = ""
        if self.ran and not (counted and event is not None and event.eta_s is not None):
            eta = f" · run ETA {_duration(elapsed / self.ran * max(0, self.to_run - self.ran))}"
        now = ""
        if event is not None:  # a stage without a count says how long it has run
            now = f" · {event.line() if counted else f'{event.task}, {_duration(event.elapsed_s)} so far'}"
        return fit(f"[{_duration(elapsed)}] {self.run}: {self.done}/{self.cells} cells{now}{eta}")


def _answering(cell: _Cell, now: float) -> ProgressEvent:
    """``answer: <cell>`` with answers given of all, their rate since the first and the time left at it."""
    span = cell.answered_at - cell.answered_first
    rate = (cell.answered - 1) / span if cell.answered > 1 and span > 0 else 0.0
    eta = (cell.answers - cell.answered) / rate if rate > 0 else None
    return ProgressEvent(f"answer: {cell.label}", cell.answered, cell.answers, "answer",
                         round(now - cell.answered_first, 3), round(rate, 3),
                         None if eta is None else max(0.0, round(eta - (now - cell.answered_at), 1)))


def _duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
