"""A static embedder for fast exploratory runs: WordLlama's bundled token vectors, averaged.

A static embedding model is a table of one vector per token: a text's vector
is the mean of its tokens' rows, so embedding costs a tokenizer pass and a
lookup (tens of thousands of texts a second on one core) instead of a
transformer's forward pass. The ``wordllama`` wheel ships its 256-d
``l2_supercat`` table (16 MB, Llama-2 tokenizer) inside the package; it is
loaded from there by path, so nothing is ever downloaded (WordLlama's own
``load()`` looks for the tokenizer in a folder the wheel does not have and
then tries the network).

There is no window: a text of any length is the mean over all its tokens, so
there is no long-text policy to choose, and no query/passage split (``kind`` is
accepted and ignored).
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np

from lyra_lab.backends._embedders import check_texts, unit_rows
from lyra_lab.backends._progress import track

_TABLE = "weights/l2_supercat_256.safetensors"
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"


class StaticEmbedder:
    """WordLlama's ``l2_supercat`` static token vectors (256-d), mean-pooled and unit-normed.

    Args:
        dim: 64, 128 or 256: the table's leading dimensions (WordLlama is trained
            Matryoshka-style, so a prefix of each vector is itself an embedding).
        batch_size: texts per tokenizer call.
    """

    def __init__(self, dim: int = 256, batch_size: int = 512):
        if dim not in (64, 128, 256):
            raise ValueError(f"dim must be 64, 128 or 256, got {dim!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.dim = dim
        self.batch_size = batch_size
        self.name = f"wordllama/l2_supercat-{dim}"
        self._model: tuple[np.ndarray, Any] | None = None
        self._lock = threading.Lock()

    def identity(self) -> dict[str, Any]:
        """What determines the vectors (for caches and run records)."""
        from importlib.metadata import version

        return {"embedder": self.name, "dim": self.dim, "wordllama": version("wordllama")}

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        texts = check_texts(texts, kind)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        table, tokenizer = self._load()
        with track(f"embed {kind}s: {self.name}", len(texts)) as progress:
            for start in range(0, len(texts), self.batch_size):
                batch = texts[start : start + self.batch_size]
                encoded = tokenizer.encode_batch(batch, add_special_tokens=False)
                out[start : start + len(batch)] = _mean_rows(table, [e.ids for e in encoded])
                progress.advance(len(batch))
        return unit_rows(out)

    def _load(self) -> tuple[np.ndarray, Any]:
        with self._lock:
            if self._model is None:
                from importlib.resources import files

                from safetensors import safe_open
                from tokenizers import Tokenizer

                root = files("wordllama")
                with safe_open(str(root / _TABLE), framework="np", device="cpu") as f:
                    table = np.ascontiguousarray(f.get_tensor("embedding.weight")[:, : self.dim], dtype=np.float32)
                tokenizer = Tokenizer.from_file(str(root / _TOKENIZER))
                tokenizer.no_padding()
                tokenizer.no_truncation()
                self._model = (table, tokenizer)
            return self._model

    def __repr__(self) -> str:
        return f"StaticEmbedder(dim={self.dim}, batch_size={self.batch_size})"


def _mean_rows(table: np.ndarray, ids: list[list[int]]) -> np.ndarray:
    """Each id list's mean row of ``table`` (a zero row for an empty list), without padding to the longest."""
    out = np.zeros((len(ids), table.shape[1]), dtype=np.float32)
    lengths = np.array([len(i) for i in ids], dtype=np.int64)
    filled = np.flatnonzero(lengths)
    if len(filled) == 0:
        return out
    flat = np.fromiter((t for i in filled for t in ids[i]), dtype=np.int64, count=int(lengths.sum()))
    np.clip(flat, 0, len(table) - 1, out=flat)
    starts = np.concatenate(([0], np.cumsum(lengths[filled])[:-1]))
    out[filled] = np.add.reduceat(table[flat], starts, axis=0) / lengths[filled, None]
    return out
