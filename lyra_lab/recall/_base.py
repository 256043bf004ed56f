"""What every recaller shares: the registry, argument checks, ranked-hit building and the recall skeleton.

A recaller is a frozen dataclass on ``BaseRecaller`` with one method:
``score(query, entry)`` for a plain per-entry score, or ``ranking(store, query, k)`` for
one that scores the whole memory at once (from an index in ``store.cache``).
``BaseRecaller.recall`` does the rest: checks ``k`` (and the embedder, when
``needs_embedder``), answers ``k=0`` with no hits, and turns the ranking into
at most ``k`` ``Hit``s, ranked from 0, first occurrence of an entry winning.

>>> from dataclasses import dataclass
>>> from lyra_lab.memory import MemoryEntry, MemoryStore
>>> @dataclass(frozen=True)
... class Longest(BaseRecaller):
...     def score(self, query, entry):
...         return len(entry.text)
>>> store = MemoryStore([MemoryEntry(id=t, conversation_id="c", kind="turn", text=t, turn_ids=(t,))
...                      for t in ("hi", "hello", "hey")])
>>> [(h.entry.text, h.score, h.rank, h.via) for h in Longest().recall(store, Query("q", "c"), 2)]
[('hello', 5.0, 0, 'Longest'), ('hey', 3.0, 1, 'Longest')]
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

from lyra_lab._params import Strategy, strategy_name
from lyra_lab._registry import Registry
from lyra_lab.backends import Embedder, TokenCount
from lyra_lab.memory import MemoryEntry, MemoryStore, render_context
from lyra_lab.recall._ranking import Ranking
from lyra_lab.recall._types import Hit, Query, Recaller

RECALLERS: Registry[Recaller] = Registry("recaller")

#: What a ranking yields: memory entries with their scores, best first.
Scored = Iterable[tuple[MemoryEntry, float]]


def check_k(k: int) -> None:
    """``k`` must be a non-negative int."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k must be a non-negative int, got {k!r}")


def require_embedder(recaller: str, embedder: Embedder | None) -> Embedder:
    """``embedder``, or a ``ValueError`` saying that ``recaller`` needs one."""
    if embedder is None:
        raise ValueError(
            f"recaller {recaller!r} needs an embedder (pass Query(..., embedder=...), e.g. "
            "lyra_lab.backends.HashingEmbedder() in a unit test or make_embedder('e5'))"
        )
    return embedder


def ranked(scored: Scored, k: int, via: str) -> list[Hit]:
    """Hits from ``(entry, score)`` pairs already sorted best first; first occurrence of an id wins.

    A ``Ranking`` (distinct entries) gives its first ``k`` as they are.
    """
    if k <= 0:
        return []
    if isinstance(scored, Ranking):
        return [Hit(entry, score, rank, via)
                for rank, (entry, score) in enumerate(zip(scored.entries[:k], scored.scores[:k]))]
    hits: list[Hit] = []
    seen: set[str] = set()
    for entry, score in scored:
        if entry.id in seen:
            continue
        seen.add(entry.id)
        hits.append(Hit(entry, float(score), len(hits), via))
        if len(hits) >= k:
            break
    return hits


def render(hits: Sequence[Hit], token_budget: int, count: TokenCount | Callable[[str], int]) -> str:
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
        return strategy_name(self)

    @property
    def via(self) -> str:
        """What the hits' ``via`` says: the registered name unless a recaller says more."""
        return self.name

    def needs_embedder(self) -> bool:
        """Whether ``recall`` refuses to run without an embedder (checked before anything else)."""
        return False

    def needs_evidence(self) -> bool:
        """Whether it must be told the probe's gold evidence (``Query.evidence``): a ceiling, not a strategy."""
        return False

    def whole_memory(self) -> bool:
        """Whether it is asked for every entry instead of ``k`` (a grid cuts it to the answerer's room, ``AnswerRoom``)."""
        return False

    def recall(self, store: MemoryStore, query: Query, k: int) -> list[Hit]:
        """The top ``k`` entries of ``query.conversation_id`` for ``query``, best first."""
        check_k(k)
        if self.needs_embedder():
            require_embedder(self.name, query.embedder)
        return ranked(self.ranking(store, query, k), k, via=self.via) if k else []

    def ranking(self, store: MemoryStore, query: Query, k: int) -> Scored:
        """``(entry, score)`` pairs best first (at least ``k`` if the memory has them; more are cut).

        The default scores each of the conversation's entries with ``score``; ties keep store order.
        """
        entries = store.entries(query.conversation_id)
        scores = [float(self.score(query.text, entry)) for entry in entries]
        order = sorted(range(len(entries)), key=lambda i: -scores[i])
        return ((entries[i], scores[i]) for i in order)

    def score(self, query: str, entry: MemoryEntry) -> float:
        """How well ``entry`` answers ``query`` (higher is better)."""
        raise NotImplementedError(f"{type(self).__name__} must define score(query, entry) or ranking(...)")
