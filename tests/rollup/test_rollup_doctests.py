"""The docstring examples of the rollup, recall and testing modules run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["lyra_lab.rollup", "lyra_lab.rollup._periods", "lyra_lab.rollup._render",
           "lyra_lab.rollup._fact_extraction", "lyra_lab.recall", "lyra_lab.recall._hybrid",
           "lyra_lab.recall._recency"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
