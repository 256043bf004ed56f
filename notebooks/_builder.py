"""What every ``notebooks/build_*.py`` shares: cells as ``("md" | "code", source)`` → a notebook file.

Stable cell ids (``<prefix>-NN``) and fixed metadata, so rebuilding an unchanged builder gives the
same bytes and the committed notebook diffs as code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook


def build_notebook(cells: Sequence[tuple[str, str]], id_prefix: str) -> nbformat.NotebookNode:
    """The notebook of ``cells``, without outputs."""
    nb = new_notebook()
    nb.cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src) for kind, src in cells]
    for i, cell in enumerate(nb.cells):
        cell.id = f"{id_prefix}-{i:02d}"
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def write_notebook(nb: nbformat.NotebookNode, path: Path) -> None:
    nbformat.write(nb, path)
    print(f"wrote {path}")


def entry_points(cells: Sequence[tuple[str, str]], id_prefix: str, notebook: Path
                 ) -> tuple[Callable[[], nbformat.NotebookNode], Callable[[], None]]:
    """A builder's ``build()`` (the notebook, for tests) and ``main()`` (write it to ``notebook``)."""

    def build() -> nbformat.NotebookNode:
        return build_notebook(cells, id_prefix)

    def main() -> None:
        write_notebook(build(), notebook)

    return build, main
