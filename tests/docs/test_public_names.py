"""The public names README.md, docs/ and the notebooks teach, listed in one place: ``public_names.txt``.

A name on the list is a promise: it imports from where the list says, without a warning.
Moving one means a shim in ``lyra_lab._moved`` (its old home keeps it for a release, with a
``DeprecationWarning``) and a line in CHANGELOG.md.  Every ``lyra_lab`` name the pages'
Python blocks, the notebooks and the examples import (``from lyra_lab.x import name``, or
``lyra_lab.name`` after ``import lyra_lab``) must be on the list, so a page cannot teach a
name nobody promised.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import warnings
from pathlib import Path

from tests.docs.doc_blocks import REPO, blocks, pages

HERE = Path(__file__).resolve().parent
LISTED = {tuple(line.split()[:2]) for line in (HERE / "public_names.txt").read_text(encoding="utf-8").splitlines()
          if line.strip() and not line.startswith("#")}


def sources() -> dict[str, str]:
    """Where the documented API is used: each page's Python blocks, each notebook and example script."""
    out = {f"{b.where}": b.text for page in pages() for b in blocks(page) if b.language == "python"}
    for path in [*sorted((REPO / "notebooks").glob("[0-9][0-9]_*.py")), *sorted((REPO / "examples").glob("*.py"))]:
        out[path.relative_to(REPO).as_posix()] = path.read_text(encoding="utf-8")
    return out


def used_names(code: str) -> set[tuple[str, str]]:
    """``(module, name)`` for each lyra_lab name ``code`` imports or reads off ``lyra_lab``."""
    tree = ast.parse(code)
    found: set[tuple[str, str]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "lyra_lab":
            found.update((node.module, alias.name) for alias in node.names)
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "lyra_lab"
              and not node.attr.startswith("__")):
            found.add(("lyra_lab", node.attr))
    return found


def test_every_name_the_docs_and_notebooks_use_is_listed():
    unlisted = {f"{module} {name}  ({where})" for where, code in sources().items()
                for module, name in used_names(code) if (module, name) not in LISTED}
    assert not unlisted, "add to tests/docs/public_names.txt (a promise):\n" + "\n".join(sorted(unlisted))


def test_every_listed_name_imports_from_its_home_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        missing = [f"{module}.{name}" for module, name in sorted(LISTED)
                   if not hasattr(importlib.import_module(module), name)
                   and importlib.util.find_spec(f"{module}.{name}") is None]  # a subpackage (lyra_lab.datasets)
    assert not missing


def test_the_finder_sees_the_imports_it_should():
    assert used_names("import lyra_lab\nfrom lyra_lab.experiments import run_experiment as r\nlyra_lab.load('x')\n") \
        == {("lyra_lab.experiments", "run_experiment"), ("lyra_lab", "load")}
    assert len(LISTED) > 50
