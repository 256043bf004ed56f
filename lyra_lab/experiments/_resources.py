"""Backends and embedders of a run, built on first use and behind the run's caches.

Nothing starts until a cell needs it: resuming a finished run does not start
the local model server.  With ``cache = "run"`` (default) the response and
embedding caches live in the run folder (``cache/``); ``"user"`` shares them
across runs in ``~/.cache/lyra-lab/``; ``"off"`` disables them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from lyra_lab.backends._types import Backend, Completion, Embedder, Message
from lyra_lab.experiments._cells import spec_label


class SeededBackend:
    """Passes the cell's ``seed`` to every call (so it also keys the response cache) and notes simulation."""

    def __init__(self, inner: Backend, seed: int):
        self.inner = inner
        self.seed = seed
        self.name = inner.name
        self.model = inner.model
        self.simulated = bool(getattr(getattr(inner, "config", None), "simulated", False))

    def complete(self, messages: Sequence[Message], **params: Any) -> Completion:
        params.setdefault("seed", self.seed)
        completion = self.inner.complete(messages, **params)
        self.simulated = self.simulated or bool(completion.simulated)
        return completion


class Resources:
    """Builds and caches the backends and embedders a run names; closes the caches at the end.

    Args:
        cache: ``"run"``, ``"user"`` or ``"off"``.
        cache_dir: the run folder's ``cache/`` (used with ``"run"``).
        backends, embedders: objects to use instead of building a spec, keyed by
            the spec's label (``"local"``, ``"fake"``…) — how tests inject fakes.
    """

    def __init__(self, cache: str, cache_dir: Path, backends: Mapping[str, Backend] | None = None,
                 embedders: Mapping[str, Embedder] | None = None):
        self.cache = cache
        if cache == "user":
            from lyra_lab.backends._paths import cache_dir as user_cache_dir

            cache_dir = user_cache_dir()
        self.cache_dir = cache_dir
        self._given_backends = dict(backends or {})
        self._given_embedders = dict(embedders or {})
        self._backends: dict[str, Backend] = {}
        self._embedders: dict[str, Embedder] = {}
        self._response_cache: Any = None
        self._embedding_cache: Any = None

    def backend(self, spec: Any) -> Backend:
        key = _key(spec)
        if key not in self._backends:
            label = spec_label(spec)
            if label in self._given_backends:
                backend = self._given_backends[label]
            elif spec == "fake":
                from lyra_lab.backends import FakeLLM

                backend = FakeLLM()
            else:
                from lyra_lab.backends._presets import make_backend

                backend = make_backend(spec)
            self._backends[key] = self._cached(backend)
        return self._backends[key]

    def embedder(self, spec: Any) -> Embedder | None:
        if spec in (None, "none"):
            return None
        key = _key(spec)
        if key not in self._embedders:
            from lyra_lab.backends import CachedEmbedder, EmbeddingCache, make_embedder

            label = spec_label(spec)
            embedder = self._given_embedders.get(label) or make_embedder(spec)
            if self.cache != "off":
                if self._embedding_cache is None:
                    self.cache_dir.mkdir(parents=True, exist_ok=True)
                    self._embedding_cache = EmbeddingCache(self.cache_dir / "embeddings.sqlite")
                embedder = CachedEmbedder(embedder, self._embedding_cache)
            self._embedders[key] = embedder
        return self._embedders[key]

    def describe(self) -> dict[str, Any]:
        """Safe-to-record identities of the backends built so far (never keys)."""
        out = {}
        for key, backend in self._backends.items():
            describe = getattr(backend, "describe", None)
            out[key] = describe() if callable(describe) else {"name": backend.name, "model": backend.model}
        return out

    def _cached(self, backend: Backend) -> Backend:
        if self.cache == "off":
            return backend
        from lyra_lab.backends._cache import CachedBackend, ResponseCache

        if self._response_cache is None:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            self._response_cache = ResponseCache(self.cache_dir / "responses.sqlite")
        return CachedBackend(backend, self._response_cache)

    def close(self) -> None:
        for cache in (self._response_cache, self._embedding_cache):
            if cache is not None:
                cache.close()

    def __enter__(self) -> "Resources":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _key(spec: Any) -> str:
    return spec if isinstance(spec, str) else json.dumps(spec, sort_keys=True, default=str)
