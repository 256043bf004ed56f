"""lyra-lab export RUN_DIR --out FILE: one file anyone can re-score the run from.

The zip holds the experiment file, the run's spec, environment, log and rows, the corpus it
replayed, every LLM response its cache holds, its embedders' identities and a manifest with
the sha256 of each member. No secret goes in: URLs lose user:password and credential-like
query values, and the value of every credential-like environment variable is masked. The
corpus is in the file: share it as you would share the corpus.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lyra_lab.commands._checks import Subparsers


def add_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Register ``lyra-lab export`` and its options on ``subparsers``."""
    p = subparsers.add_parser("export", help="write a run into one file anyone can re-score (`lyra-lab rescore`)",
                              description=__doc__)
    p.add_argument("run_dir", metavar="RUN_DIR", help="a run folder written by `lyra-lab run`")
    p.add_argument("--out", metavar="FILE", required=True, help="the file to write (a zip)")
    p.add_argument("--experiment", metavar="FILE", default=None,
                   help="the experiment file (default: the one the run recorded as its source; a run built in "
                        "Python from a dict keeps its own, experiment.json)")
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``lyra-lab export`` with the parsed ``args``; the exit code (0: done)."""
    from lyra_lab.commands._checks import run_folder
    from lyra_lab.runs import export_run

    run_dir = run_folder(args.run_dir, must_exist=True)
    args.log_path = run_dir / "log.jsonl"
    manifest = export_run(run_dir, args.out, args.experiment)
    print(f"wrote {args.out}: run {manifest['run']}, {len(manifest['files'])} files, "
          f"{manifest['responses']} cached LLM responses")
    if manifest["cache_mode"] != "run":
        print(f"note: the run kept its responses in the {manifest['cache_mode']!r} cache, not in its folder; "
              "a rescore calls the LLM for them")
    for entry in manifest["embedders"]:
        print(f"embedder {entry['spec']}: vectors {entry['vectors']}")
    from lyra_lab.reports import run_planting_warnings, warning_lines

    for line in warning_lines(run_planting_warnings(run_dir)):  # the corpus in the file carries it too
        print(line)
    return 0
