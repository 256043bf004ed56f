"""The layering of ``lyra_lab``: public faces only across packages, no import circles.

Words used here:

- a *package* is a directory with an ``__init__.py`` (``lyra_lab/corpus``, and a
  subpackage such as ``lyra_lab/backends/simulated`` is a package of its own);
  each top-level module (``lyra_lab/cli.py``, ``lyra_lab/types.py``,
  ``lyra_lab/_registry.py``) is a unit of its own;
- a *private module* is an underscore module inside a package
  (``lyra_lab.corpus._model``); only modules of that same package may import it.
  Everyone else, subpackages and parents included, goes through the package's
  face (its ``__init__``, which says what it offers in its docstring and
  ``__all__``).  The root's own modules (``lyra_lab._registry``: ``Registry``,
  ``ConfigError``) are the floor every package stands on, so they are nobody's
  private.

Every ``import`` counts, at any depth (inside functions, under ``TYPE_CHECKING``):
a lazy import is still a dependency, and hiding a circle behind one is what this
file exists to stop.  With no package circle the packages stand in floors, each
importing only floors below it (``floors(package_graph(ROOT))`` lists them).

The checks are plain functions over a directory (``face_violations``,
``package_graph``, ``module_graph``, ``find_cycle``), so the last tests point them
at small planted trees to show that each one can fail.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "lyra_lab"


@dataclass(frozen=True)
class Import:
    """One import statement: who imports what, and where."""

    importer: str  # dotted module name
    target: str  # dotted module name of the imported module
    path: Path
    line: int


def module_names(root: Path, package: str | None = None) -> dict[str, Path]:
    """Every module under ``root`` by dotted name (``lyra_lab.corpus._model``); packages by their ``__init__``."""
    package = package or root.name
    names: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join((package, *parts))] = path
    return names


def is_package(module: str, names: dict[str, Path]) -> bool:
    return names[module].name == "__init__.py"


def unit_of(module: str, names: dict[str, Path]) -> str:
    """The package (or top-level module) a module belongs to: ``lyra_lab.corpus._model`` -> ``lyra_lab.corpus``."""
    if is_package(module, names):
        return module
    parent = module.rpartition(".")[0]
    root = next(iter(names)).split(".")[0]
    return module if parent == root else parent


def _resolve(node: ast.ImportFrom, importer: str, names: dict[str, Path]) -> str:
    if not node.level:
        return node.module or ""
    base = importer if is_package(importer, names) else importer.rpartition(".")[0]
    for _ in range(node.level - 1):
        base = base.rpartition(".")[0]
    return f"{base}.{node.module}" if node.module else base


def imports(root: Path, package: str | None = None) -> list[Import]:
    """Every import of a module under ``root`` by a module under ``root``, at any depth of the code."""
    names = module_names(root, package)
    found = []
    for importer, path in names.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                source = _resolve(node, importer, names)
                # ``from pkg import mod`` imports the module pkg.mod; it needs pkg's face only for names
                # that are not modules (a package's own modules may do ``from pkg import _sibling``)
                modules = [f"{source}.{a.name}" for a in node.names if f"{source}.{a.name}" in names]
                targets = modules + ([source] if len(modules) < len(node.names) else [])
            else:
                continue
            for target in targets:
                while target and target not in names:  # ``import a.b.c`` of a name inside a module
                    target = target.rpartition(".")[0]
                if target:
                    found.append(Import(importer, target, path, node.lineno))
    return found


def private_owner(module: str, names: dict[str, Path]) -> str | None:
    """The package a private module belongs to (``lyra_lab.corpus._model`` -> ``lyra_lab.corpus``), else None."""
    parts = module.split(".")
    for i in range(2, len(parts)):  # parts[1] is a top-level unit: the root floor is nobody's private
        if parts[i].startswith("_"):
            return ".".join(parts[:i])
    return None


def face_violations(root: Path, package: str | None = None) -> list[str]:
    """Imports of another package's private module, as ``path:line: importer imports target``."""
    names = module_names(root, package)
    bad = []
    for imp in imports(root, package):
        owner = private_owner(imp.target, names)
        if owner is not None and unit_of(imp.importer, names) != owner:
            bad.append(f"{imp.path.relative_to(root.parent)}:{imp.line}: {imp.importer} imports {imp.target}")
    return bad


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of a directed graph as a path ``[a, b, ..., a]``, or None when it has none."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def module_graph(root: Path, package: str | None = None) -> dict[str, set[str]]:
    """Module -> the modules it imports (a package's ``__init__`` stands for the package)."""
    edges: dict[str, set[str]] = {}
    for imp in imports(root, package):
        if imp.importer != imp.target:
            edges.setdefault(imp.importer, set()).add(imp.target)
    return edges


