"""What every system and session shares: labels, the one error for any failure, closing once.

``BaseSystem`` is the strategy base of registered systems (parameters checked on
construction).  ``BaseSession`` gives a session its context manager, a closed
state, and ``guard``: run one call of the system and turn whatever it raises
(other than lyra-lab's own ``MemorySystemError`` and ``KeyboardInterrupt``) into
one ``MemorySystemError`` naming the system and the call.
"""

from __future__ import annotations

import time
from datetime import datetime
from types import TracebackType
from typing import Callable, Sequence, TypeVar

from lyra_lab.backends import BackendError
from lyra_lab._params import Strategy, strategy_name
from lyra_lab.corpus import Turn
from lyra_lab.systems._types import Declared, IngestReport, MemorySystemError, Needs, SystemHit

T = TypeVar("T")


class BaseSystem(Strategy):
    """Base of registered memory systems: a label from the registered name, no needs by default."""

    __slots__ = ()

    def label(self) -> str:
        """The registered name (``mem0``, ``mcp``); systems with parameters say more."""
        return strategy_name(self)

    def needs(self) -> Needs:
        """Nothing from the cell (no backend, no embedder) unless a system says otherwise."""
        return Needs()

    def traces(self) -> bool:
        """Hits name their source turns unless a system says otherwise."""
        return True

    def declare(self) -> Declared:
        """Where its text goes and what it asks of models (``Declared``): nothing beyond the cell's own by default."""
        return Declared()

    def notice(self) -> str:
        """Nothing for the run's log unless a system says otherwise."""
        return ""


class BaseSession:
    """A session's life cycle: ``with system.open(...) as session:`` closes it whatever happens.

    Subclasses write ``_ingest``, ``_query``, ``_close`` and, when the system can list what it
    holds, ``_contents`` (None by default); the public methods time them, check the session is
    open and wrap failures (``guard``).
    """

    def __init__(self, label: str):
        self.label = label
        self.closed = False

    def __enter__(self) -> "BaseSession":
        """The session itself."""
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        """Close the session; when the block raised, that error is the one that propagates."""
        if exc_type is None:
            self.close()
            return
        try:  # the error in flight is the one to report; closing still stops what the session started
            self.close()
        except MemorySystemError:
            pass

    def guard(self, call: str, fn: Callable[[], T]) -> T:
        """``fn()``, with any failure as one ``MemorySystemError`` naming this system and ``call``."""
        if self.closed:
            raise MemorySystemError(self.label, call, "the session is closed")
        try:
            return fn()
        except (MemorySystemError, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - any failure of the system is its one error
            recurs = exc.recurs if isinstance(exc, BackendError) else None  # decided once, by the backend
            raise MemorySystemError(self.label, call, f"{type(exc).__name__}: {exc}", recurs) from exc

    def ingest(self, turns: Sequence[Turn], *, final: bool = False) -> IngestReport:
        """Store ``turns`` (``_ingest``), timed; ``turns`` and ``seconds`` of the report are set here."""
        turns = list(turns)
        start = time.perf_counter()
        report = self.guard("ingest", lambda: self._ingest(turns, final))
        return IngestReport(turns=len(turns), items=report.items, usage=report.usage,
                            failed_calls=report.failed_calls, bad_outputs=report.bad_outputs,
                            embed_calls=report.embed_calls, seconds=time.perf_counter() - start, notes=report.notes,
                            refused_calls=report.refused_calls)

    def query(self, question: str, k: int, *, now: datetime | None = None) -> list[SystemHit]:
        """At most ``k`` hits for ``question`` (``_query``), best first.

        Raises:
            ValueError: ``k < 1``.
            MemorySystemError: the system failed or the session is closed.
        """
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        hits = self.guard("query", lambda: list(self._query(question, k, now)))
        return hits[:k]

    def contents(self) -> list[SystemHit] | None:
        """Everything the memory holds (``_contents``), or None when the system cannot list it."""
        items = self.guard("contents", self._contents)
        return None if items is None else list(items)

    def close(self) -> None:
        """Close once (``_close``); a second call does nothing."""
        if self.closed:
            return
        self.closed = True
        try:
            self._close()
        except (MemorySystemError, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001
            raise MemorySystemError(self.label, "close", f"{type(exc).__name__}: {exc}") from exc

    # -- what a session writes ------------------------------------------------
    def _ingest(self, turns: list[Turn], final: bool) -> IngestReport:
        raise NotImplementedError

    def _query(self, question: str, k: int, now: datetime | None) -> Sequence[SystemHit]:
        raise NotImplementedError

    def _contents(self) -> Sequence[SystemHit] | None:
        return None

    def _close(self) -> None:
        return None
