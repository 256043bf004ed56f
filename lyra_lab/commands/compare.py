"""lyra-lab compare RUN_A [RUN_B]: the pipelines of two run folders, paired on the probes both asked (Holm-corrected).

With one folder: its pipelines among themselves, on the metric asked for. Writes
paired_comparisons.csv and paired_differences.png (the report's "Paired comparisons" table and
figure) and prints the table; when either run has a degraded pipeline (cells that fell back or lost
calls), one warning line first, and the pipeline marked ⚠ degraded (n).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lyra_lab.commands._checks import Subparsers


def add_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Register ``lyra-lab compare`` and its options on ``subparsers``."""
    p = subparsers.add_parser("compare", help="pipelines of two run folders (or one) compared paired on the "
                                              "probes both asked, Holm-corrected", description=__doc__)
    p.add_argument("run_a", metavar="RUN_A", help="a run folder written by `lyra-lab run`, or a file written by "
                                                  "`lyra-lab export`")
    p.add_argument("run_b", metavar="RUN_B", nargs="?", default=None,
                   help="a second run folder of the same corpus (omit: compare RUN_A's pipelines among themselves)")
    p.add_argument("--metric", metavar="M", default=None,
                   help="a per-probe metric both runs scored (default: the report's headline metric)")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="where the CSV and figure go (default: RUN_A/compare, or compare-A-vs-B beside RUN_A)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``lyra-lab compare`` with the parsed ``args``; the exit code (0: done)."""
    from lyra_lab._registry import ConfigError
    from lyra_lab.commands._checks import at_least_one, check_parquet, run_folder
    from lyra_lab.reports import compare_runs, run_planting_warnings, warning_lines
    from lyra_lab.runs import ResultsFormatError

    at_least_one(args, "resamples")
    import tempfile

    from lyra_lab.runs import is_export, rows_folder

    unpacked = tempfile.TemporaryDirectory(prefix="lyra-compare-")  # export files read as run folders
    given = [f for f in (args.run_a, args.run_b) if f is not None]
    if args.out is None and is_export(given[0]):
        args.out = str(Path(given[0]).with_suffix("")) + "-compare"
    folders = [rows_folder(f, Path(unpacked.name) / f"{i}-{Path(f).stem}") if is_export(f)
               else run_folder(f, must_exist=True) for i, f in enumerate(given)]
    if len(folders) == 2 and folders[0].resolve() == folders[1].resolve():
        raise ConfigError(f"{folders[0]} is given twice; give one folder to compare its pipelines among themselves")
    for folder in folders:
        check_parquet(folder)
    args.log_path = folders[0] / "log.jsonl"
    try:
        result = compare_runs(*folders, metric=args.metric, out=args.out, n_resamples=args.resamples,
                              seed=args.seed)
    except ResultsFormatError as exc:  # unreadable rows or missing columns: the user's input, not a bug
        raise ConfigError(str(exc)) from None
    for line in warning_lines([w for folder in folders for w in run_planting_warnings(folder)]):
        print(line)
    print(result.markdown())
    if result.section.files:
        print("wrote:")
        for path in result.section.files:
            print(f"  {Path(path)}")
    return 0
