"""A report section of notes and tables, written to summary.md and report.html alike."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lyra_lab.reports._compare_report import markdown_table

#: One table of a section: its caption, header and ready-formatted cells.
Table = tuple[str, list[str], list[list[str]]]


@dataclass
class TableSection:
    """A titled section: paragraphs, then tables (each under its caption).

    Attributes:
        title: the section's heading.
        anchor: its id in report.html.
        notes: the paragraphs under the heading.
        tables: ``(caption, header, rows)`` each.
        figures: PNGs drawn for the section (beside ``summary.md`` in ``report/``), shown under its tables.
    """

    title: str
    anchor: str
    notes: list[str]
    tables: list[Table] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)

    def markdown(self) -> str:
        """The section in Markdown (``summary.md``)."""
        lines = [f"\n## {self.title}\n"] + [n + "\n" for n in self.notes]
        for caption, header, rows in self.tables:
            lines += [caption + "\n", *markdown_table(header, rows), ""]
        lines += [f"![{f.stem}]({f.name})\n" for f in self.figures]
        return "\n".join(lines) + "\n"
