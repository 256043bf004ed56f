"""Index keys: the text a recaller indexes for an entry, which need not be the text it returns.

LongMemEval (Wu et al. 2024) finds that what goes into the index matters as much
as the retriever.  A ``KeyedView`` is a derived ``MemoryStore`` holding, for each
of one conversation's entries, a copy with the same id whose text is its *key*:

- ``keys="text"``: the entry's own text (``"Caroline: I went to a support group"``);
- ``keys="dated"``: the text after its date, ``"[8 May 2023] Caroline: I went …"``,
  so a question naming a month or year can match it.

``window=w`` appends the keys of up to ``w`` neighbours on each side *in the same
session* (one per line, in order), so an answer spread over a question and its
reply is one key.  The view lives in ``store.cache`` and follows the store: only
entries whose key changed are re-added to the view, so the dense and BM25 indexes
over it (``dense_index``/``bm25_index`` on ``view.store``) stay incremental.
Hits map back to the original entries by id.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from lyra_lab.memory import MemoryEntry, MemoryStore

KEYS = ("text", "dated")


def dated_text(entry: MemoryEntry) -> str:
    """``"[8 May 2023] " + text`` from the entry's start (its end if no start); undated entries as is."""
    when = entry.start or entry.end
    if when is None:
        return entry.text
    return f"[{when.day} {when:%B} {when.year}] {entry.text}"


def session_of(entry: MemoryEntry) -> str:
    """The entry's first session id, or ``""`` when it has none."""
    return entry.session_ids[0] if entry.session_ids else ""


def key_texts(entries: list[MemoryEntry], keys: str = "text", window: int = 0) -> list[str]:
    r"""The index key of each entry (in order), windows taken among same-session neighbours.

    >>> from lyra_lab.memory import MemoryEntry
    >>> es = [MemoryEntry(id=i, conversation_id="c", kind="turn", text=t, turn_ids=(), session_ids=(s,))
    ...       for i, t, s in [("a", "A: hi", "s1"), ("b", "B: yo", "s1"), ("c", "A: bye", "s2")]]
    >>> key_texts(es, window=1)
    ['A: hi\nB: yo', 'A: hi\nB: yo', 'A: bye']
    """
    if keys not in KEYS:
        raise ValueError(f"keys must be one of {KEYS}, got {keys!r}")
    own = [dated_text(e) if keys == "dated" else e.text for e in entries]
    if window == 0:
        return own
    sessions = [session_of(e) for e in entries]
    out = []
    for i in range(len(entries)):
        lo, hi = i, i
        while lo > 0 and i - lo < window and sessions[lo - 1] == sessions[i]:
            lo -= 1
        while hi < len(entries) - 1 and hi - i < window and sessions[hi + 1] == sessions[i]:
            hi += 1
        out.append("\n".join(own[lo:hi + 1]))
    return out


class KeyedView:
    """One conversation's entries re-keyed in a derived store; see the module docstring.

    Attributes:
        store: the derived store (same ids, key texts) that indexes are built over.
        entries: the original entries, in store order; ``position`` maps an id to its place.
        sessions: each position's session number (0..n_sessions-1, in first-seen order).
    """

    def __init__(self, conversation_id: str, keys: str, window: int):
        self.conversation_id = conversation_id
        self.keys = keys
        self.window = window
        self.version = -1
        self.store = MemoryStore()
        self.entries: list[MemoryEntry] = []
        self.position: dict[str, int] = {}
        self.sessions = np.zeros(0, dtype=np.int64)
        self.session_names: list[str] = []

    def __len__(self) -> int:
        return len(self.entries)

    def sync(self, store: MemoryStore) -> None:
        if store.version == self.version:
            return
        self.version = store.version
        entries = store.entries(self.conversation_id)
        wanted = {e.id: text for e, text in zip(entries, key_texts(entries, self.keys, self.window))}
        held = {e.id: e.text for e in self.store}
        stale = [i for i, text in held.items() if wanted.get(i) != text]
        fresh = [dataclasses.replace(e, text=wanted[e.id]) for e in entries
                 if held.get(e.id) != wanted[e.id]]
        if stale or fresh:
            self.store.apply(add=fresh, remove=stale)
        self.entries = entries
        self.position = {e.id: i for i, e in enumerate(entries)}
        names = [session_of(e) for e in entries]
        self.session_names = list(dict.fromkeys(names))
        number = {name: n for n, name in enumerate(self.session_names)}
        self.sessions = np.array([number[name] for name in names], dtype=np.int64)

    def positions(self, ids: list[str]) -> np.ndarray:
        """The view positions of entry ids (as returned by an index over ``self.store``)."""
        return np.fromiter((self.position[i] for i in ids), dtype=np.int64, count=len(ids))


def keyed_view(store: MemoryStore, conversation_id: str, keys: str = "text", window: int = 0) -> KeyedView:
    """The conversation's keyed view from ``store.cache``, synced to the store."""
    cache_key = f"recall.keys:{keys}:{window}:{conversation_id}"
    view = store.cache.get(cache_key)
    if not isinstance(view, KeyedView):
        view = KeyedView(conversation_id, keys, window)
        store.cache[cache_key] = view
    view.sync(store)
    return view
