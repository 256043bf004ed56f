"""lyra-lab datasets: fetch public benchmark files (LoCoMo, LongMemEval), checked against pinned checksums.

Usage::

    lyra-lab datasets list                       # what lyra-lab knows, and where each file is found
    lyra-lab datasets get locomo                 # download from the benchmark's own repository
    lyra-lab datasets get locomo --from FILE     # install a copy you already have (offline, CI)
    lyra-lab datasets path locomo                # print the file's path (for other commands)

Every installed file has the pinned SHA-256; a file that does not is refused in one
line and nothing is installed. Commands, tests, notebooks and experiment files
(``[corpus] path = "dataset:locomo"``) then find it: the dataset's environment
variable (``LYRA_LOCOMO``) when set, else the installed copy.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from lyra_lab.commands._errors import UsageError
from lyra_lab.datasets import CATALOG, data_dir, find, install, path

if TYPE_CHECKING:
    from lyra_lab.commands._checks import Subparsers


def add_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Register ``lyra-lab datasets`` and its options on ``subparsers``."""
    parser = subparsers.add_parser("datasets", help="fetch public benchmark files (LoCoMo, LongMemEval), checked",
                                   description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="datasets_command", metavar="ACTION", required=True)
    sub.add_parser("list", help="the datasets lyra-lab knows and where each is found")
    get = sub.add_parser("get", help="download a dataset (or install --from a copy), checking its pinned sha256")
    get.add_argument("names", nargs="+", metavar="NAME", choices=list(CATALOG), help=", ".join(CATALOG))
    get.add_argument("--from", dest="source", metavar="FILE", help="install this copy instead of downloading")
    get.add_argument("--no-progress", action="store_true", help="no download progress bar")
    where = sub.add_parser("path", help="print where a dataset's file is found (exit 2 if it is not)")
    where.add_argument("name", metavar="NAME", choices=list(CATALOG), help=", ".join(CATALOG))
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``lyra-lab datasets`` with the parsed ``args``; the exit code (0: done)."""
    if args.datasets_command == "list":
        return _list()
    if args.datasets_command == "path":
        print(path(args.name))
        return 0
    if args.source is not None and len(args.names) > 1:
        raise UsageError("lyra-lab datasets get: --from installs one file; name one dataset")
    for name in args.names:
        done = install(name, source=args.source, progress=not args.no_progress)
        ds = done.dataset
        print(f"{ds.name}: {done.how} {done.path} ({ds.size:,} bytes, sha256 {ds.sha256[:12]}…, {ds.license})")
        shadow = find(name)
        if shadow is not None and shadow != done.path:
            print(f"  note: {ds.env_var} is set, so lyra-lab reads {shadow} instead")
    return 0


def _list() -> int:
    print(f"data folder: {data_dir()}")
    for ds in CATALOG.values():
        found = find(ds.name)
        print(f"{ds.name:<19} {ds.size / 1e6:>8,.1f} MB  {found if found else 'not installed'}")
        print(f"{'':<19} {ds.title}; {ds.license}; env {ds.env_var}")
    return 0
