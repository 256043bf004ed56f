"""lyra-lab view [RUNS_DIR]: one page over a folder of runs — spec, status, headline figures with n, links.

Writes RUNS_DIR/index.html (static: no server, no script, relative links; it opens offline) and
prints one line per run. --open shows it in the default browser.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lyra_lab.commands._checks import Subparsers


def add_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Register ``lyra-lab view`` and its options on ``subparsers``."""
    p = subparsers.add_parser("view", help="a page over a folder of runs: spec, status (finished/partial/failed "
                                           "cells), headline figures with n, links to each report",
                              description=__doc__)
    p.add_argument("runs_dir", metavar="RUNS_DIR", nargs="?", default="runs",
                   help="a folder of run folders (default: runs), or one run folder")
    p.add_argument("--out", metavar="FILE", default=None, help="where to write the page (default: RUNS_DIR/index.html)")
    p.add_argument("--open", action="store_true", help="open the page in the default browser")
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``lyra-lab view`` with the parsed ``args``; the exit code (0: done)."""
    from pathlib import Path

    from lyra_lab.commands._errors import UsageError
    from lyra_lab.reports import warning_lines, write_index

    root = Path(args.runs_dir)
    if not root.exists():
        raise UsageError(f"folder of runs {root} does not exist")
    if not root.is_dir():
        raise UsageError(f"folder of runs {root} is a file, not a folder")
    if args.out is not None and Path(args.out).is_dir():
        raise UsageError(f"--out {args.out} is a folder; give a file name (e.g. {Path(args.out) / 'index.html'})")
    try:
        page = write_index(root, args.out)
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None
    for entry in page.runs:
        status = entry.error or (entry.status.describe() if entry.status else "")
        state = entry.status.state if entry.status and not entry.error else "unreadable"
        top = entry.headline.rows[0] if entry.headline is not None and entry.headline.rows else None
        best = f"; best {entry.headline.metric} {top.mean:.3f} (n={top.n})" if entry.headline and top else ""
        flag = f"; ⚠ degraded: {len(entry.degraded)} pipeline(s) fell back or lost calls" if entry.degraded else ""
        print(f"{entry.name}: {state}, {status}{flag}{best}")
        for line in warning_lines(entry.planted_warnings):
            print(f"  {line}")
    print(f"wrote: {page.path}")
    if args.open:
        import webbrowser

        webbrowser.open(page.path.resolve().as_uri())
    return 0
