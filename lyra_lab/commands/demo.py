"""lyra-lab demo: the bundled demo experiment on the synthetic dataset, local model and the e5 embedder.

Runs lyra_lab/experiments/demo.toml (single-pass summaries, with or without the
raw turns kept beside them, each memory searched by dense, BM25 and hybrid
recall and by the oracle and full_context ceilings, over the 8 short synthetic
conversations of datasets/synthetic_demo.jsonl; the local model answers each
conversation's first probe from every pipeline's context) into runs/demo/,
writes the report (with retrieval and answering apart, the distance to the
ceilings and the frontier) and prints the summary table.  A second run resumes:
finished cells are skipped.
"""

from __future__ import annotations

import argparse
import time
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from lyra_lab._terminal import wrap_line

if TYPE_CHECKING:
    import pandas as pd

    from lyra_lab.commands._checks import Subparsers
    from lyra_lab.reports import Headline



def demo_spec_path() -> Path:
    """The demo's experiment file, shipped inside the package (``lyra_lab/experiments/demo.toml``)."""
    return Path(str(resources.files("lyra_lab.experiments") / "demo.toml"))


def add_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Register ``lyra-lab demo`` and its options on ``subparsers``."""
    p = subparsers.add_parser("demo", help="run the demo experiment (local model + e5 embeddings, synthetic data)",
                              description=__doc__)
    p.add_argument("--run-dir", default="runs/demo", help="the run folder (default: runs/demo)")
    p.add_argument("--fresh", action="store_true",
                   help="start over instead of resuming, deleting the folder's results (asks first on a terminal)")
    p.add_argument("--yes", action="store_true",
                   help="agree up front: with --fresh, to delete without asking, and to send conversation text "
                        "to a non-local endpoint (needed off a terminal)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``lyra-lab demo`` with the parsed ``args``; the exit code (0: done)."""
    from lyra_lab.commands._checks import bars_show, confirm_fresh, run_folder
    from lyra_lab.commands._validate import check_experiment
    from lyra_lab.commands.run import finish, run_in_folder, run_options
    from lyra_lab.experiments import ExperimentSpec, RunOptions
    from lyra_lab.experiments.grid import spec_label

    spec = ExperimentSpec.from_toml(demo_spec_path())
    if not spec.corpus.path.exists():
        raise FileNotFoundError(f"the demo dataset {spec.corpus.path} is missing (it ships in the source checkout)")
    run_dir = run_folder(args.run_dir, must_exist=False, fresh=args.fresh)
    check_experiment(spec)
    if args.fresh:
        confirm_fresh(run_dir, args.yes)
    print(f"lyra-lab demo: {len(spec.pipelines)} memory pipelines × {len(spec.recallers)} recallers "
          f"on {spec.corpus.path.name}, backend {', '.join(map(_backend_words, spec.backends))}, "
          f"embedder {', '.join(map(spec_label, spec.embedders))}")
    start = time.perf_counter()
    options = run_options(args, RunOptions(resume=not args.fresh, progress=not args.quiet,
                                           status_line=not args.quiet and not bars_show()))  # bars show on a terminal with a width
    df = run_in_folder(spec, run_dir, args, options)
    code = finish(run_dir, df, compact=True)
    for line in comparison_lines(run_dir):
        print(line)
    print(f"demo finished in {time.perf_counter() - start:.0f} s")
    return code


def comparison_lines(run_dir: Path) -> list[str]:
    """What the demo ends on: the report's headline and its paired comparisons in one verdict count each."""
    import pandas as pd

    from lyra_lab.reports import run_headline

    report = run_dir / "report"
    if not (report / "summary.csv").is_file():
        return []
    paired = report / "paired_comparisons.csv"
    return headline_lines(run_headline(run_dir), pd.read_csv(paired) if paired.is_file() else None)


def headline_lines(head: Headline | None, paired: pd.DataFrame | None, alpha: float = 0.05) -> list[str]:
    """``head``'s caption and rows, then how ``paired`` (``compare_all``'s table) judged each pipeline.

    The verdicts are the report's own words (``verdict``): "✗ worse" only where the Holm-adjusted
    p is below ``alpha``.
    """
    from collections import Counter

    from lyra_lab.reports import verdict

    lines: list[str] = []
    if head is not None:
        lines += wrap_line(f"headline: {head.caption()}:")
        for i, row in enumerate(head.rows, 1):
            lines += wrap_line(f"  {i}. {row.text()}")
    if paired is None or len(paired) < 2:
        return lines
    others = paired[paired["pipeline"] != paired["best"]]
    counts = Counter(verdict(row, alpha, len(others)) for _, row in others.iterrows())
    said = ", ".join(f"{words} ({n})" for words, n in counts.most_common())
    metric = f"by {paired['metric'].iloc[0]} " if "metric" in paired.columns else ""  # may differ from the headline's
    lines += wrap_line(f"paired with the best {metric}on {int(others['n_probes'].max())} probes "
                       f"({int(others['n_clusters'].max())} conversations resampled; Holm over {len(others)} "
                       f"comparisons, α = {alpha:g}):")
    return [*lines, *wrap_line(f"  {said}")]


def _backend_words(spec: object) -> str:
    """A backend spec as a person reads it: its label, and its window when the spec sets one."""
    from lyra_lab.experiments.grid import spec_label

    label = spec_label(spec)  # type: ignore[arg-type]
    window = spec.get("context_window") if isinstance(spec, dict) else None
    return f"{label} (a {window:,}-token window)" if isinstance(window, int) else label
