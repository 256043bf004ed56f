"""The module map of ``docs/architecture.md``: every module of lyra_lab with its docstring's first sentence.

Usage: ``python -m lyra_lab._module_map docs/architecture.md`` rewrites the part of the page between
``<!-- module map -->`` and ``<!-- end module map -->``; a test regenerates it and compares, so the
page names every module the package has, in the words of the module's own docstring.  Modules are
read with ``ast`` (nothing is imported).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
START, END = "<!-- module map -->", "<!-- end module map -->"


def first_sentence(doc: str) -> str:
    """The docstring's first paragraph up to its first full stop, on one line."""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    match = re.search(r"(?<![.\s][a-z])\.(\s|$)", paragraph)  # a full stop, not "e.g." or "i.e."
    return paragraph[:match.start() + 1] if match else paragraph


def module_doc(path: Path) -> str:
    """The module's docstring (empty when it has none)."""
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def package_modules(root: Path = ROOT) -> dict[str, list[Path]]:
    """Dotted package name → its modules' files (the face first), root modules under ``lyra_lab``."""
    packages: dict[str, list[Path]] = {}
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        folder = path.parent.relative_to(root.parent)
        packages.setdefault(".".join(folder.parts), []).append(path)
    for files in packages.values():
        files.sort(key=lambda p: (p.name != "__init__.py", p.name))
    return packages


def render_map(root: Path = ROOT) -> str:
    """The markdown of the module map: a list per package, a line per module."""
    lines = []
    for package, files in package_modules(root).items():
        face = module_doc(files[0]) if files[0].name == "__init__.py" else ""
        lines += ["", f"**`{package}`** — {first_sentence(face)}" if face else f"**`{package}`**", ""]
        for path in files:
            if path.name == "__init__.py":
                continue
            lines.append(f"- `{path.stem}` — {first_sentence(module_doc(path)) or '(no docstring)'}")
    return "\n".join(lines[1:]) + "\n"


def with_map(page: str, root: Path = ROOT) -> str:
    """``page`` with the part between the markers replaced by the current map."""
    head, rest = page.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{render_map(root)}{END}{tail}"


if __name__ == "__main__":
    target = Path(sys.argv[1])
    target.write_text(with_map(target.read_text(encoding="utf-8")), encoding="utf-8")
