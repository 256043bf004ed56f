"""Lexical recall with BM25, its postings cached per conversation in ``store.cache``.

BM25's IDF and average document length are corpus-wide, so a precomputed score
matrix (what ``bm25s`` builds) is stale after any edit and must be rebuilt:
1.8 s at 100k entries for one added note.  This index instead keeps *raw*
postings (term → rows and term frequencies) that an add appends to and a
removal only marks dead, and computes IDF and length normalization at query
time over the query's postings only.  The arithmetic copies ``bm25s``'s
defaults step by step (``k1=1.5``, ``b=0.75``, Lucene IDF and term-frequency
component, float32 scores accumulated in query-token order), so the scores are
the ones ``bm25s`` gives on the same live corpus (tests check this).

Between two changes of the index, each query term's contribution (its rows and
their float32 ``idf * tfc``) is computed once and kept, since IDF and the
average length only change with the index; a query then adds the kept arrays
in its token order.  A query's scores are kept in the ``Query`` that asked
(``query_scores``), never in the index.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall._base import RECALLERS, BaseRecaller, Scored
from lyra_lab.recall._index import ChangeLogIndex, best_first, grown
from lyra_lab.recall._ranking import Ranking

if TYPE_CHECKING:
    import bm25s.tokenization
    import Stemmer
from lyra_lab.recall._types import Query
from lyra_lab._params import Strategy, param

STOPWORDS = "en"
K1, B = 1.5, 0.75  # bm25s.BM25() defaults, with method="lucene"
_MIN_CAPACITY = 64
STEMMERS = ("none", "english")
TOKENS = ("words2", "words")  # bm25s's default (2+ word characters), or every word incl. "5" and "I"
_PATTERNS = {"words2": r"(?u)\b\w\w+\b", "words": r"(?u)\b\w+\b"}


@dataclass(frozen=True)
class Tokenizer(Strategy):
    """How text becomes BM25 terms: bm25s's tokenizer with English stopwords, plus options.

    Args:
        stemmer: ``"none"`` (today's default) or ``"english"`` (Snowball, from PyStemmer).
        tokens: ``"words2"`` (bm25s's default, drops 1-character tokens such as ``"5"``)
            or ``"words"`` (keeps them, so single-digit numbers match).
    """

    stemmer: str = param("none", choices=STEMMERS)
    tokens: str = param("words2", choices=TOKENS)

    @property
    def is_default(self) -> bool:
        return self == Tokenizer()

    def __call__(self, texts: list[str], return_ids: bool) -> bm25s.tokenization.Tokenized:
        """``bm25s.tokenize`` with this tokenizer's pattern, stopwords and stemmer (``return_ids``: as bm25s)."""
        import bm25s

        return bm25s.tokenize(texts, stopwords=STOPWORDS, return_ids=return_ids, show_progress=False,
                              token_pattern=_PATTERNS[self.tokens], stemmer=_stemmer(self.stemmer))

    def query(self, text: str) -> list[str]:
        """``self([text], return_ids=False)[0]``: the same steps as ``bm25s.tokenize``.

        Lower-case, split, drop stopwords, stem each token; without its per-call vocabulary and
        progress bars.
        """
        tokens = [t for t in _split(self.tokens)(text.lower()) if t not in _stopwords()]
        stemmer = _stemmer(self.stemmer)
        return stemmer.stemWords(tokens) if stemmer is not None and tokens else tokens


@functools.lru_cache(maxsize=None)
def _split(tokens: str) -> Callable[[str], list[str]]:
    return re.compile(_PATTERNS[tokens]).findall


@functools.lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    from bm25s.tokenization import _infer_stopwords

    return frozenset(_infer_stopwords(STOPWORDS))


@functools.lru_cache(maxsize=None)
def _stemmer(name: str) -> Stemmer.Stemmer | None:
    if name == "none":
        return None
    try:
        import Stemmer
    except ImportError:  # pragma: no cover - PyStemmer is a dependency
        raise ImportError("BM25 stemming needs PyStemmer (pip install PyStemmer)") from None
    return Stemmer.Stemmer(name)


_NO_ROWS, _NO_TFS = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)


class _Postings:
    """One term's rows (ascending) and term frequencies, in arrays grown by doubling."""

    __slots__ = ("rows", "size", "tfs")

    def __init__(self) -> None:
        self.rows = _NO_ROWS  # capacity 0: the first extend allocates exactly what it needs
        self.tfs = _NO_TFS
        self.size = 0

    def extend(self, rows: np.ndarray, tfs: np.ndarray) -> None:
        need = self.size + len(rows)
        if need > len(self.rows):
            capacity = max(need, 2 * len(self.rows))
            self.rows = grown(self.rows, capacity, 0)
            self.tfs = grown(self.tfs, capacity, 0.0)
        self.rows[self.size:need] = rows
        self.tfs[self.size:need] = tfs
        self.size = need


class Bm25Index(ChangeLogIndex):
    """BM25 postings of one conversation's entries, synced incrementally with a store.

    Attributes:
        tokenized: how many texts this index has tokenized so far (for tests and cost logs).
    """

    def __init__(self, conversation_id: str, tokenizer: Tokenizer | None = None):
        super().__init__(conversation_id)
        self.tokenizer = tokenizer or Tokenizer()
        self.tokenized = 0
        self._vocab: dict[str, int] = {}
        self._postings: list[_Postings] = []
        self._lengths = np.zeros(_MIN_CAPACITY, dtype=np.float64)  # tokens after stopwords, per row
        self._alive = np.zeros(_MIN_CAPACITY, dtype=bool)
        self._total_length = 0  # of live rows
        self._terms: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # term -> (rows, float32 scores), until a change

    def _changed(self) -> None:
        self._terms = {}

    # -- syncing -------------------------------------------------------------
    def _add(self, fresh: list[MemoryEntry], embedder: None = None) -> None:
        self._changed()
        self._append(fresh)
        self.tokenized += len(fresh)

    def _kill(self, entry_id: str) -> None:
        row = self._unplace(entry_id)
        if row is not None:
            self._changed()
            self._alive[row] = False
            self._total_length -= int(self._lengths[row])

    def _append(self, entries: Sequence[MemoryEntry]) -> None:
        tokens = self.tokenizer([e.text for e in entries], return_ids=True)
        local_to_global = np.zeros(len(tokens.vocab), dtype=np.int64)
        for token, local in tokens.vocab.items():
            local_to_global[local] = self._vocab.setdefault(token, len(self._vocab))
        self._postings.extend(_Postings() for _ in range(len(self._vocab) - len(self._postings)))

        start = len(self._entries)
        need = start + len(entries)
        if need > len(self._alive):
            capacity = max(need, 2 * len(self._alive))
            self._lengths = np.concatenate([self._lengths, np.zeros(capacity - len(self._lengths))])
            self._alive = np.concatenate([self._alive, np.zeros(capacity - len(self._alive), dtype=bool)])
        lengths = np.fromiter((len(ids) for ids in tokens.ids), dtype=np.int64, count=len(entries))
        self._lengths[start:need] = lengths
        self._alive[start:need] = True
        self._total_length += int(lengths.sum())
        self._place(entries)

        if not lengths.sum():
            return
        terms = local_to_global[np.fromiter((t for ids in tokens.ids for t in ids), dtype=np.int64)]
        rows = np.repeat(np.arange(start, need, dtype=np.int64), lengths)
        # One (term, row) pair per distinct occurrence, sorted by term then row: postings stay ascending.
        pairs, tfs = np.unique(terms * need + rows, return_counts=True)
        pair_terms, pair_rows = np.divmod(pairs, need)
        bounds = np.flatnonzero(np.diff(pair_terms)) + 1
        for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(pairs)]):
            self._postings[pair_terms[lo]].extend(pair_rows[lo:hi], tfs[lo:hi])

    def _maybe_compact(self) -> None:
        if not self._compact_due(_MIN_CAPACITY):
            return
        self._changed()
        keep = self._alive[: len(self._entries)]
        new_row = np.cumsum(keep) - 1
        for postings in self._postings:
            rows, tfs = postings.rows[: postings.size], postings.tfs[: postings.size]
            live = keep[rows]
            postings.rows, postings.tfs = new_row[rows[live]], tfs[live]
            postings.size = len(postings.rows)
        kept = np.flatnonzero(keep)
        n = len(kept)
        self._lengths = np.concatenate([self._lengths[kept], np.zeros(max(_MIN_CAPACITY, n))])
        self._alive = np.zeros(len(self._lengths), dtype=bool)
        self._alive[:n] = True
        self._entries = [self._entries[i] for i in kept]
        self._row = {e.id: i for i, e in enumerate(self._entries)}  # type: ignore[union-attr]

    # -- querying ------------------------------------------------------------
    def scores(self, query: str) -> np.ndarray:
        """BM25 score (float32) of every row for ``query``; dead rows and non-matching rows score 0."""
        scores = np.zeros(len(self._entries), dtype=np.float32)
        if not self._row:
            return scores
        for token in self.tokenizer.query(query):
            term = self._vocab.get(token)
            if term is None:
                continue
            if term not in self._terms:
                self._terms[term] = self._term_scores(term)
            rows, term_scores = self._terms[term]
            if len(rows):
                scores[rows] += term_scores
        return scores

    def _term_scores(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        """The live rows holding ``term`` and the term's float32 share of their scores."""
        n_docs, used = len(self._row), len(self._entries)
        postings = self._postings[term]
        rows, tfs = postings.rows[: postings.size], postings.tfs[: postings.size]
        if n_docs != used:
            live = self._alive[rows]
            rows, tfs = rows[live], tfs[live]
        df = len(rows)
        # bm25s: idf in float32 (Lucene), tfc in float64, their product stored as float32.
        idf = float(np.float32(math.log(1 + (n_docs - df + 0.5) / (df + 0.5))))
        tfc = tfs / (K1 * ((1 - B) + B * self._lengths[rows] / (self._total_length / n_docs)) + tfs)
        return rows, (idf * tfc).astype(np.float32)

    def top(self, scores: np.ndarray, k: int) -> Ranking:
        """The ``k`` best rows by ``scores`` that share a term with the query, best first.

        ``scores`` are this index's, for a query; ties go to the older row.
        """
        order = _positive_top(scores, k)[:k]
        return self._ranking(order, scores[order])

    def entry(self, row: int) -> MemoryEntry:
        entry = self._entries[int(row)]
        if entry is None:
            raise KeyError(f"row {row} of the BM25 index is dead")
        return entry

    def live_rows(self) -> np.ndarray:
        """Rows of live entries, in store order."""
        return np.flatnonzero(self._alive[: len(self._entries)])


def _positive_top(scores: np.ndarray, k: int) -> np.ndarray:
    """Rows of (at least) the ``k`` best positive scores, best first.

    With Lucene IDF (> 0) a shared term always scores > 0.
    """
    matched = np.flatnonzero(scores > 0)
    return matched[best_first(scores[matched], k)]


def query_scores(index: Bm25Index, query: Query) -> np.ndarray:
    """``index.scores`` of the query's text, computed once per query and index."""
    return query.remember(("bm25", id(index), index.version), lambda: index.scores(query.text))


def bm25_index(store: MemoryStore, conversation_id: str, tokenizer: Tokenizer | None = None) -> Bm25Index:
    """The conversation's BM25 index from ``store.cache``, synced to the store (adds tokenize only themselves)."""
    tokenizer = tokenizer or Tokenizer()
    key = f"recall.bm25:{conversation_id}"
    if not tokenizer.is_default:
        key += f":{tokenizer.stemmer}:{tokenizer.tokens}"
    index = store.cache.get(key)
    if not isinstance(index, Bm25Index):
        index = Bm25Index(conversation_id, tokenizer)
        store.cache[key] = index
    index.sync(store)
    return index


@RECALLERS.register("bm25")
@dataclass(frozen=True)
class Bm25(BaseRecaller):
    """Top-k entries by BM25 (bm25s tokenizer, English stopwords; bm25s's default scoring).

    Entries sharing no term with the query score 0 and are not returned, so a
    query of only stopwords or unknown words recalls nothing.

    Args:
        stemmer: ``"none"`` (default) or ``"english"`` (Snowball stemming, PyStemmer).
        tokens: ``"words2"`` (default: bm25s's 2+ character words) or ``"words"`` (also 1-character
            tokens, so ``"5"`` matches).
    """

    stemmer: str = param("none", choices=STEMMERS)
    tokens: str = param("words2", choices=TOKENS)

    def ranking(self, store: MemoryStore, query: Query, k: int) -> Scored:
        """The ``k`` best entries sharing a term with the query, best first (ties: older entry first)."""
        index = bm25_index(store, query.conversation_id, Tokenizer(self.stemmer, self.tokens))
        return index.top(query_scores(index, query), k)
