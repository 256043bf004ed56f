"""Tiered recall: condensed memory of other sessions, sharp old turns, then the current session."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice

import numpy as np

from lyra_lab.memory import EntryKind, MemoryEntry, MemoryStore
from lyra_lab.recall._base import RECALLERS, Scored
from lyra_lab.recall._dense import CosineRecaller
from lyra_lab.recall._index import DenseIndex
from lyra_lab.recall._types import Query
from lyra_lab._params import param

COARSE_KINDS = tuple(k.value for k in (EntryKind.GIST, EntryKind.DIGEST, EntryKind.SUMMARY, EntryKind.FACT))


@RECALLERS.register("tiered")
@dataclass(frozen=True)
class Tiered(CosineRecaller):
    """Three tiers, concatenated in this priority order and cut at ``k``.

    1. ``gists``: the most similar condensed entries (``coarse_kinds``) that
       cover some session other than the current one;
    2. ``sharp``: the most similar raw turns from any session, excluding tier 3;
    3. ``recent``: the current session's newest raw turns, newest first.

    The current session is the one passed as ``session_id=`` or else the
    session of the latest-ending entry.  Scores encode the tiers (tier 1 in
    [2, 3], tier 2 in [1, 2], tier 3 in [0, 1)) so hits stay sorted by score;
    within the dense tiers the part after the tier offset is ``(1 + cos) / 2``.
    """

    gists: int = param(3, ge=0, doc="how many condensed entries of other sessions come first (tier 1).")
    sharp: int = param(5, ge=0, doc="how many of the most similar raw turns come next (tier 2).")
    recent: int = param(5, ge=0, doc="how many of the current session's newest turns come last (tier 3).")
    coarse_kinds: tuple[str, ...] = param(
        COARSE_KINDS, check=lambda kinds: bool(kinds) and EntryKind.TURN not in kinds,
        allowed="a non-empty list of memory entry kinds without 'turn'",
        doc="the entry kinds tier 1 draws from (condensed memory: gists, digests, summaries, facts).")

    def ranking(self, store: MemoryStore, query: Query, k: int) -> Scored:
        """The three tiers in order (the current session: ``query.session_id``, else the latest entry's)."""
        index, rows, cosine = self.cosines(store, query)
        if not len(rows):
            return []
        entries = [index.entry(r) for r in rows]
        current = query.session_id if query.session_id is not None else _latest_session(index, rows, entries)

        recent_pos = _recent_turns(index, rows, entries, current, self.recent)
        recent_set = set(recent_pos.tolist())
        by_similarity = np.argsort(-cosine, kind="stable")
        # Lazy scans in similarity order: they stop as soon as their tier is full.
        coarse = list(islice((i for i in by_similarity
                              if _is_other_coarse(entries[i], current, self.coarse_kinds)), self.gists))
        sharp = list(islice((i for i in by_similarity
                             if entries[i].kind == EntryKind.TURN and i not in recent_set), self.sharp))
        sim = (1.0 + cosine) / 2.0
        n_recent = len(recent_pos)
        scored = (
            [(entries[i], 2.0 + sim[i]) for i in coarse]
            + [(entries[i], 1.0 + sim[i]) for i in sharp]
            + [(entries[i], 1.0 - (j + 1) / (n_recent + 1)) for j, i in enumerate(recent_pos)]
        )
        return scored


def _is_other_coarse(entry: MemoryEntry, current: str | None, kinds: tuple[str, ...]) -> bool:
    return entry.kind in kinds and (not entry.session_ids or set(entry.session_ids) != {current})


def _order_key(index: DenseIndex, rows: np.ndarray) -> np.ndarray:
    ends = index.ends(rows)
    return np.where(np.isnan(ends), -np.inf, ends)


def _latest_session(index: DenseIndex, rows: np.ndarray, entries: list[MemoryEntry]) -> str | None:
    ends = _order_key(index, rows)
    # lexsort's last key is primary: latest end, then latest row (newest insert).
    latest = entries[int(np.lexsort((rows, ends))[-1])]
    return latest.session_ids[-1] if latest.session_ids else None


def _recent_turns(
    index: DenseIndex, rows: np.ndarray, entries: list[MemoryEntry], session: str | None, n: int
) -> np.ndarray:
    mine = np.array([e.kind == EntryKind.TURN and session in e.session_ids for e in entries], dtype=bool)
    positions = np.flatnonzero(mine)
    if n == 0 or len(positions) == 0:
        return np.zeros(0, dtype=np.int64)
    ends = _order_key(index, rows[positions])
    newest_first = np.lexsort((rows[positions], ends))[::-1]
    return positions[newest_first[:n]]
