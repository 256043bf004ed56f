"""Every docstring example in ``lyra_lab`` runs and prints what it shows."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import lyra_lab

MODULES = sorted(m.name for m in pkgutil.walk_packages(lyra_lab.__path__, "lyra_lab."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
