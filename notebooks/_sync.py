r"""Write each notebook (``NN_name.ipynb``) from its Jupytext source (``NN_name.py``), executed in small mode.

    python notebooks/_sync.py                    # every notebook: cells from the source, run, outputs kept
    python notebooks/_sync.py 01_quickstart      # only these (a stem, a .py or a .ipynb name)
    python notebooks/_sync.py --no-execute       # cells only, without outputs (seconds)
    python notebooks/_sync.py --keep-outputs     # cells only; outputs kept where only comments/docstrings changed

``make notebooks`` runs the first. The source is what you edit (and what ruff and mypy
check); the ``.ipynb`` is written from it with stable cell ids and fixed metadata, so an
unchanged source gives the same cells. Executed, a notebook runs in its small mode
(``LYRA_NB_FULL`` is unset for the kernel) and keeps its outputs, figures inline, without what
only a live front end needs: progress bars (tqdm's widgets and the ``\r``-redrawn bars it writes
to stderr) are removed; every other output line (warnings included) stays. Paths under the
repository are shown relative to it, others under the home folder as ``~/...``, so no machine's
folder is committed. A notebook's run folders under ``runs/`` resume as they do when it is run by
hand: remove them for a cold run. The kernels get a user cache folder (``LYRA_LAB_CACHE_DIR``) of
this run's own: outputs from a cold start, never from a local model server another process started.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import nbformat

NOTEBOOKS = Path(__file__).resolve().parent
REPO = NOTEBOOKS.parent
SOURCES = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))
WIDGET = "application/vnd.jupyter.widget-view+json"
# tqdm's bar, "label:  40%|████      | 2/5 [00:01<00:02, 1.9it/s]", or its counter without a total,
# "label: 3it [00:00, 21.5it/s]" (also "?it/s", "s/it")
PROGRESS = re.compile(r"\d+%\||\[\d+:\d\d(:\d\d)?(<[^,\]]*)?, *[^\]]*?(it/s|s/it)[^\]]*\]")
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def notebook_of(source: Path) -> nbformat.NotebookNode:
    """The notebook of a Jupytext source: its cells, stable ids (``<stem>-NN``), fixed metadata, no outputs."""
    import jupytext

    nb = jupytext.read(source)
    nb.metadata = nbformat.NotebookNode({"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}})
    for i, cell in enumerate(nb.cells):
        cell.id = f"{source.stem}-{i:02d}"
        cell.metadata = nbformat.NotebookNode()
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def is_progress(line: str) -> bool:
    r"""A progress bar's line (what a terminal shows last of its ``\r`` redraws)."""
    return bool(PROGRESS.search(line.rsplit("\r", 1)[-1]))


def strip_progress(nb: nbformat.NotebookNode) -> int:
    """Remove progress bars from ``nb``'s outputs in place; returns how many outputs it dropped or cut."""
    changed = 0
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        kept = []
        for out in cell.outputs:
            if WIDGET in out.get("data", {}):
                changed += 1
                continue
            if out.output_type == "stream":
                lines = [line for line in out.text.splitlines(keepends=True) if not is_progress(line)]
                text = "".join(line.rsplit("\r", 1)[-1] for line in lines)
                if text != out.text:
                    changed += 1
                if not text.strip():
                    continue
                out.text = text
            kept.append(out)
        cell.outputs = kept
    return changed


def relative_paths(nb: nbformat.NotebookNode, root: Path = REPO, home: Path = Path.home()) -> None:
    """In every text output, paths under ``root`` relative to it and others under ``home`` as ``~/...``.

    No machine's folder lands in a committed file (the installed datasets live under the home folder).
    """
    prefix, home_prefix = str(root) + os.sep, str(home) + os.sep

    def fix(value: object) -> object:
        if isinstance(value, str):
            return value.replace(prefix, "").replace(home_prefix, "~" + os.sep)
        if isinstance(value, list):
            return [fix(v) for v in value]
        return value

    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if "text" in out:
                out.text = fix(out.text)
            for mime, value in out.get("data", {}).items():
                if mime.startswith("text/") or mime == "application/json":
                    out.data[mime] = fix(value)


