"""lyra-lab show RUN_DIR [PROBE_ID]: one probe across every pipeline of a run (retrieved, context, answer, verdicts).

PROBE_ID is the probe's id or a unique end of it (planted-q001 for <conversation>:planted-q001);
without it, the run's probe ids are listed with their questions.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from lyra_lab.commands._checks import Subparsers


def add_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Register ``lyra-lab show`` and its options on ``subparsers``."""
    p = subparsers.add_parser("show", help="one probe of a run: question, gold, evidence, and per pipeline what "
                                           "was retrieved, the context, the answer and the judges' verdicts",
                              description=__doc__)
    p.add_argument("run_dir", metavar="RUN_DIR", help="a run folder written by `lyra-lab run`")
    p.add_argument("probe_id", metavar="PROBE_ID", nargs="?", default=None,
                   help="a probe id of the run, or a unique end of one (planted-q001); "
                        "omitted: list the run's probe ids with their questions")
    p.add_argument("--pipeline", metavar="TEXT", default=None,
                   help="only pipelines whose label contains TEXT (e.g. '|bm25')")
    p.add_argument("--context-lines", type=int, default=40, metavar="N",
                   help="with --full: context lines shown per pipeline (default 40)")
    p.add_argument("--full", action="store_true",
                   help="every pipeline's hits, context, answer and verdicts (default: a page of at most 60 lines)")
    p.add_argument("--json", action="store_true", help="print the view as JSON")
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``lyra-lab show`` with the parsed ``args``; the exit code (0: done)."""
    import dataclasses
    import json

    from lyra_lab._registry import ConfigError
    from lyra_lab.commands._checks import run_folder
    from lyra_lab.experiments import inspect_probe

    run_dir = run_folder(args.run_dir, must_exist=True)
    args.log_path = run_dir / "log.jsonl"
    if args.context_lines < 0:
        raise ConfigError(f"--context-lines must be >= 0, got {args.context_lines}")
    if args.probe_id is None:
        return _list(run_dir, args.json)
    view = inspect_probe(run_dir, args.probe_id)
    if args.pipeline is not None:
        kept = tuple(p for p in view.pipelines if args.pipeline in p.pipeline)
        if not kept:
            names = ", ".join(sorted({p.pipeline for p in view.pipelines}))
            raise ConfigError(f"no pipeline of probe {view.probe_id!r} contains {args.pipeline!r}; pipelines: {names}")
        view = dataclasses.replace(view, pipelines=kept)
    if args.json:
        print(json.dumps(dataclasses.asdict(view), indent=2, default=str, ensure_ascii=False))
    elif args.full:
        print(view.render(context_lines=args.context_lines))
    else:
        print(view.page())
    return 0


def _list(run_dir: Path, as_json: bool) -> int:
    """Print the run's probes: id, conversation and question, one per line (or as JSON)."""
    import dataclasses
    import json

    from lyra_lab.experiments import run_probes

    probes = run_probes(run_dir)
    if as_json:
        print(json.dumps([dataclasses.asdict(p) for p in probes], indent=2, ensure_ascii=False))
        return 0
    width = max((len(p.probe_id) for p in probes), default=0)
    print(f"{len(probes)} probes in {run_dir} (show one: lyra-lab show {run_dir} PROBE_ID, or a unique end of the id)")
    for p in probes:
        print(f"  {p.probe_id:<{width}}  {p.question}")
    return 0
