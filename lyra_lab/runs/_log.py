"""The append-only run log: one JSON object per line, the source of truth of a run.

Lines are written by orjson where it writes what ``json`` would read back the same
(``lyra_lab.runs._jsonl.json_line``: no spaces after ``,`` and ``:``; NaN, numpy floats
and the like go through ``json``).  Every event is handed to the kernel before ``event``
returns (one ``os.write`` of its whole line to a descriptor opened ``O_APPEND``), so a killed
process loses at most the line being written, and an fsync at the end of each
cell (``sync``) makes a finished cell's events survive a power cut.  A line cut
short by a kill is closed with a newline on the next open, and ``read_log``
skips it, so the log stays parseable.

Threads write their lines side by side: the kernel appends each ``write`` whole at the end
of the file, so no lock is held while a line is written.  A lock held across the write
(as before issue 45) was a convoy: the holder, back from its system call, waited for the
GIL while every other thread with a line queued behind it (~30 ms a line at 32 calls in
flight against a fast server, a cell's next call waiting on it; docs/performance.md).
The lock left only counts the writes under way, so ``close`` waits for them and never
closes a descriptor a write is still using.

Events never carry secrets: callers log backend *identities* (name, model,
base URL host), never keys or headers.
"""

from __future__ import annotations

import json
import os
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, Iterator

import numpy as np

from lyra_lab.runs._jsonl import json_line
from lyra_lab._records import iter_jsonl


def _default(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, np.generic):  # numpy scalars
        return value.item()
    return str(value)


class RunLog:
    """Append events to ``path`` (JSON Lines).

    Usable as a context manager; ``event(type, **fields)`` writes
    ``{"event": type, "t": <unix time>, **fields}``.
    """

    def __init__(self, path: str | os.PathLike[str], durable: bool = True):
        """Open ``path`` for appending events.

        ``durable=False``: lines are buffered (no write per event) and there is no fsync, the
        buffer written on ``close`` (a private log read once it is closed, such as a cell's in a
        worker process).
        """
        self.path = Path(path)
        self._durable = durable
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()  # held only to count writes under way, never across one
        self._writes_done = threading.Condition(self._lock)
        self._writing = 0  # writes under way (durable)
        self._encode = json.JSONEncoder(ensure_ascii=False, default=_default, sort_keys=False).encode  # one for all
        self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        # A previous run killed mid-line leaves no trailing newline: close that line
        # so the next event starts on its own.
        size = os.fstat(self._fd).st_size
        if size > 0 and os.pread(self._fd, 1, size - 1) != b"\n":
            _write_all(self._fd, b"\n")
        self._buffer: BinaryIO | None = None if durable else os.fdopen(os.dup(self._fd), "ab")

    def event(self, event: str, /, **fields: object) -> None:
        record = {"event": event, "t": round(time.time(), 6), **fields}
        self._write(json_line(record, self._encode, _default))  # orjson, reading back as json's line would

    def append_lines(self, lines: bytes) -> None:
        """Append whole lines another ``RunLog`` wrote (a cell run in another process), as they are."""
        if lines:
            self._write(lines if lines.endswith(b"\n") else lines + b"\n")

    def _write(self, data: bytes) -> None:
        """Append ``data`` (whole lines): handed to the kernel now unless the log is not ``durable``."""
        with self._lock:
            if self._fd < 0:
                raise ValueError(f"run log {self.path} is closed")
            if self._buffer is not None:  # a private log: one thread's lines, buffered
                self._buffer.write(data)
                return
            self._writing += 1
            fd = self._fd
        try:
            _write_all(fd, data)  # without the lock: the kernel appends each write whole
        finally:
            with self._lock:
                self._writing -= 1
                if self._writing == 0:
                    self._writes_done.notify_all()

    def sync(self) -> None:
        """Flush and fsync: called at the end of every cell."""
        with self._lock:
            if self._fd >= 0:
                self._sync_locked()

    def close(self) -> None:
        """Wait for the writes under way, sync and close; later events raise ``ValueError``."""
        with self._lock:
            if self._fd < 0:
                return
            self._writes_done.wait_for(lambda: self._writing == 0)
            self._sync_locked()
            if self._buffer is not None:
                self._buffer.close()
            os.close(self._fd)
            self._fd = -1

    def _sync_locked(self) -> None:
        """Write out the buffer, and fsync a ``durable`` log (the caller holds the lock, the log is open)."""
        if self._buffer is not None:
            self._buffer.flush()
        if self._durable:
            os.fsync(self._fd)

    def __enter__(self) -> "RunLog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _write_all(fd: int, data: bytes) -> None:
    """``os.write`` until all of ``data`` is written (a regular file takes it in one write but when full)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class NullLog:
    """A run log that records nothing (for ad-hoc replays outside an experiment)."""

    def event(self, event: str, /, **fields: object) -> None:
        pass

    def sync(self) -> None:
        pass

    def close(self) -> None:
        pass


def read_log(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The events of a run log, skipping a line cut short by a kill."""
    return iter_jsonl(path)
