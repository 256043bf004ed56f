"""What lyra-lab prints fits a terminal: lines of at most ``COLUMNS`` characters, wrapped, never cut.

The CLI's standard output goes through ``WrappedLines`` (installed by ``lyra_lab.cli.main``), so no
command can print a longer line; tables are built to fit in the first place (a wrapped table row is
hard to read), prose and warnings are wrapped with a hanging indent.  Lines holding a carriage
return (a progress bar redrawing itself) pass as they are.

>>> wrap_line("warning: " + "word " * 30, width=40)[:2]
['warning: word word word word word word', '  word word word word word word word']
"""

from __future__ import annotations

import io
import re
import textwrap
from typing import TextIO

#: The width every printed line keeps to.
COLUMNS = 100

_INDENT = re.compile(r"^(\s*(?:[-*•]\s+|\d+\.\s+)?)")
_KEY_VALUE = re.compile(r"^(\s*\S+(?: \S+)?\s{2,})\S")  # "skipped        empty chats 1 · …": hang under the value


def wrap_line(line: str, width: int = COLUMNS) -> list[str]:
    """``line`` as lines of at most ``width`` characters, wrapped at spaces.

    Continuation lines are indented by the line's own indent (and a list marker's width) plus two,
    or, for a ``key    value`` line, under its value.
    A word longer than ``width`` (a path, a URL) stays whole on its own line: cutting it would break it.
    """
    if len(line) <= width:
        return [line]
    lead, pair = _INDENT.match(line), _KEY_VALUE.match(line)
    hang = " " * len(pair.group(1)) if pair else " " * (len(lead.group(1)) if lead else 0) + "  "
    hang = hang if len(hang) < width // 2 else "  "
    out = textwrap.wrap(line, width=width, subsequent_indent=hang, break_on_hyphens=False, break_long_words=False,
                        drop_whitespace=True, replace_whitespace=False) or [line[:width]]
    # a word longer than the room (a path): on a line of its own, not pushed further right by the indent
    return [piece.lstrip() if len(piece) > width and " " not in piece.strip() else piece for piece in out]


def fit(text: str, width: int = COLUMNS) -> str:
    """Every line of ``text`` wrapped to ``width`` columns (see ``wrap_line``)."""
    return "\n".join(out for line in text.split("\n") for out in wrap_line(line, width))


class WrappedLines(io.TextIOBase):
    r"""A text stream over ``target`` that wraps each finished line longer than ``width``.

    Text is held until its line ends (``\\n``) or the stream is flushed; a line with a carriage
    return (a progress bar) is written as it is.
    """

    def __init__(self, target: TextIO, width: int = COLUMNS) -> None:
        """Wrap what is written to ``target`` at ``width`` columns."""
        super().__init__()
        self.target = target
        self.width = width
        self._pending = ""

    def writable(self) -> bool:
        """Always: this is an output stream."""
        return True

    def write(self, text: str) -> int:
        """Write ``text``, wrapping each line it finishes."""
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self.target.write((line if "\r" in line else fit(line, self.width)) + "\n")
        return len(text)

    def flush(self) -> None:
        """Write the unfinished line as it is (a prompt waiting for an answer) and flush the target."""
        if self._pending:
            self.target.write(self._pending)
            self._pending = ""
        self.target.flush()

    def isatty(self) -> bool:
        """What the target says (progress bars and prompts ask)."""
        return self.target.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        """The target's encoding."""
        return self.target.encoding

    @property
    def buffer(self) -> object:
        """The target's byte stream: bytes written there are not text lines, and pass as they are."""
        return self.target.buffer

    def fileno(self) -> int:
        """The target's file descriptor (for code that asks the terminal its size)."""
        return self.target.fileno()


def human(value: float) -> str:
    """A number as a person reads it: ``1,024``, ``0.857``, ``12.5``, never ``1.02e+03``.

    >>> [human(x) for x in (1024.0, 0.8571, 12.5, 3.0, 0.00012, float("nan"))]
    ['1,024', '0.857', '12.5', '3', '0.00012', 'nan']
    """
    if value != value:  # NaN
        return "nan"
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:,.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    if magnitude >= 0.01:
        return f"{value:.3f}".rstrip("0").rstrip(".") if magnitude >= 1 else f"{value:.3f}"
    return f"{value:.2g}"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` with its noun in the right number: ``1 conversation``, ``2,046 turns``.

    >>> count(1, "conversation"), count(2046, "turn"), count(3, "memory system", "memory systems")
    ('1 conversation', '2,046 turns', '3 memory systems')
    """
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def header_lines(name: str, width: int) -> list[str]:
    """A column name broken into lines of at most ``width`` at its own joints (``_``, ``@``, ``.``).

    >>> header_lines("answer_in_context@512tok", 10)
    ['answer_in_', 'context', '@512tok']
    """
    pieces = re.findall(r"[^_@.]+[_.]?|@[^_@.]+[_.]?", name) or [name]
    lines = [""]
    for piece in pieces:
        if lines[-1] and len(lines[-1]) + len(piece) > width:
            lines.append("")
        lines[-1] += piece
    return lines


def columns_table(headers: list[str], rows: list[list[str]], labels: list[str], width: int = COLUMNS) -> str:
    """Rows of short cells under headers broken at their joints, in blocks that fit ``width``.

    ``labels`` head each row (a number, or ``n``); the columns that do not fit beside the first ones go in a
    block below, with the labels again.
    """
    lead = max((len(label) for label in labels), default=0) + 2
    sizes = [max(len(cell) for cell in [*(r[i] for r in rows), ""]) for i in range(len(headers))]
    sizes = [max(size, 10) for size in sizes]  # room for a name's pieces (``evidence_``, ``recall@5``)
    split = [header_lines(h, size) for h, size in zip(headers, sizes)]
    sizes = [max(size, *(len(x) for x in lines)) for size, lines in zip(sizes, split)]
    blocks: list[list[int]] = [[]]
    used = lead
    for i, size in enumerate(sizes):
        if blocks[-1] and used + size + 2 > width:
            blocks.append([])
            used = lead
        blocks[-1].append(i)
        used += size + 2
    out: list[str] = []
    for block in blocks:
        depth = max(len(split[i]) for i in block)
        if out:
            out.append("")  # a blank line between blocks
        for level in range(depth):
            out.append(" " * lead + "  ".join(
                (split[i][level] if level < len(split[i]) else "").ljust(sizes[i]) for i in block).rstrip())
        for label, row in zip(labels, rows):
            out.append(label.rjust(lead - 2) + "  " + "  ".join(row[i].ljust(sizes[i]) for i in block).rstrip())
    return "\n".join(out)
