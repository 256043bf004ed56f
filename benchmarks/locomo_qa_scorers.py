"""One LoCoMo QA figure under two scorers: SQuAD token F1 and LoCoMo's own rules.

The same answers are scored twice.  The grid runs once with ``[qa] scorer = "squad"``
and once with ``scorer = "locomo"``; both runs share a response cache, so the second
run pays no model call and its answers are the first run's, word for word (the script
prints each run's cache hits).  Recall is bm25 over raw turns,
k = 10; answers come from the bundled local model (SmolLM2-135M) by default.

    python benchmarks/locomo_qa_scorers.py --conversations 2 --max-probes 40 --out runs/locomo-qa

Prints qa_f1 per LoCoMo category under each scorer (mean, 95% CI clustered by
conversation, n), the paired difference, and writes ``scorers.png`` and ``scorers.csv``.
"""

from __future__ import annotations

import argparse
import os
import textwrap
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from lyra_lab import datasets  # noqa: E402

LOCOMO = datasets.find("locomo") or datasets.installed_path("locomo")  # `lyra-lab datasets get locomo` installs it
LABELS = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"}


def experiment(path: Path, locomo: Path, scorer: str, conversations: int, max_probes: int, backend: str) -> None:
    path.write_text(textwrap.dedent(f"""
        name = "locomo-qa-{scorer}"
        [corpus]
        path = "{locomo}"
        conversations = {conversations}
        max_probes = {max_probes}
        categories = [1, 2, 3, 4]
        [grid]
        chunkers = [{{ name = "turn_window", max_turns = 1 }}]
        recallers = ["bm25"]
        [run]
        backends = ["{backend}"]
        embedders = ["none"]
        ks = [10]
        cache = "user"
        [qa]
        enabled = true
        scorer = "{scorer}"
    """), encoding="utf-8")


def ci95(values: pd.Series, clusters: pd.Series) -> tuple[float, float]:
    """95% bootstrap CI of the mean, resampling conversations; probes when there is only one conversation."""
    from lyra_lab.stats import bootstrap_ci, cluster_bootstrap_ci

    ci = cluster_bootstrap_ci(values, clusters, n_resamples=2000) if clusters.nunique() > 1 else \
        bootstrap_ci(values, n_resamples=2000)
    return ci.low, ci.high


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--locomo", type=Path, default=LOCOMO)
    ap.add_argument("--conversations", type=int, default=2)
    ap.add_argument("--max-probes", type=int, default=40, help="probes per conversation (round-robin over categories)")
    ap.add_argument("--backend", default="local")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("LYRA_LAB_CACHE_DIR", str(args.out / "cache"))

    from lyra_lab.experiments import RunOptions, run_experiment

    frames = {}
    for scorer in ("squad", "locomo"):
        toml = args.out / f"{scorer}.toml"
        experiment(toml, args.locomo.resolve(), scorer, args.conversations, args.max_probes, args.backend)
        t0 = time.perf_counter()
        rows = run_experiment(toml, args.out / f"run-{scorer}", RunOptions(resume=False))
        hits = rows.loc[rows["metric"] == "cached_calls", "value"].sum()
        print(f"{scorer:<7} run {time.perf_counter() - t0:7.1f} s, {hits:.0f} calls answered from the cache")
        frames[scorer] = rows[rows["metric"] == "qa_f1"][["probe_id", "conversation_id", "category", "value"]]

    both = frames["squad"].merge(frames["locomo"], on=["probe_id", "conversation_id", "category"],
                                 suffixes=("_squad", "_locomo"))
    both["category"] = both["category"].astype(str)
    table = []
    for cat, g in [*sorted(both.groupby("category")), ("all 1-4", both)]:
        row = {"category": f"{cat} {LABELS.get(cat, '')}".strip(), "n": len(g),
               "conversations": g["conversation_id"].nunique()}
        for s in ("squad", "locomo"):
            lo, hi = ci95(g[f"value_{s}"], g["conversation_id"])
            row.update({f"{s}": g[f"value_{s}"].mean(), f"{s}_lo": lo, f"{s}_hi": hi})
        diff = g["value_locomo"] - g["value_squad"]
        row["locomo-squad"] = diff.mean()
        row["diff_lo"], row["diff_hi"] = ci95(diff, g["conversation_id"])
        table.append(row)
    result = pd.DataFrame(table)
    result.to_csv(args.out / "scorers.csv", index=False)
    with pd.option_context("display.width", 200, "display.float_format", "{:.3f}".format):
        print(result.to_string(index=False))

    fig, ax = plt.subplots(figsize=(7.5, 4))
    x = np.arange(len(result))
    for i, (s, color) in enumerate((("squad", "#4c72b0"), ("locomo", "#dd8452"))):
        ax.bar(x + (i - 0.5) * 0.38, result[s], 0.38, color=color, label=f"{s} scorer",
               yerr=[result[s] - result[f"{s}_lo"], result[f"{s}_hi"] - result[s]], capsize=3)
    ax.set_xticks(x, [f"{c}\nn={n}" for c, n in zip(result["category"], result["n"])])
    ax.set_ylabel("QA token F1 (mean, 95% CI)")
    ax.set_ylim(0, max(0.05, float(result[["squad_hi", "locomo_hi"]].max().max()) * 1.25))
    n_conv = int(both["conversation_id"].nunique())
    caveat = f"; CIs from {n_conv} conversations are unreliable" if n_conv < 5 else ""
    ax.set_title(f"LoCoMo QA F1, same answers under two scorers\n"
                 f"{args.backend} model, bm25 k=10 over raw turns; n={len(both)} probes, {n_conv} conversations"
                 f"{caveat}", fontsize=10)
    ax.legend(loc="upper left", frameon=False)
    fig.tight_layout()
    fig.savefig(args.out / "scorers.png", dpi=120)
    print(f"figure: {args.out / 'scorers.png'}")


if __name__ == "__main__":
    main()
