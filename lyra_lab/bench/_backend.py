"""Backends built for benchmarking: a client that never caps the load, and a simulated cloud endpoint.

The client never caps the load below the sweep's levels; the simulated endpoint has realistic
defaults.

``CLOUD_LIKE`` is a made-up hosted model, not a measurement of any provider:
time to first token lognormal around 0.4 s, 60 tokens/s per stream, 8 requests
served at once (more wait in a queue), and a 5 requests/s rate limit
(burst 5) answered with 429 + ``Retry-After``. Results from it are labelled
simulated.

``GPU_LIKE`` is shaped like a GPU serving engine (vLLM, TEI, llama.cpp's server
on a GPU; issue 37): 20 ms to first token, 2,000 tokens/s per stream, 256
requests served at once, no rate limit. On it the client, not the server, is
what a benchmark on a small machine can run out of.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from lyra_lab._registry import ConfigError
from lyra_lab.backends import Backend, SimulatedServer, SimulatedSpec, make_backend

CLOUD_LIKE = SimulatedSpec(model="simulated-cloud", latency_s=0.4, latency_sigma=0.25, tokens_per_s=60.0,
                           max_concurrency=8, rate_limit_rps=5.0, rate_limit_burst=5, seed=0)

GPU_LIKE = SimulatedSpec(model="simulated-gpu", latency_s=0.02, tokens_per_s=2000.0, max_concurrency=256, seed=0)


def cloud_like_server(**overrides: Any) -> SimulatedServer:
    """A (not yet started) ``SimulatedServer`` with ``CLOUD_LIKE`` behaviour, fields overridden by name.

    >>> with cloud_like_server(latency_s=0.0, tokens_per_s=None) as server:
    ...     server.spec.max_concurrency
    8
    """
    try:
        return SimulatedServer(dataclasses.replace(CLOUD_LIKE, **overrides))
    except TypeError as exc:
        raise ConfigError(f"simulated server: {exc}") from None


def gpu_like_server(**overrides: Any) -> SimulatedServer:
    """A (not yet started) ``SimulatedServer`` with ``GPU_LIKE`` behaviour, fields overridden by name."""
    try:
        return SimulatedServer(dataclasses.replace(GPU_LIKE, **overrides))
    except TypeError as exc:
        raise ConfigError(f"simulated server: {exc}") from None


def bench_backend(spec: str | Mapping[str, Any], max_concurrency: int, **fields: object) -> Backend:
    """``make_backend(spec)`` with the client's ``max_concurrency`` set to the sweep's highest level.

    A backend's own concurrency cap (1 for ``local``, 8 for ``openai/…``)
    protects normal runs; a benchmark must be able to push past it, so the
    server, not the client, decides what happens under load.

    Args:
        spec: a preset name (``"local"``, ``"openai/gpt-4o-mini"``…) or a ``make_backend`` dict.
        max_concurrency: the most calls in flight the sweep will make.
        fields: more ``BackendConfig`` fields (``max_attempts``, ``base_url``…).

    Raises:
        ConfigError: as ``make_backend`` does.
    """
    if not isinstance(max_concurrency, int) or max_concurrency < 1:
        raise ConfigError(f"max_concurrency must be an integer >= 1, got {max_concurrency!r}")
    base = {"preset": spec} if isinstance(spec, str) else dict(spec)
    if "cache" in base:
        raise ConfigError("a benchmark must not use a response cache: cached answers measure nothing")
    return make_backend({**base, **fields, "max_concurrency": max_concurrency})
