"""The append-only run log: one JSON object per line, the source of truth of a run.

Lines are written by orjson where it writes what ``json`` would read back the same
(``lyra_lab.runs._jsonl.json_line``: no spaces after ``,`` and ``:``; NaN, numpy floats
and the like go through ``json``).  One writer (a lock serializes threads), a flush after every event so a killed
process loses at most the line being written, and an fsync at the end of each
cell (``sync``) so a finished cell's events survive a power cut.  A line cut
short by a kill is closed with a newline on the next open, and ``read_log``
skips it, so the log stays parseable.

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
from typing import Any, Iterator

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

        ``durable=False``: no flush after each event and no fsync, the file's buffer written on
        ``close`` (a private log read once it is closed, such as a cell's in a worker process).
        """
        self.path = Path(path)
        self._durable = durable
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._encode = json.JSONEncoder(ensure_ascii=False, default=_default, sort_keys=False).encode  # one for all
        self._fh = open(self.path, "a+b")
        # A previous run killed mid-line leaves no trailing newline: close that line
        # so the next event starts on its own.
        self._fh.seek(0, os.SEEK_END)
        if self._fh.tell() > 0:
            self._fh.seek(-1, os.SEEK_END)
            if self._fh.read(1) != b"\n":
                self._fh.write(b"\n")
                self._fh.flush()

    def event(self, event: str, /, **fields: object) -> None:
        record = {"event": event, "t": round(time.time(), 6), **fields}
        self._write(json_line(record, self._encode, _default))  # orjson, reading back as json's line would

    def append_lines(self, lines: bytes) -> None:
        """Append whole lines another ``RunLog`` wrote (a cell run in another process), as they are."""
        if lines:
            self._write(lines if lines.endswith(b"\n") else lines + b"\n")

    def _write(self, data: bytes) -> None:
        """Append ``data`` (whole lines), flushed unless the log is not ``durable``."""
        with self._lock:
            if self._fh.closed:
                raise ValueError(f"run log {self.path} is closed")
            self._fh.write(data)
            if self._durable:
                self._fh.flush()

    def sync(self) -> None:
        """Flush and fsync: called at the end of every cell."""
        with self._lock:
            self._sync_locked()

    def close(self) -> None:
        with self._lock:
            self._sync_locked()
            self._fh.close()

    def _sync_locked(self) -> None:
        """Flush, and fsync a ``durable`` log (the caller holds the lock); nothing once closed."""
        if not self._fh.closed:
            self._fh.flush()
            if self._durable:
                os.fsync(self._fh.fileno())

    def __enter__(self) -> "RunLog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
