"""The contract of a recaller: a question asked of one conversation's memory, scored entries out.

A ``Query`` is one ask: the question's text, the conversation it is asked of, the embedder
and the moment on the replay clock.  It also holds what answering it has computed so far
(the question's vectors, each index's scores), so asking the same ``Query`` again for a
deeper ranking reuses that work, and a new ``Query`` pays for everything, as a user's first
ask would.  No index remembers a question between queries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Hashable, NamedTuple, Protocol, Sequence, TypeVar, runtime_checkable

from lyra_lab.backends import Embedder
from lyra_lab.memory import MemoryEntry, MemoryStore

T = TypeVar("T")


class Hit(NamedTuple):
    """One recalled entry, its score and 0-based rank (``via``: the recaller that found it)."""

    entry: MemoryEntry
    score: float
    rank: int
    via: str = ""


@dataclass(frozen=True)
class Query:
    """One question asked of one conversation's memory.

    Attributes:
        text: the question.
        conversation_id: the conversation whose memory is searched.
        embedder: for recallers that embed (None: only those that do not can answer).
        now: the moment it is asked on the replay clock (recency, time spans).
        session_id: the current session, for recallers that treat it apart (``tiered``); None: the
            session of the latest entry.
        evidence: the probe's gold evidence turn ids, given only to a recaller that declares
            ``needs_evidence()`` (a ceiling such as ``oracle``); empty for every other recaller.
    """

    text: str
    conversation_id: str
    embedder: Embedder | None = None
    now: datetime | None = None
    session_id: str | None = None
    evidence: tuple[str, ...] = ()
    _work: dict[Hashable, object] = field(default_factory=dict, init=False, repr=False, compare=False)

    def remember(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` the first time ``key`` is asked of this query, the same value after.

        Recallers keep the query's vector and each index's scores here: a deeper ranking of the
        same query then costs a sort, while every new query is computed from scratch.
        """
        if key not in self._work:
            self._work[key] = compute()
        return self._work[key]  # type: ignore[return-value]


@runtime_checkable
class Recaller(Protocol):
    """Ranks one conversation's memory entries for a question."""

    def recall(self, store: MemoryStore, query: Query, k: int) -> Sequence[Hit]:
        """The best ``k`` entries of ``query.conversation_id`` for ``query``, best first (fewer if memory has fewer)."""
        ...
