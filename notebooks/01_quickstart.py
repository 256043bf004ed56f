# %% [markdown]
# # lyra-lab quickstart
#
# Which memory strategy remembers a conversation best, and at what cost? This notebook
# replays synthetic months-long companion chats through a small grid of memory pipelines
# on the **embedded defaults** (the bundled SmolLM2-135M on a local llama.cpp server, and
# the default `e5` embeddings: multilingual-e5-small on ONNX Runtime int8, all on CPU, nothing
# downloaded) and compares them.
#
# It runs in a few minutes on 2 cores: three short conversations of the demo's dataset.

# %%
import os
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D

import lyra_lab
from lyra_lab.corpus import load
from lyra_lab.reports import Estimate, ci_point, small_note, write_report
from lyra_lab.stats import aggregate
from lyra_lab.experiments import ExperimentSpec, RunOptions, run_experiment, select

REPO = Path(lyra_lab.__file__).resolve().parents[1]
DATA = REPO / "datasets" / "synthetic_demo.jsonl"  # the demo's 8 short conversations
# Where this notebook writes its run folder (the notebook test points it at a temp dir).
OUT = Path(os.environ.get("LYRA_QUICKSTART_OUT", REPO / "runs" / "quickstart"))
OUT.mkdir(parents=True, exist_ok=True)

# %% [markdown]
# ## 1. Load a corpus
#
# `load` sniffs the format (ChatGPT/Claude exports, LoCoMo, LongMemEval, JSONL, a Lyra DB, or
# lyra-lab's own JSONL). The synthetic corpus plants facts in ordinary chat and asks probes
# about them: static facts, updated facts, dates, multi-hop, and abstention questions.

# %%
corpus = load(DATA)
corpus.stats()

# %% [markdown]
# ## 2. Describe a grid of choices that change results
#
# An experiment is a plain dict (or a TOML file, see `lyra_lab/experiments/demo.toml`): the
# memory grid is the product of its lists; every recaller searches each memory. Here:
#
# * **summarizer**: `none` (chunks of raw transcript go into memory) or `single_pass` (the
#   local model writes one summary per session);
# * **keep_raw**: keep the raw turns in memory beside what was written (`true`), or replace
#   them (`false`);
# * **recaller**: `dense` (`e5` embeddings) or `bm25` (keywords).
#
# 2 × 2 memories × 2 recallers = 8 pipelines from 4 replays, of which only the 2 with a
# summarizer call the model. (The chunker is fixed: under `single_pass` it would not change
# the memory at all — the spec records such pipelines as `aliases`.) The first 3 of the
# corpus's 8 conversations are replayed: 9 sessions, so 9 summaries by the local model.

# %%
spec = ExperimentSpec.from_dict({
    "name": "quickstart",
    "corpus": {"path": str(DATA), "conversations": 3},
    "grid": {
        "chunkers": [{"name": "turn_window", "max_turns": 8}],
        "summarizers": ["none", {"name": "single_pass", "max_tokens": 64}],
        "keep_raw": [True, False],
        "recallers": ["dense", "bm25"],
        "context_tokens": [400],
    },
    "run": {"backends": ["local"], "embedders": ["e5"], "ks": [1, 5]},
})
[(p.kind_names()["summarizer"], p.keep_raw) for p in spec.pipelines]

# %% [markdown]
# The probes the run asks — the spec's cut of the corpus (`select`), not the whole file: these
# are the probes every figure below rests on. Abstention probes ("never mentioned") have no
# answer to find in the context, so the answer and evidence metrics count the others.

# %%
asked = select(corpus, spec.corpus).corpus.probes
probes = pd.DataFrame([{"id": p.id, "category": p.category, "question": p.question, "answer": p.answer,
                        "evidence": ", ".join(p.evidence)} for p in asked])
print(f"{len(probes)} probes asked, {sum(1 for p in asked if p.evidence)} with evidence (answerable)")
probes.groupby("category").size()

# %% [markdown]
# ## 3. Run it
#
# The run folder holds the resolved spec, the environment (package versions, git commit,
# dataset hash), the append-only event log and one rows file per finished cell. Running the
# same cell again resumes: finished cells are skipped, and LLM answers come from the
# response cache.

# %%
df = run_experiment(spec, OUT / "run", RunOptions(progress=True))
print(f"{len(df)} tidy rows, {df['cell_id'].nunique()} cells")
df.head()

# %% [markdown]
# ## 4. The tidy table
#
# One row per pipeline × conversation × probe × metric. Quality per pipeline: the mean with
# its 95% bootstrap confidence interval over probes, and **n**, the probes behind it: the
# answerable probes counted above. With a few dozen probes the intervals are still wide: read
# them before the means.
#
# Which metric is fair across memory kinds: `answer_in_context@512tok` — is the probe's answer
# in the 512 tokens of context recall fills (every pipeline gets the same room, and a summary
# counts only if its text kept the answer) — and `evidence_recall@5` (evidence turns retrieved
# verbatim). `coverage_recall@5` counts a summary as retrieving every turn it covers, so it
# flatters memories of summaries alone; `retention` says whether the answer is anywhere in memory.

