"""Every figure a piece of code prints (``savefig`` or a notebook's inline display), checked as it is printed.

Both paths end in ``FigureCanvasBase.print_figure``, so wrapping it sees every figure a report
writes and every figure a notebook shows, without changing what they draw. Each is checked
with ``lyra_lab.reports.figure_problems`` before it is printed.

* In this process: ``with checking_figures() as checked: write_report(run)``.
* In a notebook kernel: ``kernel_startup(tmp_path)`` writes an IPython startup file that calls
  ``install(log)``; every figure the kernel prints appends a JSON line to the log, which
  ``read_log`` reads back after the notebook ran (``tests/notebooks/conftest.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator


@dataclass(frozen=True)
class CheckedFigure:
    """A printed figure: its title, the file it went to (``""`` for an inline display) and its problems."""

    title: str
    file: str
    problems: tuple[str, ...]


def figure_title(fig: Any) -> str:
    """The suptitle, else the first axes title with text, else ``"(untitled)"``."""
    suptitle = getattr(fig, "_suptitle", None)
    if suptitle is not None and suptitle.get_text():
        return " ".join(suptitle.get_text().split())
    for ax in fig.axes:
        if ax.get_title():
            return " ".join(ax.get_title().split())
    return "(untitled)"


def _wrap(record: Callable[[CheckedFigure], None]) -> Callable[[], None]:
    """Wrap ``print_figure`` so every printed figure is checked and passed to ``record``; returns the undo."""
    from matplotlib.backend_bases import FigureCanvasBase

    from lyra_lab.reports import figure_problems

    original = FigureCanvasBase.print_figure

    def print_figure(self: Any, filename: Any, *args: Any, **kwargs: Any) -> Any:
        fig = self.figure
        where = str(filename) if isinstance(filename, (str, os.PathLike)) else ""
        record(CheckedFigure(figure_title(fig), where, tuple(str(p) for p in figure_problems(fig))))
        return original(self, filename, *args, **kwargs)

    FigureCanvasBase.print_figure = print_figure  # type: ignore[method-assign]

    def undo() -> None:
        FigureCanvasBase.print_figure = original  # type: ignore[method-assign]

    return undo


@contextlib.contextmanager
def checking_figures() -> Iterator[list[CheckedFigure]]:
    """Every figure printed inside the block, checked (the list fills as they are printed)."""
    checked: list[CheckedFigure] = []
    undo = _wrap(checked.append)
    try:
        yield checked
    finally:
        undo()


def install(log: str | os.PathLike[str]) -> None:
    """For the rest of this process, append each printed figure's check to ``log`` (JSON lines)."""
    path = Path(log)

    def record(figure: CheckedFigure) -> None:
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"title": figure.title, "file": figure.file, "problems": list(figure.problems)}) + "\n")

    _wrap(record)


def kernel_startup(folder: Path) -> tuple[Path, Path]:
    """An IPython folder whose startup file installs the check in every kernel started with it.

    Returns ``(ipython_dir, log)``: set ``IPYTHONDIR`` to the first before starting the kernel,
    read the second with ``read_log`` after.
    """
    ipython_dir, log = folder / "ipython", folder / "figure-checks.jsonl"
    startup = ipython_dir / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    (startup / "00-lyra-figure-check.py").write_text(
        "import runpy\n"
        f"runpy.run_path({str(Path(__file__).resolve())!r})['install']({str(log)!r})\n", encoding="utf-8")
    return ipython_dir, log


def read_log(log: Path) -> list[CheckedFigure]:
    """The figures a kernel checked (none when it printed none)."""
    if not log.exists():
        return []
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [CheckedFigure(d["title"], d["file"], tuple(d["problems"])) for d in lines]


def problems_text(checked: list[CheckedFigure]) -> str:
    """One line per problem, naming its figure: what a failing test prints."""
    return "\n".join(f"{c.file or '(inline)'} — {c.title[:80]}: {p}" for c in checked for p in c.problems)