def execute(nb: nbformat.NotebookNode, timeout: int) -> None:
    """Run ``nb`` in a fresh python3 kernel in notebooks/, in small mode; raises on the first failing cell."""
    from nbclient import NotebookClient

    os.environ.pop("LYRA_NB_FULL", None)  # the kernel inherits this process's environment
    NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()


def code_key(source: str) -> str:
    """What a code cell does: its syntax tree without docstrings (comments are not in it); else its text.

    Two cells with the same key compute the same outputs, so an edit of comments and docstrings alone
    does not need the notebook to run again.  A ``%magic`` or ``!shell`` line counts as its text.
    """
    lines = [f"{line[:len(line) - len(line.lstrip())]}_ = {line.strip()!r}" if line.lstrip().startswith(("%", "!"))
             else line for line in source.splitlines()]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return source
    for node in ast.walk(tree):
        body = getattr(node, "body", None)  # the nodes with a statement list: module, def, class, if, for…
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    return ast.dump(tree)


def keep_outputs(nb: nbformat.NotebookNode, old: nbformat.NotebookNode) -> tuple[int, int]:
    """Give ``nb``'s code cells the outputs of ``old``'s cell of the same id where ``code_key`` agrees.

    Returns (cells given outputs, code cells).  The notebook metadata (kernel, language) is ``old``'s
    when every code cell kept its outputs, so the notebook reads as the run it came from.
    """
    before = {c.id: c for c in old.cells if c.cell_type == "code"}
    code = [c for c in nb.cells if c.cell_type == "code"]
    kept = 0
    for cell in code:
        previous = before.get(cell.id)
        if previous is not None and code_key(previous.source) == code_key(cell.source):
            cell.outputs, cell.execution_count = previous.outputs, previous.execution_count
            kept += 1
    if kept == len(code):
        nb.metadata = old.metadata
    return kept, len(code)


def sync(source: Path, *, run: bool, timeout: int, keep: bool = False) -> Path:
    """Write ``source``'s notebook beside it (executed when ``run``); returns its path.

    With ``keep`` (and not ``run``) the outputs of the notebook already there are kept where a cell's
    code is unchanged but for comments and docstrings (``keep_outputs``).
    """
    nb = notebook_of(source)
    target = source.with_suffix(".ipynb")
    if keep and not run and target.exists():
        kept, total = keep_outputs(nb, nbformat.read(target, as_version=4))
        print(f"{target.name}: outputs kept for {kept} of {total} code cells", flush=True)
    if run:
        execute(nb, timeout)
        strip_progress(nb)
        relative_paths(nb)
    nbformat.write(nb, target)
    return target


def _pick(names: list[str]) -> list[Path]:
    if not names:
        return SOURCES
    by_stem = {s.stem: s for s in SOURCES}
    picked = []
    for name in names:
        stem = Path(name).stem
        if stem not in by_stem:
            raise SystemExit(f"error: no notebook source {stem}.py in notebooks/; known: {', '.join(by_stem)}")
        picked.append(by_stem[stem])
    return picked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("names", nargs="*", help="notebooks to write (default: all)")
    parser.add_argument("--no-execute", action="store_true", help="write the cells without running them")
    parser.add_argument("--keep-outputs", action="store_true",
                        help="write the cells without running them, keeping each cell's outputs where only its "
                             "comments and docstrings changed")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds a cell may take (default 3600)")
    args = parser.parse_args(argv)
    # A user cache of this run's own (local server state, user caches): the outputs come from a cold
    # start and never from, or disturbed by, a local server another process started (and may stop).
    private_cache = tempfile.TemporaryDirectory(prefix="lyra-notebooks-")
    os.environ["LYRA_LAB_CACHE_DIR"] = private_cache.name
    for source in _pick(args.names):
        started = time.perf_counter()
        run = not (args.no_execute or args.keep_outputs)
        target = sync(source, run=run, timeout=args.timeout, keep=args.keep_outputs)
        print(f"wrote {target.relative_to(REPO)} ({time.perf_counter() - started:.0f} s)", flush=True)
    private_cache.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
