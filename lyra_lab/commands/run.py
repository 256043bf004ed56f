"""lyra-lab run EXPERIMENT.toml: run (or resume) an experiment grid into a run folder."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from lyra_lab.commands._checks import Subparsers
    from lyra_lab.experiments import ExperimentSpec, RunOptions


def add_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Register ``lyra-lab run`` and its options on ``subparsers``."""
    p = subparsers.add_parser("run", help="run or resume an experiment grid (TOML) into a run folder",
                              description=__doc__)
    p.add_argument("experiment", metavar="EXPERIMENT.toml", help="the experiment file")
    p.add_argument("--run-dir", default=None, help="the run folder (default: runs/<experiment name>)")
    p.add_argument("--fresh", action="store_true",
                   help="start the run folder over, deleting its results and report (asks first on a terminal; "
                        "off one, needs --yes) (default: resume, skipping finished cells)")
    p.add_argument("--keep-degraded", action="store_true",
                   help="on resume, keep finished cells whose rows are degraded (a fallback taken or a call lost "
                        "for good) instead of running them again (default: run them again; the response cache "
                        "serves the calls that succeeded)")
    p.add_argument("--retry-failed", action="store_true",
                   help="on resume, run again the cells that failed for good (failed.<stage>.<reason> in their rows: "
                        "a bad request, a system that cannot start), which a plain resume keeps")
    p.add_argument("--no-report", action="store_true", help="do not write the report at the end")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--executor", choices=("serial", "threads", "processes", "ray"), default=None,
                   help="how cells run (default: the file's [run] executor, else serial or threads by max_cells); "
                        "processes: on local worker processes (every core for CPU-bound cells); ray: as Ray tasks")
    p.add_argument("--yes", action="store_true",
                   help="agree up front: to delete a run folder's results with --fresh, to send conversation text to "
                        "a non-local endpoint, and to a run above "
                        "[run] confirm_above_usd / confirm_above_minutes (without it, a run off a terminal stops)")
    p.add_argument("--confirm-above-usd", type=float, default=None, metavar="USD",
                   help="ask first when the plan costs more than this at list prices (default: [run] confirm_above_usd)")
    p.add_argument("--confirm-above-minutes", type=float, default=None, metavar="MIN",
                   help="ask first when the plan takes longer on this machine (default: [run] confirm_above_minutes)")
    p.add_argument("--no-plan", action="store_true",
                   help="start without the plan (nothing printed, nothing asked: remote endpoints still need --yes)")
    p.add_argument("--address", default=None, metavar="ADDR",
                   help="with --executor ray: join this Ray cluster (auto, host:6379, ray://host:10001) "
                        "instead of starting a local Ray")
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``lyra-lab run`` with the parsed ``args``; the exit code (0: done)."""
    from lyra_lab.commands._checks import bars_show, confirm_fresh, input_file, run_folder
    from lyra_lab.commands._validate import check_experiment
    from lyra_lab.experiments import ExperimentSpec, RunOptions

    spec = ExperimentSpec.from_toml(input_file(args.experiment, "experiment file"))
    if args.executor is not None:
        import dataclasses

        spec = dataclasses.replace(spec, executor=args.executor)
    run_dir = run_folder(Path(args.run_dir) if args.run_dir else Path("runs") / spec.name, must_exist=False,
                         fresh=args.fresh)
    check_experiment(spec)  # before the run folder exists: a bad config leaves nothing behind
    if args.fresh:
        confirm_fresh(run_dir, args.yes)  # finished work is deleted only with the user's agreement
    forecast = plan_and_ask(spec, run_dir, args)
    options = run_options(args, RunOptions(
        resume=not args.fresh, progress=not args.quiet, ray_address=args.address, keep_degraded=args.keep_degraded,
        retry_failed=args.retry_failed, forecast=forecast,
        status_line=not args.quiet and not bars_show()))  # bars show on a terminal with a width
    df = run_in_folder(spec, run_dir, args, options)
    return finish(run_dir, df, report=not args.no_report, compact=True)


def run_options(args: argparse.Namespace, options: RunOptions) -> RunOptions:
    """``options`` with the command's consent: ``--yes``, else the question on a terminal (the road asks it)."""
    import dataclasses

    from lyra_lab.commands._consent import ask_on_terminal

    return dataclasses.replace(options, yes=bool(args.yes), ask=ask_on_terminal)


def run_in_folder(spec: ExperimentSpec, run_dir: Path, args: argparse.Namespace, options: RunOptions) -> pd.DataFrame:
    """``run_experiment`` with the CLI's log path set; a new folder that gets no finished cell is removed."""
    from lyra_lab.experiments import run_experiment

    new = not run_dir.exists()
    args.log_path = run_dir / "log.jsonl"
    try:
        return run_experiment(spec, run_dir, options)
    except Exception:
        if new and run_dir.is_dir() and not any((run_dir / "rows").glob("*.jsonl")):
            shutil.rmtree(run_dir, ignore_errors=True)
        raise


