"""The suite's hypothesis profile (tests/conftest.py): no deadline, blobs printed, derandomized on CI."""

from __future__ import annotations

import os

from hypothesis import settings


def test_the_loaded_profile_has_no_deadline_and_prints_blobs():
    current = settings()
    assert current.deadline is None and current.print_blob is True
    if os.environ.get("CI") and not os.environ.get("HYPOTHESIS_PROFILE"):
        assert current.derandomize is True


def test_both_profiles_are_registered():
    ci, dev = settings.get_profile("ci"), settings.get_profile("dev")
    assert ci.derandomize and not dev.derandomize
    assert ci.deadline is None and dev.deadline is None and ci.print_blob and dev.print_blob
