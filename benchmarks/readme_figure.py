"""The README's figure and its sentence: the demo's quality-against-context-tokens plot and what it shows.

    python benchmarks/readme_figure.py            # runs (or resumes) `lyra-lab demo`, then copies/rewrites
    python benchmarks/readme_figure.py --run-dir runs/demo --no-run   # from a demo run you have

The figure in ``docs/figures/`` is a benchmark output, never drawn by hand, and so is the README's
"What it shows" paragraph: this script copies the figure, writes ``docs/figures/demo_headline.csv``
(the lead metric per pipeline from the report's ``metrics.csv``, joined with its row of
``paired_comparisons.csv``) and rewrites the README's paragraph between the ``demo-sentence``
markers from that file (``demo_sentence``).  ``tests/docs/test_readme_demo.py`` checks that the
README holds what ``demo_sentence`` says of the committed CSV.  Rerun this after a change to the
demo grid, its dataset or the report, and commit the PNG, the CSV and the README.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
FIGURE = "quality_vs_context_tokens.png"
TARGET = REPO / "docs" / "figures" / f"demo_{FIGURE}"
HEADLINE = REPO / "docs" / "figures" / "demo_headline.csv"
README = REPO / "README.md"
BEGIN = "<!-- demo-sentence: written by benchmarks/readme_figure.py from docs/figures/demo_headline.csv -->"
END = "<!-- /demo-sentence -->"
ALPHA = 0.05
WIDTH = 100


def headline_table(report: Path) -> pd.DataFrame:
    """The lead metric per pipeline (mean, CI, n) with its paired comparison to the best, from ``report``."""
    paired = pd.read_csv(report / "paired_comparisons.csv")
    metric = str(paired["metric"].iloc[0])
    metrics = pd.read_csv(report / "metrics.csv")
    own = metrics.loc[metrics["metric"] == metric, ["pipeline", "mean", "ci_low", "ci_high", "n"]]
    diff = paired[["pipeline", "best", "metric", "difference", "ci_low", "ci_high", "p_holm", "n_probes",
                   "n_clusters"]].rename(columns={"ci_low": "diff_ci_low", "ci_high": "diff_ci_high"})
    return diff.merge(own, on="pipeline", how="left", validate="one_to_one")


def _raw(pipeline: str) -> bool:
    """Whether a pipeline label keeps raw turns beside its summaries (``...+raw=yes|dense``)."""
    return "+raw=yes" in pipeline.partition("|")[0]


def _span(values: pd.Series) -> str:
    """``"62–81%"`` (or ``"81%"`` when every value rounds the same) of shares in [0, 1]."""
    low, high = round(100 * values.min()), round(100 * values.max())
    return f"{low}%" if low == high else f"{low}–{high}%"


def demo_sentence(table: pd.DataFrame, alpha: float = ALPHA) -> str:
    """What the demo shows, in words, from ``headline_table``'s rows (wrapped to ``WIDTH`` columns)."""
    metric = str(table["metric"].iloc[0])
    best = table[table["pipeline"] == table["best"]].iloc[0]
    n, clusters = int(best["n"]), int(table["n_clusters"].max())
    raw, alone = table[table["pipeline"].map(_raw)], table[~table["pipeline"].map(_raw)]
    worse = table[(table["p_holm"] < alpha) & (table["difference"] < 0)]
    text = (f"What it shows ({metric}, mean and 95% CI over probes): with the tiny local model's summaries "
            f"alone, the answer is in the first 512 context tokens for {_span(alone['mean'])} of the {n} "
            f"answerable probes; with raw turns kept beside them, {_span(raw['mean'])} (best: "
            f"`{best['pipeline']}`, {best['mean']:.2f} [{best['ci_low']:.2f}, {best['ci_high']:.2f}]). ")
    if worse.empty:
        text += (f"No pipeline is worse than the best after Holm's correction at α = {alpha:g} "
                 f"(paired over {clusters} conversations).")
    else:
        gaps = -worse["difference"]
        gap = f"{gaps.min():.2f}" if round(gaps.min(), 2) == round(gaps.max(), 2) else \
            f"{gaps.min():.2f}–{gaps.max():.2f}"
        text += (f"{len(worse)} of the {len(table) - 1} other pipelines are worse than the best by {gap}, "
                 f"each difference holding after Holm's correction (adjusted p ≤ {worse['p_holm'].max():.3f}, "
                 f"paired over {clusters} conversations).")
    return textwrap.fill(text, WIDTH, break_on_hyphens=False, break_long_words=False)


def readme_block(readme: str) -> str:
    """The text between the README's ``demo-sentence`` markers (ValueError when they are missing)."""
    match = re.search(re.escape(BEGIN) + r"\n(.*?)\n" + re.escape(END), readme, flags=re.S)
    if match is None:
        raise ValueError(f"README.md has no {BEGIN!r} ... {END!r} block")
    return match.group(1)


def with_sentence(readme: str, sentence: str) -> str:
    """``readme`` with its ``demo-sentence`` block replaced by ``sentence``."""
    old = readme_block(readme)
    return readme.replace(f"{BEGIN}\n{old}\n{END}", f"{BEGIN}\n{sentence}\n{END}")


def main() -> None:
    """Copy the demo run's figure and headline table, and rewrite the README's demo sentence."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", default="runs/demo", help="the demo's run folder (default: runs/demo)")
    parser.add_argument("--no-run", action="store_true", help="copy from an existing run; do not run the demo")
    args = parser.parse_args()
    run_dir = Path(args.run_dir)
    if not args.no_run:
        subprocess.run([sys.executable, "-m", "lyra_lab.cli", "demo", "--quiet", "--run-dir", str(run_dir)], check=True)
    report = run_dir / "report"
    for name in (FIGURE, "paired_comparisons.csv", "metrics.csv"):
        if not (report / name).is_file():
            sys.exit(f"error: {report / name}: no such file (run the demo first, or drop --no-run)")
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(report / FIGURE, TARGET)
    table = headline_table(report)
    table.to_csv(HEADLINE, index=False)
    README.write_text(with_sentence(README.read_text(encoding="utf-8"), demo_sentence(table)), encoding="utf-8")
    print(f"{report / FIGURE} -> {TARGET.relative_to(REPO)}")
    print(f"{report} -> {HEADLINE.relative_to(REPO)}, and README.md's demo sentence:")
    print(demo_sentence(table))


if __name__ == "__main__":
    main()
