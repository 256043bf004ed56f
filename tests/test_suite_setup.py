"""How tests/conftest.py sets the suite up: a private user cache folder, the longest files first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from lyra_lab.backends._paths import cache_dir


def test_the_user_cache_of_a_test_is_a_session_temp_folder(tmp_path_factory):
    folder = cache_dir()
    assert folder.is_relative_to(tmp_path_factory.getbasetemp())
    assert not folder.is_relative_to(Path.home() / ".cache")


def test_a_process_a_test_starts_inherits_the_private_folder(tmp_path_factory):
    out = subprocess.run([sys.executable, "-c", "import os; print(os.environ['LYRA_LAB_CACHE_DIR'])"],
                         capture_output=True, text=True, check=True, env=os.environ.copy())
    assert Path(out.stdout.strip()).is_relative_to(tmp_path_factory.getbasetemp())


def test_every_long_file_named_for_scheduling_exists(request):
    conftests = [p for p in request.config.pluginmanager.get_plugins() if hasattr(p, "LONG_FILES")]
    assert len(conftests) == 1
    tests_dir = Path(conftests[0].__file__).parent
    missing = [name for name in conftests[0].LONG_FILES if not (tests_dir / name).is_file()]
    assert missing == [], "renamed or removed: update LONG_FILES in tests/conftest.py"