def package_graph(root: Path, package: str | None = None) -> dict[str, set[str]]:
    """Package (or top-level module) -> the other packages its modules import.

    A subpackage is a package of its own here too: if a parent's face re-exported a
    subpackage that imports the parent's face, that would be a circle.
    """
    names = module_names(root, package)
    edges: dict[str, set[str]] = {}
    for imp in imports(root, package):
        src, dst = unit_of(imp.importer, names), unit_of(imp.target, names)
        if src != dst:
            edges.setdefault(src, set()).add(dst)
    return edges


def floors(edges: dict[str, set[str]]) -> list[list[str]]:
    """An acyclic graph's nodes by floor: floor 0 imports nothing of ours, floor n only floors below n."""
    nodes = set(edges) | {d for ds in edges.values() for d in ds}
    level: dict[str, int] = {}
    while len(level) < len(nodes):
        ready = {n: 1 + max((level[d] for d in edges.get(n, ())), default=-1)
                 for n in nodes - set(level) if edges.get(n, set()) <= set(level)}
        if not ready:
            raise ValueError(f"no floors: import circle {find_cycle(edges)}")
        level.update(ready)
    return [sorted(n for n in level if level[n] == f) for f in range(max(level.values(), default=-1) + 1)]


# --- the project itself -------------------------------------------------------------------------


def test_no_module_imports_another_packages_private_module():
    bad = face_violations(ROOT)
    assert not bad, f"{len(bad)} imports of another package's private module:\n" + "\n".join(bad)


