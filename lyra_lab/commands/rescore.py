"""lyra-lab rescore FILE --run-dir DIR: rebuild an exported run in a new folder, paying only for what is new.

The run's LLM answers come from the file (no call); its rows must equal the exported ones
(a difference is printed and the exit code is 1). The rows of memory systems, and of cells that
were degraded or failed, come from the file as they are (nothing is sent to a system). --scorer
and --score-at-tokens re-score without any LLM call; each --judge adds a judge, whose calls (one
per answer) are new, as are those of cells the file has no rows for: the plan printed first
counts them. Text goes to a non-local endpoint only with consent (--yes, or asked on a terminal).
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lyra_lab.commands._checks import Subparsers


def add_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Register ``lyra-lab rescore`` and its options on ``subparsers``."""
    p = subparsers.add_parser("rescore", help="rebuild an exported run in a new folder (no LLM call for what the "
                                              "file holds)", description=__doc__)
    p.add_argument("file", metavar="FILE", help="a file written by `lyra-lab export`")
    p.add_argument("--run-dir", metavar="DIR", required=True, help="the new run folder")
    p.add_argument("--scorer", default=None, help="score the answers with this QA scorer (e.g. locomo)")
    p.add_argument("--judge", metavar="BACKEND[:PROMPT]", action="append", default=[],
                   help="add a judge on this backend (a preset name, or a backend table as JSON), "
                        "with this judge prompt (default: the default judge prompt); repeatable")
    p.add_argument("--score-at-tokens", metavar="B,B,...", default=None,
                   help="the equal-budget scoring budgets in tokens, e.g. 256,512")
    p.add_argument("--plan", action="store_true", help="print the plan and stop")
    p.add_argument("--yes", action="store_true",
                   help="agree up front to send conversation text to a non-local endpoint (a judge's, or a "
                        "backend's for calls the file lacks); without it, a rescore off a terminal stops")
    return p


def _judge(text: str) -> dict[str, object]:
    from lyra_lab.commands import UsageError

    if text.lstrip().startswith("{"):
        try:
            backend, _, prompt = json.loads(text), "", ""
        except ValueError:
            raise UsageError(f"--judge {text}: not valid JSON") from None
    else:
        backend, _, prompt = text.partition(":")
    judge: dict[str, object] = {"backend": backend}
    if prompt:
        judge["prompt"] = prompt
    return judge


def run(args: argparse.Namespace) -> int:
    """Run ``lyra-lab rescore`` with the parsed ``args``; the exit code (0: rows as exported, or changes applied)."""
    from lyra_lab.commands import UsageError
    from lyra_lab.commands._checks import input_file, run_folder
    from lyra_lab.commands.run import run_options
    from lyra_lab.experiments import Changes, RunOptions, rescore, rescore_plan

    path = input_file(args.file)
    run_dir = run_folder(args.run_dir, must_exist=False)
    budgets = None
    if args.score_at_tokens is not None:
        try:
            budgets = tuple(int(b) for b in args.score_at_tokens.split(",") if b.strip())
        except ValueError:
            raise UsageError(f"--score-at-tokens {args.score_at_tokens}: expected integers, e.g. 256,512") from None
    changes = Changes(args.scorer, tuple(_judge(j) for j in args.judge), budgets)
    print("\n".join(rescore_plan(path, run_dir, changes).lines()), flush=True)  # what is new, before it runs
    if args.plan:
        return 0
    args.log_path = run_dir / "log.jsonl"
    result = rescore(path, run_dir, changes, run_options(args, RunOptions(progress=False)))  # consent on the road
    print(f"rebuilt in {run_dir}: {len(result.rows)} rows")  # the folder on a line of its own: it may be long
    print(f"LLM calls paid: {result.total_paid}"
          + (f" ({', '.join(f'{k} {v}' for k, v in sorted(result.paid_calls.items()))})" if result.paid_calls else ""))
    if result.compared:
        if result.differences:
            print("rows differ from the export's:")
            for line in result.differences:
                print(f"  {line}")
            return 1
        print("rows identical to the export's (time measured on the machine left out)")
    return 0
