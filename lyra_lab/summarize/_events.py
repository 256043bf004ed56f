"""Progress events: emitted safely, consumed by a progress bar, a log, or a user's callback.

A summarizer reports its stages — ``load``, ``strategy`` (with the decision),
``chunk_done`` (i of n, ok, duration), ``merge_started``, ``merge_done``,
``complete`` — to an optional callback, always from the thread that called
``summarize`` (so callbacks need no locking).  A callback that raises is
logged and ignored: a broken progress sink never breaks the work.
"""

from __future__ import annotations

import logging
from typing import Any, get_args

from lyra_lab.summarize._types import ProgressCallback, ProgressEvent, Stage

log = logging.getLogger("lyra_lab.summarize")

STAGES: tuple[Stage, ...] = get_args(Stage)


def emit(callback: ProgressCallback | None, stage: Stage, **fields: Any) -> ProgressEvent:
    """Build the event and hand it to ``callback`` (if any), swallowing and logging its errors."""
    detail = fields.pop("detail", None) or {}
    event = ProgressEvent(stage, detail=detail, **fields)
    if callback is not None:
        try:
            callback(event)
        except Exception:  # noqa: BLE001 - a progress sink must never break the work
            log.warning("progress callback %r raised on %r event; ignored", callback, stage, exc_info=True)
    return event


def log_events(logger: logging.Logger = log, level: int = logging.INFO) -> ProgressCallback:
    """A callback that writes each event as one log line."""

    def callback(event: ProgressEvent) -> None:
        where = f" {event.i}/{event.n}" if event.i is not None else ""
        took = f" in {event.duration_s:.2f}s" if event.duration_s is not None else ""
        ok = "" if event.ok is None else (" ok" if event.ok else " FAILED")
        logger.log(level, "summarize %s%s%s%s %s", event.stage, where, ok, took, dict(event.detail))

    return callback


class ProgressBar:
    """A tqdm bar over chunk calls (hidden when not on a terminal); use as the callback.

    >>> bar = ProgressBar(disable=True)
    >>> bar(ProgressEvent("load", n=2)); bar(ProgressEvent("complete"))
    """

    def __init__(self, desc: str = "summarize", disable: bool | None = None):
        self.desc = desc
        self.disable = disable
        self._bar = None

    def __call__(self, event: ProgressEvent) -> None:
        from tqdm.auto import tqdm

        if event.stage == "load":
            self._bar = tqdm(total=(event.n or 0), desc=self.desc, unit="chunk", disable=self.disable)
        elif self._bar is None:
            return
        elif event.stage == "chunk_done":
            self._bar.update(1)
        elif event.stage == "merge_started":
            self._bar.set_postfix_str("merging")
        elif event.stage == "complete":
            self._bar.close()
            self._bar = None
