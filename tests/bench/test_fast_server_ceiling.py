"""``benchmarks/fast_server.py``'s ``dag_ceiling``: what a summarizing grid's dependent calls allow, on hand-built logs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dag_ceiling():
    spec = importlib.util.spec_from_file_location("fast_server", ROOT / "benchmarks" / "fast_server.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT / "benchmarks"))  # as when run as a script: it imports minimal_client
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return module.dag_ceiling


def _log(cells: list[list[int]]) -> list[dict]:
    """A run log's events for ``cells`` (each a list of its windows' chunk counts), as the grid writes them."""
    events: list[dict] = []
    for c, windows in enumerate(cells):
        events.append({"event": "cell_started", "t": 0, "cell_id": f"c{c}"})
        events += [{"event": "summarize_progress", "t": 0, "cell_id": f"c{c}", "flush": w, "stage": "load", "n": n}
                   for w, n in enumerate(windows)]
    return events


def test_one_window_maps_three_at_a_time_then_merges(dag_ceiling):
    # 4 chunks: 3 calls (0-1 s), the fourth (1-2 s), the merge (2-3 s): 5 calls in 3 s
    assert dag_ceiling(_log([[4]]), 1.0, max_cells=1, in_flight=100) == pytest.approx(5 / 3)


def test_a_one_chunk_window_has_no_merge_and_windows_of_a_cell_overlap(dag_ceiling):
    # window 0: one call (0-1 s); window 1: 2 chunks (0-1 s) and a merge (1-2 s): 4 calls in 2 s
    assert dag_ceiling(_log([[1, 2]]), 1.0, max_cells=1, in_flight=100) == pytest.approx(2.0)


def test_cells_wait_for_a_place_and_calls_for_a_slot(dag_ceiling):
    log = _log([[1], [1], [1]])
    assert dag_ceiling(log, 1.0, max_cells=1, in_flight=100) == pytest.approx(1.0)  # one cell after another
    assert dag_ceiling(log, 1.0, max_cells=3, in_flight=100) == pytest.approx(3.0)  # all at once
    assert dag_ceiling(log, 1.0, max_cells=3, in_flight=2) == pytest.approx(1.5)  # 3 calls, 2 slots: 2 s
