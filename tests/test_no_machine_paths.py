"""No tracked file names a folder of one machine (a checkout or shared folder, root's or a user's home, the temp folder).

Such a path works on the machine that wrote it and nowhere else: data is found through
``lyra_lab.datasets`` (``lyra-lab datasets get``), outputs go under relative folders such as
``runs/``. Notebooks are read as JSON, so only their text counts, not their images' base64.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# a path that starts at one of these roots; not when it continues another path or a URL (a relative runs/tmp, a URL's path)
MACHINE_PATH = re.compile(r"(?<![\w.~/-])/(?:work|root|tmp|home/[\w.-]+|Users/[\w.-]+)/[\w.-]")
WINDOWS_PATH = re.compile(r"\b[A-Z]:\\(?:Users|Documents and Settings)\\")


def machine_paths(text: str) -> list[str]:
    """The machine-specific paths in ``text``, as they appear."""
    return [m.group(0) for pattern in (MACHINE_PATH, WINDOWS_PATH) for m in pattern.finditer(text)]


def notebook_text(raw: str) -> str:
    """A notebook's sources and text outputs (its images' base64 left out)."""
    nb = json.loads(raw)
    parts = []
    for cell in nb.get("cells", []):
        parts.append("".join(cell.get("source", "")))
        for out in cell.get("outputs", []):
            parts.append("".join(out.get("text", "")))
            parts += ["".join(v) if isinstance(v, list) else str(v) for mime, v in out.get("data", {}).items()
                      if not mime.startswith("image/")]
    return "\n".join(parts)


def tracked_files() -> list[Path]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no list of tracked files")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [ROOT / name for name in listed.decode().split("\0") if name]


def test_no_tracked_file_names_a_folder_of_one_machine():
    found = []
    for path in tracked_files():
        if path == Path(__file__) or not path.is_file():
            continue
        raw = path.read_bytes()
        if b"\0" in raw[:4096]:
            continue  # binary (images, parquet)
        text = raw.decode("utf-8", errors="replace")
        if path.suffix == ".ipynb":
            text = notebook_text(text)
        for line_no, line in enumerate(text.splitlines(), 1):
            found += [f"{path.relative_to(ROOT)}:{line_no}: {hit}" for hit in machine_paths(line)]
    assert not found, "paths of one machine in tracked files:\n" + "\n".join(found)


def _rooted(*parts: str) -> str:
    """``/part/part/...``: the examples below are built from parts, so this file names no absolute path itself."""
    return "/" + "/".join(parts)


@pytest.mark.parametrize("text, hits", [
    ("see " + _rooted("work", "shared", "datasets", "README.md"), [_rooted("work", "s")]),
    (f'Path("{_rooted("tmp", "out.json")}")', [_rooted("tmp", "o")]),
    ("--out " + _rooted("home", "alice", "runs"), [_rooted("home", "alice", "r")]),
    ("cd " + _rooted("root", "lyra"), [_rooted("root", "l")]),
    ("C:\\Users\\bob\\data.json", ["C:\\Users\\"]),
    ("runs" + _rooted("tmp", "x") + " and https://example.org" + _rooted("tmp", "x")
     + " and ~/.cache/lyra-lab and ../shared/datasets", []),
])
def test_the_check_finds_what_it_should(text, hits):
    assert machine_paths(text) == hits
