"""The one way a test finds LoCoMo, and the one skip message when it cannot.

Tests resolve the file as every command and notebook does (``lyra_lab.datasets``):
``$LYRA_LOCOMO`` when set, else the copy ``lyra-lab datasets get locomo`` installed.
When neither is there a test skips with ``missing_message``, which names that command.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lyra_lab import datasets

LOCOMO_MISSING = datasets.missing_message("locomo")

# For tests that only need to know it is there, decided at collection.
needs_locomo = pytest.mark.skipif(datasets.find("locomo") is None, reason=LOCOMO_MISSING)


def locomo_path() -> Path:
    """The LoCoMo file, or skip the calling test with the one message that says how to get it."""
    found = datasets.find("locomo")
    if found is None:
        pytest.skip(datasets.missing_message("locomo"))
    return found
