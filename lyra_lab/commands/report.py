"""lyra-lab report RUN_DIR: write the run's summary tables and plots into RUN_DIR/report/."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lyra_lab.commands._checks import Subparsers
    from lyra_lab.reports import WrittenReport


def add_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Register ``lyra-lab report`` and its options on ``subparsers``."""
    from lyra_lab.reports import LOCOMO_LABELS, BENCHMARK_TABLES

    p = subparsers.add_parser("report", help="summary tables (with 95%% CIs) and plots of a run folder",
                              description=__doc__)
    p.add_argument("run_dir", metavar="RUN_DIR", help="a run folder written by `lyra-lab run`")
    p.add_argument("--category-labels", choices=sorted(LOCOMO_LABELS), default=None,
                   help="label LoCoMo category numbers with this scheme (default: show the numbers)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--cluster", metavar="COLUMN", default=None,
                   help="resample whole clusters for the CIs, e.g. conversation_id (probes of one "
                        "conversation are correlated; default: resample probes)")
    p.add_argument("--table", choices=BENCHMARK_TABLES, default=None,
                   help="print the benchmark's own table instead of the report: locomo (F1 and judge accuracy by "
                        "category and overall, n in each cell) or longmemeval (accuracy by question type, "
                        "abstention apart, session recall_any@5/@10); also written to report/table_<name>.csv")
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``lyra-lab report`` with the parsed ``args``; the exit code (0: done)."""
    from lyra_lab._registry import ConfigError
    from lyra_lab.commands._checks import at_least_one, check_parquet, run_folder
    from lyra_lab.runs import ResultsFormatError
    from lyra_lab.reports import write_report

    at_least_one(args, "resamples")
    run_dir = run_folder(args.run_dir, must_exist=True)
    check_parquet(run_dir)
    args.log_path = run_dir / "log.jsonl"
    if args.table is not None:
        return print_table(run_dir, args.table, args.category_labels)
    try:
        paths = write_report(run_dir, category_scheme=args.category_labels,
                             n_resamples=args.resamples, seed=args.seed, cluster=args.cluster)
    except ResultsFormatError as exc:  # unreadable rows or missing columns: the user's input, not a bug
        raise ConfigError(str(exc)) from None
    print(report_digest(run_dir, paths))
    return 0


def report_digest(run_dir: Path, paths: WrittenReport) -> str:
    """What ``lyra-lab report`` prints: the headline and where the files are (the full tables are in summary.md).

    The headline is the one ``write_report`` put on the page (``WrittenReport.headline``), not read again.
    """
    folder = run_dir / "report"
    top = paths.headline
    lines = [f"report of {run_dir.name}"]
    if top is not None:
        lines.append(top.caption() + ":")
        lines += [f"  {i}. {row.text()}" for i, row in enumerate(top.rows, 1)]
    from lyra_lab._terminal import count

    kinds = {"CSV table": [p for p in paths if p.suffix == ".csv"], "figure": [p for p in paths if p.suffix == ".png"]}
    inside = [p.name for p in paths if p.suffix in (".md", ".html") and p.parent == folder]
    inside += [count(len(found), kind) for kind, found in kinds.items() if found]
    lines.append(f"wrote {folder}/: {', '.join(inside)}")
    lines.append(f"full tables with 95% CIs: {folder / 'summary.md'}")
    lines.append(f"open in a browser: {folder / 'report.html'}")
    return "\n".join(lines)


def print_table(run_dir: Path, name: str, labels: str | None) -> int:
    """Print the benchmark table ``name`` of ``run_dir`` and write it to ``report/table_<name>.csv``."""
    from lyra_lab._atomic import write_whole
    from lyra_lab._registry import ConfigError
    from lyra_lab.reports import TableError, benchmark_table
    from lyra_lab.runs import ResultsFormatError, load_results

    try:
        table = benchmark_table(load_results(run_dir), name, labels)
    except (ResultsFormatError, TableError) as exc:
        raise ConfigError(f"{run_dir}: {exc}") from None
    out = run_dir / "report" / f"table_{name}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    table.cells.to_csv(out, index=False)
    write_whole(out.with_suffix(".md"), table.markdown() + "\n")
    print(table.text())
    print(f"wrote: {out} and {out.with_suffix('.md').name} (the table as markdown)")
    return 0
