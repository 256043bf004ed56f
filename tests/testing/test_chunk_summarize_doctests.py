"""The docstring examples of the chunking, summarize and testing packages run and hold."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import lyra_lab.chunking
import lyra_lab.summarize

MODULES = sorted(
    f"{package.__name__}.{info.name}"
    for package in (lyra_lab.chunking, lyra_lab.summarize)
    for info in pkgutil.iter_modules(package.__path__)
) + ["lyra_lab.testing._chunk_invariants", "lyra_lab.testing._conversations"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
