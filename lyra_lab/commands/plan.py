"""lyra-lab plan EXPERIMENT.toml: what a run will do and cost before it starts.

Per cell and in total: conversations, turns, probes; per embedder the texts and tokens to
embed and how many the shared embedding cache already holds; per backend the LLM calls and
prompt/completion tokens (exact where the strategies' calls do not depend on what the model
writes, low–high where they do), the dollars at list prices, a wall-time estimate from this
machine's calibration of each model (kept in the user cache; --calibrate measures again),
and every place conversation text would reach (backends, embedders, judges, memory services, the
processes memory systems start).  On a run folder, the cells a resume would run, and why (degraded,
failed for good with --retry-failed).  It runs nothing outside lyra-lab's process: a memory system is
forecast from what it declares.  lyra-lab run prints the same first.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lyra_lab.commands._checks import Subparsers


def add_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Register ``lyra-lab plan`` and its options on ``subparsers``."""
    p = subparsers.add_parser("plan", help="what a run will embed, call, cost and take, before it starts",
                              description=__doc__)
    p.add_argument("experiment", metavar="EXPERIMENT.toml", help="the experiment file")
    p.add_argument("--run-dir", default=None,
                   help="the run folder it would resume (default: runs/<experiment name>; its finished cells "
                        "are not counted)")
    p.add_argument("--fresh", action="store_true", help="plan a fresh run (count finished cells too)")
    p.add_argument("--keep-degraded", action="store_true",
                   help="plan a resume that keeps degraded cells (as lyra-lab run --keep-degraded)")
    p.add_argument("--retry-failed", action="store_true",
                   help="plan a resume that runs the cells that failed for good again (as lyra-lab run --retry-failed)")
    p.add_argument("--calibrate", action="store_true",
                   help="measure this machine's model speeds again (default: when missing or older than 30 days)")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``lyra-lab plan`` with the parsed ``args``; the exit code (0: done)."""
    from lyra_lab.commands._checks import input_file
    from lyra_lab.commands._validate import check_experiment
    from lyra_lab.experiments import ExperimentSpec, Resume, forecast_text, plan

    spec = ExperimentSpec.from_toml(input_file(args.experiment, "experiment file"))
    check_experiment(spec)
    run_dir = None if args.fresh else Path(args.run_dir) if args.run_dir else Path("runs") / spec.name
    resume = None if run_dir is None else Resume(run_dir, args.keep_degraded, args.retry_failed)
    forecast = plan(spec, resume, calibrate=args.calibrate)
    if args.json:
        print(json.dumps(forecast.to_dict(), indent=1, default=str))
    else:
        print(forecast_text(forecast))
    return 0