def _reaches(edges: dict[str, set[str]], start: str) -> set[str]:
    """Every package ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for dst in edges.get(todo.pop(), ()):
            if dst not in seen:
                seen.add(dst)
                todo.append(dst)
    return seen


def test_measures_sit_below_the_runner_and_reporting_above_it():
    """The runner scores through ``measures`` and never reads ``reports``; nothing it uses reaches them either."""
    edges = package_graph(ROOT)
    for package in ("lyra_lab.measures", "lyra_lab.replay", "lyra_lab.runs", "lyra_lab.experiments"):
        assert "lyra_lab.reports" not in _reaches(edges, package), package
    for package in ("lyra_lab.measures", "lyra_lab.runs", "lyra_lab.stats"):
        assert "lyra_lab.experiments" not in _reaches(edges, package), package


#: the rooms of ``lyra_lab.experiments`` -> the rooms each may import (docs/architecture.md, "Inside experiments")
EXPERIMENTS_ROOMS = {"grid": set(), "cells": {"grid"}, "executors": {"grid", "cells"}, "forecast": {"grid", "cells"}}


def room_violations(edges: dict[str, set[str]], parent: str, rooms: dict[str, set[str]]) -> list[str]:
    """Imports of a room of ``parent`` into ``parent`` itself or a room it may not import, as ``room -> package``."""
    bad = []
    for room, allowed in rooms.items():
        for dst in sorted(edges.get(f"{parent}.{room}", ())):
            inside = dst == parent or dst.startswith(parent + ".")
            if inside and dst.removeprefix(parent + ".").split(".")[0] not in allowed:
                bad.append(f"{parent}.{room} -> {dst}")
    return bad


def test_experiments_rooms_import_leftwards():
    """grid <- cells <- executors, forecast <- the runner: no room imports a room to its right, nor the runner."""
    names = module_names(ROOT)
    assert {m.split(".")[2] for m in names if m.startswith("lyra_lab.experiments.") and m.count(".") >= 3} \
        == set(EXPERIMENTS_ROOMS), "a room of experiments is missing from EXPERIMENTS_ROOMS (or gone)"
    bad = room_violations(package_graph(ROOT), "lyra_lab.experiments", EXPERIMENTS_ROOMS)
    assert not bad, "experiments' rooms import rightwards:\n" + "\n".join(bad)


def test_package_graph_is_acyclic():
    cycle = find_cycle(package_graph(ROOT))
    assert cycle is None, "package import circle: " + " -> ".join(cycle or [])


def test_module_graph_is_acyclic():
    cycle = find_cycle(module_graph(ROOT))
    assert cycle is None, "module import circle: " + " -> ".join(cycle or [])


def test_every_package_face_says_what_it_offers():
    names = module_names(ROOT)
    for module, path in names.items():
        if is_package(module, names):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            assert ast.get_docstring(tree), f"{path}: the package face has no docstring"
            assert any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets)
                       for n in tree.body), f"{path}: the package face has no __all__"



def test_every_name_a_face_lists_is_there():
    import importlib

    names = module_names(ROOT)
    for module in names:
        if is_package(module, names) or module == "lyra_lab.types":
            face = importlib.import_module(module)
            missing = [n for n in getattr(face, "__all__", ()) if not hasattr(face, n)]
            assert not missing, f"{module}.__all__ lists names it does not have: {missing}"
            assert len(set(face.__all__)) == len(face.__all__), f"{module}.__all__ lists a name twice"


# --- the checks fail on planted violations ------------------------------------------------------


def plant(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


CLEAN = {
    "__init__.py": "",
    "_floor.py": "class ConfigError(Exception): ...\n",
    "low/__init__.py": "from pkg.low._core import thing\n__all__ = ['thing']\n",
    "low/_core.py": "from pkg._floor import ConfigError\nthing = 1\n",
    "low/sub/__init__.py": "from pkg.low.sub._part import part\n",
    "low/sub/_part.py": "from pkg.low import thing\npart = thing\n",
    "high/__init__.py": "from pkg.high._use import use\n",
    "high/_use.py": "from pkg.low import thing\nfrom ._own import own\n",
    "high/_own.py": "own = 2\n",
    "cli.py": "def main():\n    from pkg.high import use\n",
}


def test_a_clean_tree_passes(tmp_path):
    root = plant(tmp_path, CLEAN)
    assert face_violations(root) == []
    assert find_cycle(package_graph(root)) is None
    assert find_cycle(module_graph(root)) is None
    assert floors(package_graph(root)) == [["pkg._floor"], ["pkg.low"], ["pkg.high", "pkg.low.sub"], ["pkg.cli"]]


def test_a_lazy_private_import_is_caught(tmp_path):
    root = plant(tmp_path, {**CLEAN, "cli.py": "def main():\n    if True:\n        from pkg.high._use import use\n"})
    assert face_violations(root) == [f"{Path('pkg/cli.py')}:3: pkg.cli imports pkg.high._use"]


def test_a_subpackage_must_use_its_parents_face(tmp_path):
    root = plant(tmp_path, {**CLEAN, "low/sub/_part.py": "from pkg.low._core import thing\n"})
    assert face_violations(root) == [f"{Path('pkg/low/sub/_part.py')}:1: pkg.low.sub._part imports pkg.low._core"]


def test_from_package_import_private_module_is_caught(tmp_path):
    root = plant(tmp_path, {**CLEAN, "high/_use.py": "from pkg.low import _core\n"})
    assert face_violations(root) == [f"{Path('pkg/high/_use.py')}:1: pkg.high._use imports pkg.low._core"]


def test_a_package_circle_through_a_lazy_import_is_caught(tmp_path):
    root = plant(tmp_path, {**CLEAN, "low/_core.py": "thing = 1\ndef f():\n    from pkg.high import use\n"})
    assert face_violations(root) == []
    assert find_cycle(package_graph(root)) == ["pkg.high", "pkg.low", "pkg.high"]


def test_a_module_circle_inside_one_package_is_caught(tmp_path):
    root = plant(tmp_path, {**CLEAN, "high/_own.py": "from typing import TYPE_CHECKING\n"
                                                     "if TYPE_CHECKING:\n    from pkg.high._use import use\n"})
    assert find_cycle(package_graph(root)) is None
    assert find_cycle(module_graph(root)) == ["pkg.high._use", "pkg.high._own", "pkg.high._use"]


def test_relative_imports_are_resolved(tmp_path):
    root = plant(tmp_path, {**CLEAN, "high/_own.py": "from ..low import _core\n"})
    assert face_violations(root) == [f"{Path('pkg/high/_own.py')}:1: pkg.high._own imports pkg.low._core"]


def test_a_room_importing_rightwards_is_caught(tmp_path):
    rooms = {"low": {"_floor"}, "high": {"low", "_floor"}}
    assert room_violations(package_graph(plant(tmp_path, CLEAN)), "pkg", rooms) == []
    root = plant(tmp_path, {**CLEAN, "low/_core.py": "thing = 1\ndef f():\n    from pkg.high import use\n"})
    assert room_violations(package_graph(root), "pkg", rooms) == ["pkg.low -> pkg.high"]
    root = plant(tmp_path, {**CLEAN, "high/_own.py": "from pkg import cli\nown = 2\n"})
    assert room_violations(package_graph(root), "pkg", rooms) == ["pkg.high -> pkg.cli"]


@pytest.mark.parametrize("edges, cycle", [
    ({"a": {"b"}, "b": {"c"}, "c": set()}, None),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ({"a": {"a"}}, ["a", "a"]),
    ({"a": {"b", "c"}, "b": set(), "c": {"d"}, "d": {"c"}}, ["c", "d", "c"]),
])
def test_find_cycle(edges, cycle):
    assert find_cycle(edges) == cycle


def test_the_shared_vocabulary_is_the_owning_packages_objects():
    import importlib

    import lyra_lab.types

    owners = {"lyra_lab.corpus": ["Turn", "Session", "Conversation", "Corpus", "CorpusFormatError", "Probe", "Role"],
              "lyra_lab.memory": ["MemoryEntry"], "lyra_lab.chunking": ["Chunk"], "lyra_lab.recall": ["Hit"],
              "lyra_lab.backends": ["Backend", "BackendError", "Completion", "Embedder", "Message", "Usage"],
              "lyra_lab": ["ConfigError", "Degradation", "DegradationTally"]}
    assert sorted(n for names in owners.values() for n in names) == sorted(lyra_lab.types.__all__)
    for package, names in owners.items():
        for name in names:
            assert getattr(lyra_lab.types, name) is getattr(importlib.import_module(package), name), name
