"""The README's figure: the demo's quality-against-context-tokens plot, copied from its report.

    python benchmarks/readme_figure.py            # runs (or resumes) `lyra-lab demo`, then copies the figure
    python benchmarks/readme_figure.py --run-dir runs/demo --no-run   # copy from a demo run you have

The figure in ``docs/figures/`` is a benchmark output, never drawn by hand: rerun this after a
change to the demo grid or to the report's figures, and commit the PNG it writes.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIGURE = "quality_vs_context_tokens.png"
TARGET = REPO / "docs" / "figures" / f"demo_{FIGURE}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", default="runs/demo", help="the demo's run folder (default: runs/demo)")
    parser.add_argument("--no-run", action="store_true", help="copy from an existing run; do not run the demo")
    args = parser.parse_args()
    run_dir = Path(args.run_dir)
    if not args.no_run:
        subprocess.run([sys.executable, "-m", "lyra_lab.cli", "demo", "--quiet", "--run-dir", str(run_dir)], check=True)
    source = run_dir / "report" / FIGURE
    if not source.is_file():
        sys.exit(f"error: {source}: no such figure (run the demo first, or drop --no-run)")
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, TARGET)
    print(f"{source} -> {TARGET.relative_to(REPO)}")


if __name__ == "__main__":
    main()