# %%
quality = aggregate(df[df["metric"].isin(["answer_in_context@512tok", "evidence_recall@5", "coverage_recall@5",
                                          "retention"])], by=["pipeline"])
quality["cell"] = quality.apply(lambda r: f"{r['mean']:.2f} [{r['ci_low']:.2f}, {r['ci_high']:.2f}] n={r['n']}", axis=1)
table = quality.pivot(index="pipeline", columns="metric", values="mean").round(3)
quality.pivot(index="pipeline", columns="metric", values="cell")

# %% [markdown]
# What building each memory cost, per conversation. `summarize.latency_s` is the sum of the
# model's call latencies as measured when they were paid, so a re-run served from the response
# cache reports the same figure; `paid_latency_s` is the wall time this run spent, and
# `cached_calls` how many calls the cache answered.

# %%
cost_metrics = ["summarize.calls", "summarize.latency_s", "summarize.paid_latency_s", "summarize.cached_calls",
                "summarize.prompt_tokens", "memory_tokens"]
cost = df[df["metric"].isin(cost_metrics)].pivot_table(index="pipeline", columns="metric", values="value")
cost.round(2)

# %% [markdown]
# ## 5. Plots: quality with its uncertainty, and quality vs cost

# %%
r5 = quality[quality["metric"] == "answer_in_context@512tok"].sort_values("mean").reset_index(drop=True)
fig, ax = plt.subplots(figsize=(8, 0.45 * len(r5) + 1.4), layout="constrained")
for i, row in r5.iterrows():  # hollow: fewer than 10 probes; no bar where the interval has no width
    ci_point(ax, Estimate.of(row), i, "C0", horizontal=True)
ax.set_yticks(range(len(r5)), [f"{p}  (n={n})" for p, n in zip(r5["pipeline"], r5["n"])], fontsize=8)
ax.set_xlim(-0.03, 1.03)
ax.set_xlabel("answer in the first 512 context tokens (mean, 95% bootstrap CI over probes)")
ax.set_title(f"answer_in_context@512tok per pipeline{small_note(r5['n'])}")
plt.show()


# One colour per memory, the same in both panels, named in the legend with its n. Memories at the same
# cost (both chunks-only memories cost 0 s) are spread sideways, each with its own interval.

# %%
def short(name):
    """A pipeline's short name: ``"turn_window+single_pass+none+raw=yes|dense"`` -> ``"single_pass, raw=yes"``."""
    parts = name.partition("|")[0].split("+")
    return f"{parts[1]}, {parts[-1]}"


# seconds to 0.1 s: chunking alone takes microseconds, which should not split "0 s" into two points
points = r5.assign(x=r5["pipeline"].map(cost["summarize.latency_s"]).round(1),
                   recaller=r5["pipeline"].str.partition("|")[2], memory=r5["pipeline"].map(short))
MEMORIES = sorted(points["memory"].unique())
COLORS = {m: f"C{i}" for i, m in enumerate(MEMORIES)}
step = 0.04 * max(points["x"].max(), 1.0)  # the sideways spread of memories that cost the same
rank = points.groupby(["recaller", "x"])["memory"].rank(method="first") - 1
size = points.groupby(["recaller", "x"])["memory"].transform("size")
points["x_drawn"] = points["x"] + (rank - (size - 1) / 2) * step
points.to_csv(OUT / "quality_vs_cost.csv", index=False)  # what the figure draws, where
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharex=True, sharey=True, layout="constrained")
for ax, (which, part) in zip(axes, points.groupby("recaller")):
    for _, row in part.iterrows():
        ci_point(ax, Estimate.of(row), row["x_drawn"], COLORS[row["memory"]])
    ax.set_title(f"recaller: {which}")
    ax.set_xlabel("model time building memory per conversation (s, as paid)")
    ax.margins(x=0.15, y=0.15)
    ax.grid(alpha=0.3)
axes[0].set_ylabel("answer_in_context@512tok (mean, 95% CI)")
n_of = points.groupby("memory")["n"].max()
fig.legend(handles=[Line2D([], [], color=COLORS[m], marker="o", ls="", label=f"{m} (n={n_of[m]})") for m in MEMORIES],
           loc="outside lower center", ncols=4, fontsize=8, frameon=False)
fig.suptitle(f"Quality vs cost (no summarizer: 0 s; points at one cost spread sideways){small_note(points['n'])}")
plt.show()

# %% [markdown]
# `write_report` writes the same comparison as CSV/Markdown tables, PNG plots and one
# self-contained `report.html` (with a per-probe drill-down: what each pipeline retrieved)
# into the run folder's `report/` — this is what `lyra-lab report RUN_DIR` does.

# %%
paths = write_report(OUT / "run")
table.to_csv(OUT / "quickstart_summary.csv")
[p.name for p in paths]
