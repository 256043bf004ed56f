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
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from lyra_lab.backends._embedders import check_texts
from lyra_lab.backends._progress import track
from lyra_lab._run_records import EMBEDDING_CACHE
from lyra_lab._served import stable
from lyra_lab.backends._sqlite import check_version, connect, retry_busy, write
from lyra_lab.backends._types import Embedder
from lyra_lab.backends._wrap import EmbedderWrapper

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
    """``embedder.identity()`` as canonical JSON: the key of its rows.

    A server this process started is named by what it serves, not its port (``lyra_lab._served``).
    """
    return json.dumps(stable(dict(embedder.identity())), sort_keys=True, separators=(",", ":"))


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

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EmbeddingCache({self.path!r})"


@dataclass(frozen=True)
class EmbeddingCacheStats:
    """What a ``CachedEmbedder`` served so far.

    Attributes:
        embedder: the wrapped embedder's name.
        hits: texts served from the cache (repeats of a text within one call included).
        misses: texts sent to the wrapped embedder (each distinct text once per call).
        embedded_chars: characters of those texts.
        embed_s: seconds spent in the wrapped embedder.
    """

    embedder: str
    hits: int = 0
    misses: int = 0
    embedded_chars: int = 0
    embed_s: float = 0.0

    def fields(self) -> dict[str, Any]:
        return asdict(self)


class CachedEmbedder(EmbedderWrapper):
    """An Embedder that asks ``embedder`` (its ``inner``) only for texts the cache has not seen.

    Misses are embedded shortest first (a batch holds texts of like length: little padding for
    a local engine) in batches of at most ``write_every`` texts (and about
    ``write_chars`` characters), and each batch's vectors are written to the
    cache as soon as it finishes: a crash or Ctrl-C in the middle of a long
    corpus loses at most the batch under way. Progress (texts done, rate, ETA)
    goes to the sink of ``report_progress``, if one is set.

    ``stats()`` says how many texts were hits and misses (``hits`` and
    ``misses`` are the same counts as attributes).
    """

    def __init__(self, embedder: Embedder, cache: EmbeddingCache, *, write_every: int = 64,
                 write_chars: int = 64_000):
        if not isinstance(embedder, Embedder):
            raise TypeError(f"{embedder!r} is not an Embedder: it needs name, dim, identity() and embed()")
        if write_every < 1 or write_chars < 1:
            raise ValueError(f"write_every and write_chars must be >= 1, got {write_every}, {write_chars}")
        super().__init__(embedder)
        self.cache = cache
        self._identity = dict(embedder.identity())
        self.identity_key = embedder_identity(embedder)
        self.write_every, self.write_chars = write_every, write_chars
        self._stats = EmbeddingCacheStats(embedder.name)
        self._lock = threading.Lock()

    @property
    def hits(self) -> int:
        return self._stats.hits

    @property
    def misses(self) -> int:
        return self._stats.misses

    def stats(self) -> EmbeddingCacheStats:
        """Hits, misses and embedding time so far (a snapshot)."""
        with self._lock:
            return self._stats

    def identity(self) -> dict[str, Any]:
        return dict(self._identity)  # as when built, without asking ``inner`` again

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        texts = check_texts(texts, kind)
        shas = [text_sha256(t) for t in texts]
        known = self.cache.get_many(self.identity_key, kind, shas)
        todo = {sha: text for sha, text in zip(shas, texts) if sha not in known}
        self._count(hits=len(texts) - len(todo))
        if todo:
            from tqdm.auto import tqdm

            # a bar on a terminal when the misses take more than one batch (the wrapped embedder's own bar
            # sees one batch at a time, too few to show)
            show = None if len(todo) > self.write_every else True
            with track(f"embed {kind}s: {self.name}", len(todo)) as progress, \
                    tqdm(total=len(todo), desc=f"embed {kind}s", unit="text", leave=False, disable=show) as bar:
                # shortest first: a batch holds texts of like length, so a local engine pads little
                # (a pasted document beside 63 short turns padded them all to its window)
                by_length = sorted(todo.items(), key=lambda item: len(item[1]))
                for batch in _batches(by_length, self.write_every, self.write_chars):
                    known.update(self._embed_batch(batch, kind))
                    progress.advance(len(batch))
                    bar.update(len(batch))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, sha in enumerate(shas):
            out[row] = known[sha]
        return out

    def _embed_batch(self, batch: list[tuple[str, str]], kind: str) -> dict[str, np.ndarray]:
        started = time.perf_counter()
        fresh = np.asarray(self.inner.embed([text for _, text in batch], kind=kind), dtype=np.float32)
        seconds = time.perf_counter() - started
        if fresh.shape != (len(batch), self.dim):
            raise ValueError(f"embedder {self.name} returned shape {fresh.shape} for {len(batch)} texts; "
                             f"expected ({len(batch)}, {self.dim})")
        new = {sha: vector for (sha, _), vector in zip(batch, fresh)}
        self.cache.put_many(self.identity_key, kind, new.items())
        self._count(misses=len(batch), chars=sum(len(text) for _, text in batch), seconds=seconds)
        return new

    def _count(self, hits: int = 0, misses: int = 0, chars: int = 0, seconds: float = 0.0) -> None:
        with self._lock:
            s = self._stats
            self._stats = replace(s, hits=s.hits + hits, misses=s.misses + misses,
                                  embedded_chars=s.embedded_chars + chars, embed_s=s.embed_s + seconds)

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, {self.cache!r})"


def _batches(items: list[tuple[str, str]], max_texts: int, max_chars: int) -> Iterator[list[tuple[str, str]]]:
    """``items`` in order, cut into runs of at most ``max_texts`` and about ``max_chars`` (a longer text goes alone)."""
    batch: list[tuple[str, str]] = []
    chars = 0
    for item in items:
        if batch and (len(batch) >= max_texts or chars + len(item[1]) > max_chars):
            yield batch
            batch, chars = [], 0
        batch.append(item)
        chars += len(item[1])
    if batch:
        yield batch
