"""lyra-lab plan EXPERIMENT.toml: what a run will do and cost before it starts.

Per cell and in total: conversations, turns, probes; per embedder the texts and tokens to
embed and how many the shared embedding cache already holds; per backend the LLM calls and
prompt/completion tokens (exact where the strategies' calls do not depend on what the model
writes, low–high where they do), the dollars at list prices, a wall-time estimate from this
machine's calibration of each model (kept in the user cache; --calibrate measures again),
and which endpoints would receive conversation text.  lyra-lab run prints the same first.
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
    p.add_argument("--calibrate", action="store_true",
                   help="measure this machine's model speeds again (default: when missing or older than 30 days)")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``lyra-lab plan`` with the parsed ``args``; the exit code (0: done)."""
    from lyra_lab.commands._checks import input_file
    from lyra_lab.commands._validate import check_experiment
    from lyra_lab.experiments import ExperimentSpec, forecast_text, plan

    spec = ExperimentSpec.from_toml(input_file(args.experiment, "experiment file"))
    check_experiment(spec)
    run_dir = None if args.fresh else Path(args.run_dir) if args.run_dir else Path("runs") / spec.name
    forecast = plan(spec, run_dir, calibrate=args.calibrate)
    if args.json:
        print(json.dumps(forecast.to_dict(), indent=1, default=str))
    else:
        print(forecast_text(forecast))
    return 0
