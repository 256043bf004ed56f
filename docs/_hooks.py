"""mkdocs hooks: the notebooks as use-case pages, one API reference page per public package, Sphinx roles read.

Both lists come from the repository, so a new notebook or package gets its page
without an edit here: every ``notebooks/NN_name.ipynb`` (rendered by mkdocs-jupyter,
outputs as committed) and every package of ``lyra_lab`` without a leading underscore
(its face's docstring and ``__all__``, rendered by mkdocstrings).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# Sphinx roles some docstrings use (":func:`x`"); Markdown shows the role's name before the code
ROLE = re.compile(r":(?:func|class|data|meth|mod|attr|exc|obj):(<code>)")


def packages() -> list[str]:
    """The public packages of lyra_lab, by dotted name."""
    root = REPO / "lyra_lab"
    return [f"lyra_lab.{p.parent.relative_to(root).as_posix().replace('/', '.')}"
            for p in sorted(root.rglob("__init__.py"))
            if p.parent != root and not any(part.startswith("_") for part in p.parent.relative_to(root).parts)]


def _title(notebook: Path) -> str:
    number, _, words = notebook.stem.partition("_")
    return f"{number} {words.replace('_', ' ')}"


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    nav: list[Any] = config.nav or []
    nav.append({"Use cases": [{_title(nb): f"notebooks/{nb.name}"} for nb in NOTEBOOKS]})
    nav.append({"API": [{"lyra_lab": "api/lyra_lab.md"}] + [{name: f"api/{name}.md"} for name in packages()]})
    config.nav = nav
    return config


@event_priority(100)  # before mkdocs-jupyter's on_files, which turns .ipynb files into pages
def on_files(files: Files, config: MkDocsConfig) -> Files:
    for nb in NOTEBOOKS:
        files.append(File(f"notebooks/{nb.name}", src_dir=str(nb.parent.parent), dest_dir=config.site_dir,
                          use_directory_urls=config.use_directory_urls))
    for name in ["lyra_lab", *packages()]:
        files.append(File.generated(config, f"api/{name}.md", content=f"# `{name}`\n\n::: {name}\n"))
    return files


def on_page_content(html: str, **kwargs: Any) -> str:
    """Show ``:func:`name``` from a docstring as the code ``name``, without the Sphinx role's name."""
    return ROLE.sub(r"\1", html)
