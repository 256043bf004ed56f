"""Failures by kind: a transient one fails a cell for this run; a deterministic one is the cell's rows.

A backend that failed for good (``BackendError``) or a memory system that failed
(``MemorySystemError``) fails its cell.  Most such failures pass (a timeout, an HTTP 5xx,
a rate limit, a dropped connection): the cell is logged ``cell_failed``, gets no rows, and
the next run tries it again.  Some would fail the same way every time, so a resume would
only pay for them again: ``deterministic`` names them, by stage and reason —

* ``failed.backend.bad_request`` / ``failed.backend.context_overflow``: the provider refused
  the request itself (``BackendError.recurs``, decided once by ``backends.recurrence``; every
  wrapper of a call, a summarizer's included, passes it on);
* ``failed.<call>.unreachable``: a memory service listening nowhere (connection refused);
* ``failed.open.cannot_start``: a memory system that cannot start (its process exited, no URL);
* ``failed.ingest.refused`` / ``failed.<call>.bad_request``: a system refusing a store or a
  call with an HTTP 4xx.

Such a cell finishes with ``failed_rows``: one conversation-level row per recaller, metric
``failed.<stage>.<reason>`` = 1, ``degraded`` = 1 (the report marks it), so the failure is
counted wherever figures appear.  A plain resume keeps it; ``lyra-lab run --retry-failed``
runs it again (``forecast._work``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from lyra_lab.backends import BackendError, overflows
from lyra_lab.runs import CellRows
from lyra_lab.systems import MemorySystemError

#: What fails one cell, not the run: a backend that failed for good, a memory system that failed.
CELL_FAILURES: tuple[type[Exception], ...] = (BackendError, MemorySystemError)
_HTTP_4XX = re.compile(r"\bHTTP (4\d\d)\b")
_TRANSIENT = re.compile(r"\bHTTP (408|409|429|5\d\d)\b|no answer|within \d|timeout|timed out", re.IGNORECASE)
_REFUSED = re.compile(r"ConnectError|Connection refused|Errno 111|Name or service not known|nodename nor servname",
                      re.IGNORECASE)


@dataclass(frozen=True)
class Failure:
    """A failure that would happen again: where (``stage``) and why (``reason``), and its one line."""

    stage: str
    reason: str
    message: str

    @property
    def metric(self) -> str:
        """``failed.<stage>.<reason>``: the metric counting it in the cell's rows."""
        return f"failed.{self.stage}.{self.reason}"


def deterministic(exc: BaseException) -> Failure | None:
    """The ``Failure`` of ``exc`` when it would fail the same way again; None when it may pass."""
    message = " ".join(str(exc).split())[:500]
    if isinstance(exc, BackendError):
        return None if exc.recurs is None else Failure("backend", exc.recurs, message)
    if not isinstance(exc, MemorySystemError):
        return None
    call, reason = re.sub(r"[^a-z0-9_]+", "_", exc.call.lower()).strip("_") or "call", exc.reason
    if exc.recurs is not None:  # a backend call of the system's refused outright (passed on, not parsed)
        return Failure(call, "refused" if call == "ingest" and exc.recurs == "bad_request" else exc.recurs, message)
    if _REFUSED.search(reason):
        return Failure(call, "unreachable", message)
    if _TRANSIENT.search(reason):
        return None
    status = _HTTP_4XX.search(reason)
    if status is not None:
        if overflows(reason):
            return Failure(call, "context_overflow", message)
        return Failure(call, "refused" if call == "ingest" else "bad_request", message)
    if call == "open":
        return Failure(call, "cannot_start", message)
    return None


def failed_rows(columns: Sequence[Mapping[str, object]], failure: Failure) -> CellRows:
    """A failed cell's rows: per group of identifying ``columns``, one conversation-level row of the failure."""
    rows = CellRows()
    for base in columns:
        rows.add({**base, "probe_id": "", "category": ""}, {failure.metric: 1.0})
    rows.set_column("degraded", 1)
    return rows