def plan_and_ask(spec, run_dir: Path, args: argparse.Namespace) -> dict | None:
    """Print the run's plan and ask before a run above the confirm thresholds; the plan as data (None: no plan).

    Asks before a run above ``confirm_above_usd`` dollars or ``confirm_above_minutes`` minutes.  Where
    conversation text goes is asked on the road itself (``run_experiment``, with ``run_options``'s
    ``yes`` and ``ask``), for every command that runs cells.
    """
    from lyra_lab.commands._consent import agree
    from lyra_lab.experiments import Resume, forecast_text, plan

    if args.no_plan:
        return None
    forecast = plan(spec, None if args.fresh else Resume(run_dir, args.keep_degraded, args.retry_failed))
    print(forecast_text(forecast), flush=True)
    usd = args.confirm_above_usd if args.confirm_above_usd is not None else spec.confirm_above_usd
    minutes = args.confirm_above_minutes if args.confirm_above_minutes is not None else spec.confirm_above_minutes
    above = []
    if usd is not None and forecast.cost_usd.high > usd:
        above.append(f"up to ${forecast.cost_usd.high:.2f} at list prices (confirm above ${usd:g})")
    if minutes is not None and forecast.wall_s.mid > 60 * minutes:
        above.append(f"about {forecast.wall_s.mid / 60:.1f} min on this machine (confirm above {minutes:g} min)")
    if above:
        agree(f"this run takes {' and '.join(above)}.", "start it?", args.yes,
              "not starting a run above the confirm threshold: pass --yes to agree")
    return forecast.to_dict()


def compact_table(summary: pd.DataFrame) -> str:
    """The compact measures of a summary.csv frame as text that fits 100 columns.

    The pipelines are numbered and named first (with the probes each asked, and ``⚠ degraded (n)`` for a
    pipeline that fell back or lost calls); then one row per pipeline under the measures whose
    ``shown.compact`` names them, fair across memory kinds first (``lyra_lab.measures.MEASURES`` holds the
    order), and a row ``n`` with the values each mean was computed over (beside a mean when the
    pipelines' n differ).
    """
    import pandas as pd

    from lyra_lab._terminal import columns_table, human, wrap_line
    from lyra_lab.measures import Measure, shown_in

    measures = [c for c in shown_in("compact") if c in summary.columns]
    lines = ["pipelines (probes asked):"]
    for i, row in enumerate(summary.to_dict("records"), 1):
        degraded, asked = row.get("degraded"), row.get("n_probes")
        mark = f" ⚠ degraded ({int(degraded)})" if pd.notna(degraded) and degraded > 0 else ""
        asked = f"  ({int(asked):,})" if pd.notna(asked) else ""
        lines += wrap_line(f"{i:>3}  {row['pipeline']}{mark}{asked}")

    def cell(measure: str, value: float, n: float, own_n: bool) -> str:
        if value != value:
            return ""
        info = Measure.parse(measure).info
        quality = info is not None and info.kind == "quality"  # a share, read at 3 decimals
        text = f"{value:.3f}" if quality else human(float(value))
        return text + (f" ({int(n)})" if own_n and n == n else "")

    # the n of a mean that has a value (a measure with no value has n 0: nothing to show)
    ns = {m: (summary[f"{m}_n"] if f"{m}_n" in summary.columns else pd.Series(float("nan"), index=summary.index))
          .where(summary[m].notna()) for m in measures}
    varies = {m: ns[m].dropna().nunique() > 1 for m in measures}
    rows = [[cell(m, summary[m].iloc[i], ns[m].iloc[i], varies[m]) for m in measures] for i in range(len(summary))]
    counts = ["(each)" if varies[m] else ("" if ns[m].dropna().empty else f"{int(ns[m].dropna().iloc[0]):,}")
              for m in measures]
    labels = [str(i) for i in range(1, len(summary) + 1)] + ["n"]
    return "\n".join(lines + ["", columns_table(measures, rows + [counts], labels)])


def finish(run_dir: Path, df, report: bool = True, compact: bool = False) -> int:
    """Write the report, print the summary and where the files are; 1 if some cell failed.

    ``compact`` prints a few key columns instead of the whole summary.md.
    """
    failed = df.attrs.get("failed_cells", [])
    from lyra_lab._terminal import count

    print(f"run folder: {run_dir}  ({count(df['cell_id'].nunique() if len(df) else 0, 'cell')}, "
          f"{count(len(df), 'result row')})")
    if report and len(df):
        from lyra_lab.reports import write_report

        paths = write_report(run_dir)
        summary = next((p for p in paths if p.name == "summary.md"), None)
        table = next((p for p in paths if p.name == "summary.csv"), None)
        if compact and table is not None:
            import pandas as pd

            print(compact_table(pd.read_csv(table)))
            from lyra_lab.reports import run_planting_warnings, warning_lines

            for line in warning_lines(run_planting_warnings(run_dir)):  # the figures above are not about own turns
                print(line)
            print("(n: the values each mean was computed over, probes for quality and conversations for latency "
                  "and memory, beside a mean where pipelines differ)")
            print(f"full table with 95% CIs: {summary}")
        elif summary is not None:
            print(summary.read_text(encoding="utf-8"))
        print("wrote:")
        for path in [run_dir / "results.parquet", run_dir / "log.jsonl", *paths]:
            print(f"  {path}")
    for cell_id, error in failed:
        print(f"cell {cell_id} failed: {error}", file=sys.stderr)
    if failed:
        print(f"{len(failed)} cell(s) failed; run the same command again to retry them", file=sys.stderr)
        return 1
    return 0
