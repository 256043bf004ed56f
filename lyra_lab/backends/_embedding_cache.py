"""Embed a corpus once: an SQLite cache of vectors and an Embedder wrapper that uses it.

Rows are keyed by (embedder identity, sha256 of the text, kind) and hold the
float32 bytes, so a cached vector is bit-identical to the one first computed.
The identity includes what determines the vectors (model, dim, package version
or base URL), so a different embedder never reads another one's rows.

Thread safety: one connection opened with ``check_same_thread=False`` and a
lock around every use of it (one writer at a time). Processes (parallel
cells, Ray workers) each open their own: WAL, a long busy timeout and short
transactions retried while the file is busy (``_sqlite``).
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from lyra_lab.backends._embedders import check_texts
from lyra_lab._run_records import EMBEDDING_CACHE
from lyra_lab.backends._sqlite import check_version, connect, retry_busy, write
from lyra_lab.backends._types import Embedder

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    embedder TEXT NOT NULL,
    kind TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (embedder, kind, sha256)
) WITHOUT ROWID
"""
_CHUNK = 500  # keys per SELECT, well under SQLite's bound-variable limit


def embedder_identity(embedder: Embedder) -> str:
    """``embedder.identity()`` as canonical JSON: the key of its rows."""
    return json.dumps(embedder.identity(), sort_keys=True, separators=(",", ":"))


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Vectors on disk (or in memory with ``":memory:"``), keyed by (identity, sha256, kind)."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = connect(self.path, _SCHEMA)
        check_version(self._db, EMBEDDING_CACHE, self.path)

    def get_many(self, identity: str, kind: str, shas: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``shas`` (missing ones are absent from the result)."""
        keys = list(dict.fromkeys(shas))
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(keys), _CHUNK):
                part = keys[start : start + _CHUNK]
                marks = ",".join("?" * len(part))
                sql = ("SELECT sha256, dim, vector FROM embeddings "
                       f"WHERE embedder = ? AND kind = ? AND sha256 IN ({marks})")
                args = (identity, kind, *part)
                rows = retry_busy(lambda: self._db.execute(sql, args).fetchall())  # noqa: B023 (called at once)
                for sha, dim, blob in rows:
                    vector = np.frombuffer(blob, dtype=np.float32)
                    if vector.shape != (dim,):
                        raise ValueError(f"embedding cache {self.path}: corrupt row for {sha[:12]} (size {vector.size}, dim {dim})")
                    found[sha] = vector
        return found

    def put_many(self, identity: str, kind: str, items: Iterable[tuple[str, np.ndarray]]) -> None:
        """Store ``(sha256, vector)`` pairs in one transaction (existing rows are replaced)."""
        rows = []
        for sha, vector in items:
            vector = np.ascontiguousarray(vector, dtype=np.float32)
            rows.append((identity, kind, sha, int(vector.shape[0]), vector.tobytes()))
        with self._lock:
            write(self._db, "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?)", rows)

    def __len__(self) -> int:
        with self._lock:
            return int(retry_busy(lambda: self._db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]))

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> "EmbeddingCache":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EmbeddingCache({self.path!r})"


class CachedEmbedder:
    """An Embedder that asks ``embedder`` only for texts the cache has not seen.

    ``misses`` counts texts sent to the wrapped embedder (each distinct text once
    per call); ``hits`` counts texts served from the cache, including repeats of
    a text within one call.
    """

    def __init__(self, embedder: Embedder, cache: EmbeddingCache):
        if not isinstance(embedder, Embedder):
            raise TypeError(f"{embedder!r} is not an Embedder: it needs name, dim, identity() and embed()")
        self.embedder = embedder
        self.cache = cache
        self.name = embedder.name
        self.identity_key = embedder_identity(embedder)
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        return self.embedder.dim

    def identity(self) -> dict[str, Any]:
        return dict(json.loads(self.identity_key))

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        texts = check_texts(texts, kind)
        shas = [text_sha256(t) for t in texts]
        known = self.cache.get_many(self.identity_key, kind, shas)
        todo = {sha: text for sha, text in zip(shas, texts) if sha not in known}
        if todo:
            fresh = np.asarray(self.embedder.embed(list(todo.values()), kind=kind), dtype=np.float32)
            if fresh.shape != (len(todo), self.dim):
                raise ValueError(f"embedder {self.name} returned shape {fresh.shape} for {len(todo)} texts; "
                                 f"expected ({len(todo)}, {self.dim})")
            new = dict(zip(todo, fresh))
            self.cache.put_many(self.identity_key, kind, new.items())
            known.update(new)
        with self._lock:
            self.misses += len(todo)
            self.hits += len(texts) - len(todo)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, sha in enumerate(shas):
            out[row] = known[sha]
        return out

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.embedder!r}, {self.cache!r})"
