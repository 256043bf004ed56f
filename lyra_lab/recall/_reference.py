"""The reference recaller: richer keys, stemmed BM25, normalized fusion, sessions and time, in one grid point.

Every stage is a parameter, and each off-value reduces it to a simpler recaller,
so a grid compares them one at a time:

1. **Keys** (``keys``, ``window``): what each turn is indexed as (``_keys``).
2. **Scores**: cosine (query embedded with ``kind="query"``) and BM25 (``stemmer``,
   ``tokens``) over *all* the conversation's entries, fused (``fusion``: weighted
   ``minmax`` or ``zscore``, or ``rrf``) with ``weight`` on dense and ``1 - weight``
   on BM25 (``weight=1`` is dense only, ``0`` BM25 only, and needs no embedder).
3. **Neighbours** (``neighbours``): each turn adds that share of the better fused
   score of its two same-session neighbours (answers often sit next to the turn
   that matches the question).
4. **Sessions** (``session_weight``, ``sessions``): each session is scored as one
   mean vector and one BM25 document, fused the same way; a turn adds
   ``session_weight`` times its session's normalized score, and with
   ``sessions=S`` only turns of the S best sessions are returned (two-stage).
5. **Time** (``time_weight``, ``time_scale_days``): turns dated inside a span the
   question names ("in May 2023") add ``time_weight``, decaying outside it (``_when``).

The turn scores are normalized over the whole conversation (a few hundred turns),
not over a candidate list, so no candidate cut-off can drop evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from lyra_lab.backends import Embedder
from lyra_lab.memory import MemoryStore
from lyra_lab.recall._base import RECALLERS, BaseRecaller, Scored, require_embedder
from lyra_lab.recall._bm25 import STEMMERS, TOKENS, Tokenizer, bm25_index, query_scores
from lyra_lab.recall._fusion import FUSIONS, fuse, normalize
from lyra_lab.recall._index import dense_index, query_cosines, query_vector, top_k
from lyra_lab.recall._keys import KEYS, KeyedView, keyed_view
from lyra_lab.recall._ranking import Ranking
from lyra_lab.recall._sessions import lexical_session_scores, session_means
from lyra_lab.recall._types import Query
from lyra_lab.recall._when import closeness, named_spans
from lyra_lab._params import param


@RECALLERS.register("reference")
@dataclass(frozen=True)
class Reference(BaseRecaller):
    """Keyed, fused, session- and time-aware recall; see the module docstring for each stage.

    The defaults are the configuration tuned on LoCoMo conversations 1-5 (``examples/reference_recall.toml``):
    dense on plain turn text, BM25 (stemmed) on dated keys with two neighbours each side, min-max fusion
    at 0.5, neighbour share 0.3, session blend 0.2 and speaker boost 0.2.

    Args:
        keys: ``"text"`` or ``"dated"`` (``"[8 May 2023] Caroline: …"``).
        window: same-session neighbours on each side joined into each key (0: none).
        lexical_keys: BM25's own keys (``None``: as ``keys``); re-keying BM25 is free, dense re-embeds.
        lexical_window: BM25's own window (``None``: as ``window``).
        stemmer: BM25 stemming, ``"english"`` (Snowball) or ``"none"`` (as ``bm25``'s).
        tokens: BM25 tokens, ``"words"`` (keeps 1-character ones) or ``"words2"`` (as ``bm25``'s).
        fusion: ``"minmax"``, ``"zscore"`` or ``"rrf"``.
        weight: the dense share in [0, 1].
        rrf_k: RRF's damping constant (``fusion="rrf"`` only).
        neighbours: share of the best neighbour's fused score a turn adds (>= 0).
        session_weight: share of its session's normalized score a turn adds (>= 0).
        sessions: return only turns of this many best sessions (0: all).
        time_weight: boost for turns inside a time span the question names (>= 0).
        time_scale_days: days outside the span over which that boost falls by e.
        speaker_weight: boost for entries with a speaker (a line's ``"Name: "`` prefix) that the
            question names.
    """

    keys: str = param("text", choices=KEYS)
    window: int = param(0, ge=0)
    lexical_keys: str | None = param("dated", choices=KEYS)
    lexical_window: int | None = param(2, ge=0)
    stemmer: str = param("english", choices=STEMMERS)
    tokens: str = param("words", choices=TOKENS)
    fusion: str = param("minmax", choices=FUSIONS)
    weight: float = param(0.5, ge=0, le=1)
    rrf_k: float = param(60, gt=0)
    neighbours: float = param(0.3, ge=0)
    session_weight: float = param(0.2, ge=0)
    sessions: int = param(0, ge=0)
    time_weight: float = param(0.0, ge=0)
    time_scale_days: float = param(14.0, gt=0)
    speaker_weight: float = param(0.2, ge=0)

    def needs_embedder(self) -> bool:
        return self.weight > 0

    def ranking(self, store: MemoryStore, query: Query, k: int) -> Scored:
        """The ``k`` best entries by the staged score (see the module docstring), best first."""
        view = keyed_view(store, query.conversation_id, self.keys, self.window)
        if not len(view):
            return []
        view, scores, keep = query.remember((self, "scores"), lambda: self._scores(store, query))
        rows = np.flatnonzero(keep)
        order = rows[top_k(scores[rows], k)]
        return Ranking([view.entries[i] for i in order.tolist()], scores[order].tolist())

    def _scores(self, store: MemoryStore, query: Query) -> tuple[KeyedView, np.ndarray, np.ndarray]:
        """The keyed view, every position's staged score and which positions may be returned."""
        dense_embedder = require_embedder(self.name, query.embedder) if self.needs_embedder() else None
        conversation_id = query.conversation_id
        view = keyed_view(store, conversation_id, self.keys, self.window)
        lexical_view = keyed_view(store, conversation_id, self.lexical_keys or self.keys,
                                  self.window if self.lexical_window is None else self.lexical_window)
        tokenizer = Tokenizer(self.stemmer, self.tokens)
        n = len(view)
        dense, lexical = np.zeros(n), np.zeros(n)
        vectors = vector = None
        if dense_embedder is not None:
            vector = query_vector(query, dense_embedder)
            dense, vectors = _dense_scores(view, dense_embedder, query,
                                           with_vectors=bool(self.session_weight or self.sessions))
        if self.weight < 1:
            lexical = _lexical_scores(lexical_view, query, tokenizer)
        scores = self._fuse(dense, lexical)
        if self.neighbours:
            scores = scores + self.neighbours * _best_neighbour(scores, view.sessions)
        keep = np.ones(n, dtype=bool)
        if self.session_weight or self.sessions:
            n_sessions = len(view.session_names)
            lexical_s = (lexical_session_scores(lexical_view, query.text, tokenizer) if self.weight < 1
                         else np.zeros(n_sessions))
            dense_s = (_session_means(view, dense_embedder.name, vectors) @ vector
                       if dense_embedder is not None and vectors is not None and vector is not None
                       else np.zeros(n_sessions))
            session_scores = self._fuse(dense_s, lexical_s)
            scores = scores + self.session_weight * normalize(session_scores, "minmax")[view.sessions]
            if self.sessions:
                best = top_k(session_scores, self.sessions)
                keep = np.isin(view.sessions, best)
        if self.time_weight:
            spans = named_spans(query.text)
            if spans:
                dates = [e.start or e.end for e in view.entries]
                scores = scores + self.time_weight * closeness(dates, spans, self.time_scale_days)
        if self.speaker_weight:
            scores = scores + self.speaker_weight * _named_speaker(view, query.text)
        return view, scores, keep

    def _fuse(self, dense: np.ndarray, lexical: np.ndarray) -> np.ndarray:
        return fuse([dense, lexical], [self.weight, 1 - self.weight], self.fusion, self.rrf_k)


def _dense_scores(view: KeyedView, embedder: Embedder, query: Query,
                  with_vectors: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """Cosine of each view position, and (``with_vectors``) the key vectors by position."""
    index = dense_index(view.store, embedder, view.conversation_id)
    rows, scores = query_cosines(index, query, embedder)
    positions = _aligned(view, index, rows, f"dense:{embedder.name}")
    out = np.zeros(len(view))
    out[positions] = scores
    if not with_vectors:
        return out, None
    vectors = np.zeros((len(view), index.dim), dtype=np.float32)
    vectors[positions] = index._matrix[rows]  # the index's own rows: no re-embedding
    return out, vectors


def _session_means(view: KeyedView, embedder_name: str, vectors: np.ndarray) -> np.ndarray:
    """Unit mean key vector of each session, cached per embedder and view version."""
    key = f"recall.session_means:{embedder_name}"
    cached = view.store.cache.get(key)
    if cached is not None and cached[0] == view.version:
        return cached[1]
    means = session_means(vectors, view.sessions, len(view.session_names))
    view.store.cache[key] = (view.version, means)
    return means


def _lexical_scores(view: KeyedView, query: Query, tokenizer: Tokenizer) -> np.ndarray:
    index = bm25_index(view.store, view.conversation_id, tokenizer)
    rows = index.live_rows()
    out = np.zeros(len(view))
    out[_aligned(view, index, rows, f"bm25:{tokenizer}")] = query_scores(index, query)[rows]
    return out


def _aligned(view: KeyedView, index, rows: np.ndarray, name: str) -> np.ndarray:
    """View positions of an index's rows, cached per view and index version."""
    key = (name, view.version, index.version, len(rows))
    cached = view.store.cache.get(f"recall.align:{name}")
    if cached is not None and cached[0] == key:
        return cached[1]
    positions = view.positions([index.entry(r).id for r in rows])
    view.store.cache[f"recall.align:{name}"] = (key, positions)
    return positions


_SPEAKER = re.compile(r"^(?:\[[^\]\n]*\]\s*)?([^:\n\[\]]{1,40}):\s", re.M)


def speakers(text: str) -> frozenset[str]:
    r"""Lower-cased speaker names of an entry: the ``"Name: "`` opening a line, after an optional ``[date]``.

    >>> sorted(speakers("Caroline: hi\n[2023-05-08 13:56] Melanie: yo: ok"))
    ['caroline', 'melanie']
    """
    return frozenset(m.group(1).strip().lower() for m in _SPEAKER.finditer(text))


def _named_speaker(view: KeyedView, query: str) -> np.ndarray:
    """1.0 for entries with a speaker named (as a word) in ``query``, else 0."""
    cached = view.store.cache.get("recall.speakers")
    if cached is None or cached[0] != view.version:
        cached = (view.version, [speakers(e.text) for e in view.entries])
        view.store.cache["recall.speakers"] = cached
    words = set(re.findall(r"\w+", query.lower()))
    return np.array([float(bool(names & words)) for names in cached[1]])


def _best_neighbour(scores: np.ndarray, sessions: np.ndarray) -> np.ndarray:
    """Per position, the higher score of its previous and next position in the same session (0 if none).

    >>> _best_neighbour(np.array([1.0, 3.0, 2.0, 5.0]), np.array([0, 0, 0, 1])).tolist()
    [3.0, 2.0, 3.0, 0.0]
    """
    best = np.zeros(len(scores))
    same_prev = sessions[1:] == sessions[:-1]
    best[1:] = np.where(same_prev, scores[:-1], 0.0)
    best[:-1] = np.maximum(best[:-1], np.where(same_prev, scores[1:], 0.0))
    return best
