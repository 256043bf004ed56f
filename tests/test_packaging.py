"""pyproject.toml builds without setuptools' deprecation warnings (what `pip install` shows a newcomer)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_license_is_an_spdx_string_that_the_required_setuptools_understands():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["license"] == "MIT"
    # SPDX strings in project.license need setuptools 77 or later
    assert "setuptools>=77" in project["build-system"]["requires"]


def test_building_the_metadata_prints_no_deprecation_warning(tmp_path):
    # the metadata of a copy holding only pyproject.toml, the README it names and an empty package:
    # the same configuration `pip install` reads, without building anything else
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    shutil.copy(ROOT / "README.md", tmp_path)
    (tmp_path / "lyra_lab").mkdir()
    (tmp_path / "lyra_lab" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "out").mkdir()
    code = "from setuptools import build_meta as b; b.prepare_metadata_for_build_wheel('out')"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert "Deprecat" not in done.stderr + done.stdout
    metadata = next((tmp_path / "out").glob("*.dist-info")) / "METADATA"
    assert "License-Expression: MIT" in metadata.read_text(encoding="utf-8")
