"""``fewer_collections``: the collector's first threshold raised while a run goes on, restored after."""

from __future__ import annotations

import gc

import pytest

from lyra_lab.experiments._runner import fewer_collections


def test_the_threshold_is_raised_inside_and_restored_after_also_on_an_error():
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 11, 12)
        with fewer_collections(50_000):
            assert gc.get_threshold() == (50_000, 11, 12)
        assert gc.get_threshold() == (700, 11, 12)
        with pytest.raises(RuntimeError), fewer_collections(50_000):
            raise RuntimeError("a cell blew up")
        assert gc.get_threshold() == (700, 11, 12)
        gc.set_threshold(90_000, 11, 12)  # a caller's higher threshold is kept, not lowered
        with fewer_collections(50_000):
            assert gc.get_threshold() == (90_000, 11, 12)
    finally:
        gc.set_threshold(*before)
