"""The fenced code blocks of README.md and docs/*.md, with the marks that say how a test treats them.

A mark is an HTML comment (invisible on the rendered page, visible in the source) on
the line before a block's opening fence, blank lines allowed between:

- ``<!-- file: NAME -->``: the block is a file the reader saves as ``NAME`` (a grid,
  a service); the test writes it into the page's folder before the blocks after it run.
- ``<!-- no-run: reason -->``: the block is not run (it needs a cloud key, a
  server of yours…); the reason is said on the page.  ``test_doc_blocks`` counts
  these marks, so they cannot silently grow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^(```+|~~~+)\s*([\w+-]*)")
MARK = re.compile(r"^<!--\s*(file|no-run):\s*(.*?)\s*-->\s*$")
LANGUAGES = {"python": "python", "py": "python", "toml": "toml"}


@dataclass(frozen=True)
class Block:
    """One fenced block of a page.

    Attributes:
        page: the page, relative to the repository (``docs/architecture.md``).
        line: the line of its opening fence (1-based).
        language: ``python``, ``toml`` or what the fence says (lower case; ``""`` for none).
        text: the block's text.
        file: the file name of a ``file:`` mark, else None.
        no_run: the reason of a ``no-run:`` mark, else None.
    """

    page: str
    line: int
    language: str
    text: str
    file: str | None = None
    no_run: str | None = None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    """README.md and every page of docs/."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page``, in order, with the mark before it (if any)."""
    out: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    name = page.relative_to(REPO).as_posix()
    mark: tuple[str, str] | None = None
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        fence = FENCE.match(stripped)
        if fence is None:
            found = MARK.match(stripped)
            if found:
                mark = (found.group(1), found.group(2))
            elif stripped:
                mark = None  # a mark belongs to the block right after it
            i += 1
            continue
        start, ticks = i, fence.group(1)
        body: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(ticks):
            body.append(lines[i])
            i += 1
        indent = len(lines[start]) - len(lines[start].lstrip())
        text = "\n".join(line[indent:] if line[:indent].isspace() else line for line in body) + "\n"
        language = LANGUAGES.get(fence.group(2).lower(), fence.group(2).lower())
        kind, value = mark or ("", "")
        out.append(Block(name, start + 1, language, text, file=value if kind == "file" else None,
                         no_run=value if kind == "no-run" else None))
        mark = None
        i += 1
    return out
