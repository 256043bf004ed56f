# %% [markdown]
# # Rollups under a memory budget
#
# **Question.** A chat memory grows with every session; a rollup compacts it to a token budget.
# Which rollup keeps the most of what was said under which budget, and at what LLM cost?
#
# Conversations are replayed in time order on lyra-lab's virtual clock (turn timestamps, so a
# month of conversation replays in seconds of harness time) through five rollups, each at several
# memory budgets, on the bundled local model (SmolLM2-135M-Instruct via llama.cpp, the `local`
# preset, one request at a time):
#
# | rollup | what it does | enforces the budget? |
# |---|---|---|
# | `time_ladder` | folds entries older than 1 / 7 / 30 days into day / week / month digests when memory exceeds budget × 1.25, down to the budget; drops the oldest if still over | yes (when it runs and the LLM does not fail) |
# | `summary_buffer` | keeps the newest turns verbatim, folds the rest into one running summary | yes |
# | `session_gist` | adds one gist per session; raw turns stay | **no** (reports the figures only) |
# | `fact_extraction` | extracts facts from every batch of new turns; raw turns stay | **no** |
# | `none` | keeps everything | **no: it ignores the budget** (the reference "keep everything") |
#
# So only `time_ladder` and `summary_buffer` answer "under a budget"; `session_gist` and
# `fact_extraction` *add* to memory, and their rows show what that buys and what it costs.
#
# **Metrics** (per probe; means with 95% bootstrap CIs and n): `retention` (is the probe's answer
# still anywhere in memory), `answer_in_context@<B>tok` (is it in the context recall fills with B
# rendered tokens: every pipeline gets the same room), `evidence_recall@K` (evidence turns
# retrieved verbatim in the top K) and `coverage_recall@K` (evidence turns *covered* by the top K,
# a digest counting for every turn it folds). **Caveat: digests flatter coverage** — one running
# summary "covers" every old turn whether or not it kept the answer, so read coverage only beside
# `answer_in_context` and `retention`.
#
# **Modes.** Small mode (default): `datasets/synthetic_small.jsonl`, one conversation cut to its
# first 4 sessions (54 turns over 22 days; 12 probes, 6 of them with an answer to keep, the rest
# abstention questions), budgets 300 and 600 tokens, digests of at most 24 tokens: 25 local-model
# calls (30 with the 5 the response cache serves). Measured headless (the notebook test, cold) on a
# 2-core box shared with other jobs (load average 2.3–3), two cold runs: **137 s and 170 s** (131 s
# and 167 s of it the replays; the test 143 s and 177 s); the run-time line at the end prints yours. With 6 probes every CI is wide and no paired test can
# reach a small p: small mode shows the method, full mode gives the answer.
# Full mode (`LYRA_NB_FULL=1`): LoCoMo (installed once by `lyra-lab datasets get locomo`, or
# `LYRA_LOCOMO`), the first 4 conversations × their first 6 sessions (481 turns,
# 226 replayed days, about two months each; 127 probes whose evidence lies in those sessions),
# budgets 500 / 1,000 / 2,000 against ~10,300 tokens of memory kept whole, digests of at most 96
# tokens: 60 cells, 247 local-model calls. Measured cold (`LYRA_NB_FULL=1`, 2-core box at load
# average 4–7, other jobs sharing it): **3,709 s** (3,698 s of it the replays; `summary_buffer`'s
# folds of ~2,000-token prompts take 40–55 s each there). It is scoped to 6 sessions because the
# first attempt, 4 conversations × 10 sessions, had finished 16 of its 60 cells after 80 minutes.
# **Headline:** on SmolLM2, no rollup that enforces the budget keeps much: the best, `time_ladder`
# at 2,000 tokens, keeps the answer for 0.18 [0.07, 0.24] of the 127 probes, against 0.62 when
# memory keeps everything (paired −0.44 [−0.65, −0.35]); `summary_buffer` keeps 0.02–0.06 at every
# budget, and at 500 tokens both keep 0.02. `session_gist` and `fact_extraction` lose nothing
# (0.62 / 0.64) because they never shrink memory. With 4 conversations the paired tests' p cannot go
# below 2/2^4 = 0.125, and every difference against keeping everything reaches that floor. Each run
# folder keeps a response cache: a re-run resumes and pays for nothing twice.
#
# `LYRA_ROLLUPS_BACKEND=fake` replays everything on lyra-lab's `FakeLLM` (echoes of the prompt,
# labelled simulated) to check the plumbing in seconds; its quality figures mean nothing.

# %%
# %matplotlib inline
import json
import os
import textwrap
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import lyra_lab
from lyra_lab.reports import LineLabel, group_identical, label_lines, small_marker
from lyra_lab.stats import aggregate, compare
from lyra_lab.experiments import ExperimentSpec, inspect_probe, load_corpus, run_experiment, select
from lyra_lab.runs import read_log

FULL = os.environ.get("LYRA_NB_FULL") == "1"
MODE = "full" if FULL else "small"
BACKEND = os.environ.get("LYRA_ROLLUPS_BACKEND", "local")
REPO = Path(lyra_lab.__file__).resolve().parents[1]
SYNTHETIC = REPO / "datasets" / "synthetic_small.jsonl"
# Where the run folder, CSVs and figures go (the notebook test points it at a temp dir).
OUT = Path(os.environ.get("LYRA_ROLLUPS_OUT", REPO / "runs" / "rollups_budget"))
FIGURES = OUT / "figures"
FIGURES.mkdir(parents=True, exist_ok=True)
TITLES: dict[str, str] = {}  # figure file -> its title (written to figures.json)


def publish(fig, name: str, title: str, labels=()) -> None:
    # title fig (wrapped to its width), label its lines at their ends, save it as FIGURES / name, record, show it
    fig.suptitle(textwrap.fill(title, int(fig.get_figwidth() * 13)), fontsize=10.5)
    for ax, line_labels in labels:  # last: the panels have their final size once the title is in
        label_lines(ax, line_labels, fontsize=7.5)
    fig.savefig(FIGURES / name, dpi=110)
    TITLES[name] = title
    plt.show()


STARTED = time.perf_counter()
pd.set_option("display.width", 200)
pd.set_option("display.max_colwidth", 120)
print(f"{MODE} mode on backend {BACKEND!r}; results in {OUT}")

# %% [markdown]
# ## 1. The grid
#
# Raw turns go into memory as they arrive (8-turn windows, no summarizer, raw turns kept); after
# every session the rollup compacts the conversation's memory toward the budget. Recall is BM25
# (no embedder: the rollup is the only thing that differs). QA is off: the questions here are
# what memory *keeps* and what recall can *find* in it, not what the tiny model answers.

# %%
if FULL:
    # the copy `lyra-lab datasets get locomo` installed (or LYRA_LOCOMO); absent, the spec says how to get it
    CORPUS = {"path": "dataset:locomo", "conversations": 4, "max_sessions": 6, "categories": ["1", "2", "3", "4"]}
    BUDGETS, DIGEST_TOKENS, CONTEXT_BUDGETS, K = [500, 1000, 2000], 96, [256, 512, 1024], 10
else:
    CORPUS = {"path": str(SYNTHETIC), "conversations": 1, "max_sessions": 4}
    BUDGETS, DIGEST_TOKENS, CONTEXT_BUDGETS, K = [300, 600], 24, [128, 256, 512], 5
MIDDLE = CONTEXT_BUDGETS[len(CONTEXT_BUDGETS) // 2]
ROLLUPS = ["time_ladder", "summary_buffer", "session_gist", "fact_extraction", "none"]
ENFORCING = ["time_ladder", "summary_buffer"]  # the rollups whose docs promise memory <= budget after a compaction
HEADROOM = 1.25  # time_ladder's default: it compacts only above budget x 1.25
spec = ExperimentSpec.from_dict({
    "name": f"rollups-budget-{MODE}", "corpus": CORPUS,
    "grid": {"chunkers": [{"name": "turn_window", "max_turns": 8}], "summarizers": ["none"],
             "rollups": [
                 {"name": "time_ladder", "max_tokens": DIGEST_TOKENS, "max_prompt_tokens": 1000},
                 {"name": "summary_buffer", "max_tokens": DIGEST_TOKENS},
                 {"name": "session_gist", "max_tokens": DIGEST_TOKENS},
                 {"name": "fact_extraction", "max_tokens": DIGEST_TOKENS, "batch_turns": 20},
                 "none"],
             "budgets": BUDGETS, "keep_raw": [True], "recallers": ["bm25"]},
    "run": {"backends": [BACKEND], "embedders": ["none"], "ks": [K], "score_at_tokens": CONTEXT_BUDGETS},
})
RUN_DIR = OUT / f"run-{MODE}-{BACKEND}"
t0 = time.perf_counter()
results = run_experiment(spec, RUN_DIR)
if results.attrs.get("failed_cells"):
    raise RuntimeError(f"cells failed: {results.attrs['failed_cells']}")
REPLAY_S = time.perf_counter() - t0
results["budget"] = results["pipeline.budget"].astype(int)
EVENTS = list(read_log(RUN_DIR / "log.jsonl"))
print(f"replay: {REPLAY_S:.0f} s for {results['cell_id'].nunique()} cells")

# %% [markdown]
# ## 2. What was replayed
#
# n below is what every figure rests on: the conversations, turns, replayed days and probes.

# %%
selected = select(load_corpus(spec.corpus), spec.corpus).corpus
START, DAYS = {}, {}
for conv in selected.conversations:
    stamps = [t.timestamp for t in conv.turns() if t.timestamp is not None]
    START[conv.id] = min(stamps)
    DAYS[conv.id] = max((max(stamps) - min(stamps)).total_seconds() / 86400, 1.0)  # at least one day
probes = results[results["probe_id"] != ""]
conv_rows = results[results["probe_id"] == ""]
N_PROBES = probes["probe_id"].nunique()
last_start = max(i for i, e in enumerate(EVENTS) if e["event"] == "run_started")  # this run's events follow it
paid_now = sum(1 for e in EVENTS[last_start:] if e["event"] == "llm_call" and not e["cached"])
overview = pd.DataFrame([{
    "mode": MODE, "backend": BACKEND, "conversations": len(DAYS),
    "turns": sum(1 for c in selected.conversations for _ in c.turns()),
    "sessions": sum(len(c.sessions) for c in selected.conversations),
    "replayed_days": round(sum(DAYS.values()), 1), "probes": N_PROBES,
    "probes_with_evidence": probes.loc[probes["metric"] == f"evidence_recall@{K}", "probe_id"].nunique(),
    "budgets": " / ".join(map(str, BUDGETS)),
    "llm_calls": int(conv_rows.loc[conv_rows["metric"] == "rollup.calls", "value"].sum()),  # incl. cache hits
    "llm_calls_paid_this_run": paid_now, "replay_s": round(REPLAY_S, 1)}])
overview.to_csv(OUT / "overview.csv", index=False)
overview.T

# %% [markdown]
# ## 3. Retention and recall against the memory budget
#
# Each point is the mean over probes with its 95% bootstrap CI (probes resampled in small mode,
# where there is one conversation; whole conversations in full mode). `none` keeps everything and
# ignores the budget, so it is drawn as one band across budgets; `session_gist` and
# `fact_extraction` do not enforce the budget either (their lines are flat: the budget changes
# nothing they do).

# %%
METRICS = ["retention", f"answer_in_context@{MIDDLE}tok", f"evidence_recall@{K}", f"coverage_recall@{K}"]
CLUSTER = "conversation_id" if FULL else None
quality = aggregate(probes[probes["metric"].isin(METRICS)], by=["rollup", "budget"], cluster=CLUSTER)
quality["enforces_budget"] = quality["rollup"].isin(ENFORCING)
quality.to_csv(OUT / "quality.csv", index=False)
Q = quality.set_index(["rollup", "budget", "metric"])
quality.pivot_table(index=["rollup", "budget"], columns="metric", values="mean").round(3)

# %%
COLORS = {"time_ladder": "tab:blue", "summary_buffer": "tab:orange", "session_gist": "tab:green",
          "fact_extraction": "tab:purple", "none": "0.4"}
NOTE = {"none": " (keeps all)", "session_gist": " (no budget)", "fact_extraction": " (no budget)"}


def named(members) -> str:  # "session_gist = fact_extraction (budget not enforced)": one line for rollups that coincide
    notes = {NOTE.get(r, "") for r in members}
    text = " = ".join(members)
    return text + (notes.pop() if len(notes) == 1 else "")


fig, axes = plt.subplots(2, 2, figsize=(10, 7.6), sharex=True, sharey=True, layout="constrained")
pending = []
for ax, metric in zip(axes.flat, METRICS):
    part = quality[quality["metric"] == metric]
    series = {r: part[part["rollup"] == r].set_index("budget").reindex(BUDGETS) for r in ROLLUPS if r != "none"}
    labels = []
    # rollups with the same means and CIs at every budget are one line, named for all of them
    groups = group_identical({r: [*s["mean"], *s["ci_low"], *s["ci_high"]] for r, s in series.items()})
    for i, group in enumerate(groups):
        s, color = series[group.first], COLORS[group.first]
        xs = np.array(BUDGETS, dtype=float) * (1 + 0.03 * (i - (len(groups) - 1) / 2))  # CIs side by side, not on top
        ax.plot(xs, s["mean"], color=color, lw=1.6, zorder=2)
        for xv, (_, r) in zip(xs, s.iterrows()):
            if r["ci_high"] > r["ci_low"]:
                ax.errorbar(xv, r["mean"], yerr=[[r["mean"] - r["ci_low"]], [r["ci_high"] - r["mean"]]], fmt="none",
                            ecolor=color, capsize=3, zorder=2)
            ax.plot(xv, r["mean"], "o", ms=5, zorder=3, **small_marker(r["n"], color))
        labels.append(LineLabel(xs[-1], s["mean"].iloc[-1], f"{named(group.members)}, n = {int(s['n'].min())}", color))
    keep = part[part["rollup"] == "none"].iloc[0]
    ax.axhspan(keep["ci_low"], keep["ci_high"], color=COLORS["none"], alpha=0.15, lw=0)
    ax.axhline(keep["mean"], color=COLORS["none"], ls="--", lw=1.2)
    labels.append(LineLabel(BUDGETS[-1], keep["mean"], f"none{NOTE['none']}, n = {int(keep['n'])}", COLORS["none"]))
    pending.append((ax, labels))
    ax.set_xscale("log")
    ax.set_xticks(BUDGETS, [str(b) for b in BUDGETS])
    ax.minorticks_off()
    ax.set_xlim(BUDGETS[0] / 1.25, BUDGETS[-1] * 1.25)
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(metric + (" — flatters digests" if metric.startswith("coverage") else ""), fontsize=10)
for ax in axes[:, 0]:
    ax.set_ylabel("share of probes (mean, 95% CI)")
for ax in axes[1]:
    ax.set_xlabel("memory budget (tokens, o200k)")
N_ANSWERABLE = int(quality.loc[quality["metric"] == "retention", "n"].max())
small = " hollow: n < 10;" if N_ANSWERABLE < 10 else ""
title = (f"Retention and recall against memory budget, per rollup ({MODE} mode, {BACKEND} model; n = {N_ANSWERABLE} "
         f"probes with an answer, of {N_PROBES}, {len(DAYS)} conversation(s); 95% CI;{small} grey band: keeping everything; "
         "no budget: the rollup does not enforce it)")
publish(fig, "quality_vs_budget.png", title, labels=pending)

# %% [markdown]
# ## 4. Memory size over replayed time
#
# From the run log: every compaction writes a `rollup_report` event with the rendered memory
# tokens before and after it (o200k). `none` writes none (it has no rollup); its size is rebuilt
# from what each flush added (the rise in another rollup's memory between compactions), and its
# last point is checked against the run's own `memory_tokens` figure below. The table
# `budget_check.csv` checks the promise of the enforcing rollups: after every compaction that ran
# without an LLM failure, memory is at most the budget.

# %%
CELL_OF = results.drop_duplicates("cell_id").set_index("cell_id")[["rollup", "budget", "conversation_id"]]
reports = pd.DataFrame([{**CELL_OF.loc[e["cell_id"]].to_dict(), "flush": e["flush"], "now": pd.Timestamp(e["now"]),
                         "tokens_before": e["tokens_before"], "tokens_after": e["tokens_after"], "ran": e["ran"],
                         "error": e["error"], "reason": e["reason"], "dropped": len(e["dropped"]),
                         "digests": len(e["digests"])}
                        for e in EVENTS if e["event"] == "rollup_report" and e["cell_id"] in CELL_OF.index])
reports = reports.drop_duplicates(["rollup", "budget", "conversation_id", "flush"], keep="last")  # a resumed run logs a cell once more
reports["day"] = [(now - START[c]).total_seconds() / 86400 for now, c in zip(reports["now"], reports["conversation_id"])]
# none: memory after flush i = memory after flush i-1 + what flush i added (any rollup's rise before its compaction)
ref = reports[reports["rollup"] == reports["rollup"].iloc[0]]
ref = ref[ref["budget"] == ref["budget"].iloc[0]].sort_values(["conversation_id", "flush"])
added = ref["tokens_before"] - ref.groupby("conversation_id")["tokens_after"].shift(1).fillna(0)
none_rows = ref.assign(rollup="none", tokens_after=added.groupby(ref["conversation_id"]).cumsum(), ran=False,
                       error=None, reason="keeps everything", dropped=0, digests=0)
none_rows["tokens_before"] = none_rows["tokens_after"]
memory = pd.concat([reports, *(none_rows.assign(budget=b) for b in BUDGETS)], ignore_index=True)
memory["enforces_budget"] = memory["rollup"].isin(ENFORCING)
memory = memory.sort_values(["rollup", "budget", "conversation_id", "flush"])
memory.drop(columns="now").to_csv(OUT / "memory.csv", index=False)

final = conv_rows[conv_rows["metric"] == "memory_tokens"].groupby(["rollup", "budget", "conversation_id"])["value"].first()
none_last = memory[memory["rollup"] == "none"].groupby(["budget", "conversation_id"])["tokens_after"].last()
print("none, final memory rebuilt from the log vs the run's memory_tokens:",
      {c: (int(none_last[(BUDGETS[0], c)]), int(final[("none", BUDGETS[0], c)])) for c in DAYS})

promised = memory[memory["enforces_budget"] & memory["ran"] & memory["error"].isna()]
budget_check = (promised.assign(over=promised["tokens_after"] > promised["budget"])
                .groupby(["rollup", "budget"])
                .agg(compactions=("over", "size"), over_budget=("over", "sum"), max_tokens_after=("tokens_after", "max"))
                .reset_index())
failed = memory[memory["enforces_budget"] & memory["error"].notna()].groupby(["rollup", "budget"]).size()
budget_check["llm_failures"] = [int(failed.get((r, b), 0)) for r, b in zip(budget_check["rollup"], budget_check["budget"])]
budget_check.to_csv(OUT / "budget_check.csv", index=False)
budget_check

# %%
CONV0 = next(iter(DAYS))
fig, axes = plt.subplots(1, len(BUDGETS), figsize=(10, 4.6), sharey=True, squeeze=False, layout="constrained")
pending = []
for ax, budget in zip(axes[0], BUDGETS):
    by_rollup = {r: memory[(memory["rollup"] == r) & (memory["budget"] == budget) & (memory["conversation_id"] == CONV0)]
             for r in ROLLUPS}
    labels = []
    # on a log axis, sizes within 5% of each other draw one line: it is named for every rollup it stands for
    for group in group_identical({r: list(np.log10(p["tokens_after"].clip(lower=1))) for r, p in by_rollup.items()},
                                 tolerance=np.log10(1.05)):
        part, color = by_rollup[group.first], COLORS[group.first]
        ax.plot(part["day"], part["tokens_after"], marker="o", ms=4, color=color, ls="--" if group.first == "none" else "-")
        name = " ≈ ".join(group.members)
        labels.append(LineLabel(part["day"].iloc[-1], part["tokens_after"].iloc[-1], name, color))
    ax.axhline(budget, color="k", ls=":", lw=1)
    ax.annotate(f"the budget, {budget} tokens", (0, budget), xytext=(2, 3), textcoords="offset points", fontsize=8)
    pending.append((ax, labels))
    ax.set_title(f"budget {budget} tokens", fontsize=10)
    ax.set_xlabel(f"replayed days since the first turn of {CONV0}")
    ax.set_yscale("log")
axes[0, 0].set_ylabel("memory after each compaction\n(tokens, o200k, log scale)")
n_sessions = memory.loc[(memory["rollup"] == "none") & (memory["conversation_id"] == CONV0), "flush"].nunique()
title = (f"Memory size over replayed time, one line per rollup (conversation {CONV0}, n = {n_sessions} sessions, "
         f"{MODE} mode, {BACKEND} model; ≈: within 5% at every compaction, drawn as one line)")
publish(fig, "memory_over_time.png", title, labels=pending)

# %% [markdown]
# ## 5. LLM tokens and time per replayed day
#
# What each rollup spends to keep its memory: the rollup's LLM tokens (prompt + completion) and
# seconds of LLM time (sum of call latencies, as measured when the calls were paid; a response-cache
# hit keeps its original figures, so a re-run reports the same) divided by the replayed days.
# These are totals over every call (n = calls), not estimates, so they carry no CI.

# %%
phase = conv_rows[conv_rows["metric"].isin(["rollup.calls", "rollup.prompt_tokens", "rollup.completion_tokens",
                                              "rollup.latency_s", "memory_tokens"])]
wide = phase.pivot_table(index=["rollup", "budget", "conversation_id"], columns="metric", values="value",
                         aggfunc="first").reset_index()
wide = wide.reindex(columns=[*wide.columns, *[m for m in ("rollup.calls", "rollup.prompt_tokens", "rollup.completion_tokens",
                                                         "rollup.latency_s") if m not in wide.columns]]).fillna(0)
wide["days"] = wide["conversation_id"].map(DAYS)
cost = wide.groupby(["rollup", "budget"]).agg(
    calls=("rollup.calls", "sum"), prompt_tokens=("rollup.prompt_tokens", "sum"),
    completion_tokens=("rollup.completion_tokens", "sum"), llm_s=("rollup.latency_s", "sum"), days=("days", "sum"),
    final_memory_tokens=("memory_tokens", "mean")).reset_index()
cost["llm_tokens_per_day"] = (cost["prompt_tokens"] + cost["completion_tokens"]) / cost["days"]
cost["llm_s_per_day"] = cost["llm_s"] / cost["days"]
cost["enforces_budget"] = cost["rollup"].isin(ENFORCING)
cost["final_memory_over_budget"] = cost["final_memory_tokens"] > cost["budget"] * HEADROOM
cost.to_csv(OUT / "cost.csv", index=False)
cost.round(2)

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), layout="constrained")
width = 0.8 / len(BUDGETS)
names = [r for r in ROLLUPS if r != "none"]
for j, budget in enumerate(BUDGETS):
    part = cost[cost["budget"] == budget].set_index("rollup").reindex(names)
    x = np.arange(len(names)) + (j - (len(BUDGETS) - 1) / 2) * width
    for ax, col in zip(axes, ["llm_tokens_per_day", "llm_s_per_day"]):
        bars = ax.bar(x, part[col], width, label=f"budget {budget}", alpha=0.85)
        for bar, n in zip(bars, part["calls"]):
            ax.annotate(f"n={int(n)}", (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center",
                        va="bottom", fontsize=7)
for ax, unit in zip(axes, ["LLM tokens per replayed day (prompt + completion)", "LLM seconds per replayed day"]):
    ax.set_xticks(np.arange(len(names)), names, fontsize=8)
    ax.set_ylabel(unit)
    ax.margins(y=0.15)
    ax.set_ylim(bottom=0)
handles, labels = axes[0].get_legend_handles_labels()
fig.legend(handles, labels, loc="outside lower center", ncols=len(BUDGETS), fontsize=9, frameon=False)  # no bar hidden
title = (f"Rollup LLM cost per replayed day by memory budget ({BACKEND} model, {sum(DAYS.values()):.0f} replayed days; "
         f"n = LLM calls on each bar; none makes no calls)")
publish(fig, "cost_per_day.png", title)

# %% [markdown]
# ## 6. What each rollup kept and lost, for a probe it failed
#
# For each rollup at the smallest budget: a probe whose answer it lost (`retention` 0) while
# keeping everything kept it (`none`: 1) — of the first 10 such, one where recall found an entry
# the rollup wrote (a digest, summary, gist or fact), if any. Shown: the question and gold answer, the evidence
# turns and what became of them (dropped at a compaction, per the `rollup_report` events, or folded
# into the model's digests), and the top entries recall found in the rollup's memory (what it
# kept), from `inspect_probe`.

# %%
LOW = BUDGETS[0]
ret = probes[probes["metric"] == "retention"].pivot_table(index="probe_id", columns=["rollup", "budget"], values="value")
DROPPED: dict[str, dict[str, str]] = {}  # cell id -> turn id -> the replayed day it was dropped
for e in EVENTS:
    if e["event"] == "rollup_report" and e["cell_id"] in CELL_OF.index:
        for tid in e["dropped"]:
            DROPPED.setdefault(e["cell_id"], {}).setdefault(tid, e["now"][:10])
examples, texts = [], []
for rollup in [r for r in ROLLUPS if r != "none"]:
    lost = ret.index[(ret[(rollup, LOW)] == 0) & (ret[("none", LOW)] == 1)]
    if len(lost) == 0:
        texts.append(f"### {rollup} @ {LOW}: lost no answer that keeping everything kept.")
        continue
    cell = results[(results["rollup"] == rollup) & (results["budget"] == LOW)]["cell_id"].iloc[0]
    # of the first 10 lost probes, show one where recall found one of the rollup's own entries (what it kept), if any
    views = [(v, next(p for p in v.pipelines if p.cell_id == cell)) for v in (inspect_probe(RUN_DIR, pid) for pid in lost[:10])]
    view, pv = max(views, key=lambda vp: (any(h.kind != "turn" and h.kind != "chunk" for h in vp[1].hits), len(vp[1].hits) > 0))
    pid = view.probe_id
    fates = []
    for tid, text in view.evidence:
        when = DROPPED.get(cell, {}).get(tid)
        holders = [h for h in pv.hits if tid in h.turn_ids and h.kind != "turn"]
        fate = (f"dropped at the compaction of {when}" if when else
                f"folded into {holders[0].kind} {holders[0].entry_id}" if holders else "folded into a digest not recalled")
        fates.append(f"{tid}: {fate}")
    kept = [f"[{h.kind}] {h.text[:160]}" for h in pv.hits[:3]]
    examples.append({"rollup": rollup, "budget": LOW, "probe_id": pid, "question": view.question, "gold": view.gold,
                     "lost_probes": len(lost), "evidence_fate": " | ".join(fates), "top_hits": " || ".join(kept) or "(no entry recalled)"})
    texts.append("\n".join([
        f"### {rollup} @ {LOW} tokens — lost {len(lost)} answer(s) that `none` kept; e.g. {pid}",
        f"Q: {view.question}   gold: {view.gold!r}",
        *[f"  evidence {tid}: {textwrap.shorten(text, 110)}" for tid, text in view.evidence],
        *[f"  -> {f}" for f in fates],
        "  what recall found in its memory (top 3):" if kept else
        "  recall found no entry in its memory sharing a word with the question (BM25 scores them all 0)",
        *[f"    {textwrap.shorten(k, 150)}" for k in kept]]))
pd.DataFrame(examples, columns=["rollup", "budget", "probe_id", "question", "gold", "lost_probes", "evidence_fate",
                                "top_hits"]).to_csv(OUT / "examples.csv", index=False)
print("\n\n".join(texts))

# %% [markdown]
# ## 7. Each rollup against keeping everything, paired on the same probes
#
# `rollup − none` on the same probes (`lyra_lab.stats.compare`): the difference, its 95% CI
# from a bootstrap (probes in small mode, whole conversations in full mode) and a sign-flip p.
# Remember `none` ignores the budget: its memory is the whole conversation at every budget. With
# G conversations the smallest possible p is 2/2^G; in small mode (one conversation) probes are
# the units and the result holds for these probes only.

# %%
PIPE = results.drop_duplicates(["rollup", "budget"]).set_index(["rollup", "budget"])["pipeline"]
rows = []
for metric in ["retention", f"answer_in_context@{MIDDLE}tok"]:
    for budget in BUDGETS:
        for rollup in [r for r in ROLLUPS if r != "none"]:
            c = compare(results, PIPE[(rollup, budget)], PIPE[("none", budget)], metric,
                        cluster="conversation" if FULL else None)
            rows.append({"rollup": rollup, "budget": budget, **c.to_row()})
paired = pd.DataFrame(rows)
paired.to_csv(OUT / "paired.csv", index=False)
paired[["rollup", "budget", "metric", "difference", "ci_low", "ci_high", "p_value", "n_probes", "n_clusters"]].round(3)

# %% [markdown]
# ## 8. The answer
#
# Computed from the tables above: for each budget, the budget-enforcing rollup whose final memory
# stays within budget × 1.25 and keeps the most answers (ties: more answers in context, then fewer
# LLM tokens), its paired difference from keeping everything, and its LLM cost; then what the
# rollups that do not enforce the budget keep, and how big their memory grew.

# %%
C = cost.set_index(["rollup", "budget"])
P = paired.set_index(["rollup", "budget", "metric"])
AIC = f"answer_in_context@{MIDDLE}tok"
none_ret, none_aic = Q.loc[("none", BUDGETS[0], "retention")], Q.loc[("none", BUDGETS[0], AIC)]
none_mem = C.loc[("none", BUDGETS[0]), "final_memory_tokens"]
lines, picks = [], []
for budget in BUDGETS:
    fits = [r for r in ENFORCING if not C.loc[(r, budget), "final_memory_over_budget"]]
    if not fits:
        lines.append(f"- At {budget} tokens no enforcing rollup ended within budget × {HEADROOM}.")
        continue
    best = sorted(fits, key=lambda r: (-Q.loc[(r, budget, "retention"), "mean"], -Q.loc[(r, budget, AIC), "mean"],
                                       C.loc[(r, budget), "llm_tokens_per_day"]))[0]
    tied = [r for r in fits if r != best and Q.loc[(r, budget, "retention"), "mean"] == Q.loc[(best, budget, "retention"), "mean"]]
    why = []
    for r in tied:
        if Q.loc[(best, budget, AIC), "mean"] > Q.loc[(r, budget, AIC), "mean"]:
            why.append(f"{r}, ahead on answer in context")
        elif C.loc[(best, budget), "llm_tokens_per_day"] < C.loc[(r, budget), "llm_tokens_per_day"]:
            why.append(f"{r}, ahead on fewer LLM tokens")
        else:
            why.append(f"{r}, indistinguishable here")
    tie = f" (tied on retention with {'; '.join(why)})" if why else ""
    q, a, c, p = Q.loc[(best, budget, "retention")], Q.loc[(best, budget, AIC)], C.loc[(best, budget)], P.loc[(best, budget, AIC)]
    other = [r for r in fits if r != best]
    vs = "; ".join(f"{r} {Q.loc[(r, budget, 'retention'), 'mean']:.2f}" for r in other)
    picks.append((budget, best, q["mean"], tie))
    lines.append(
        f"- At a {budget}-token budget, {best} keeps the most{tie}: retention {q['mean']:.2f} [{q['ci_low']:.2f}, "
        f"{q['ci_high']:.2f}] (n = {int(q['n'])} probes){f' vs {vs}' if vs else ''}; answer in context@{MIDDLE} "
        f"{a['mean']:.2f}, {p['difference']:+.2f} [{p['ci_low']:+.2f}, {p['ci_high']:+.2f}] against keeping everything "
        f"(p = {p['p_value']:.2g}, {int(p['n_probes'])} paired probes). It spends {c['llm_tokens_per_day']:,.0f} LLM "
        f"tokens and {c['llm_s_per_day']:.1f} s of LLM time per replayed day ({int(c['calls'])} calls); its memory "
        f"ended at {c['final_memory_tokens']:,.0f} tokens.")
for r in ["session_gist", "fact_extraction"]:
    q, c = Q.loc[(r, BUDGETS[0], "retention")], C.loc[(r, BUDGETS[0])]
    lines.append(f"- {r} does not enforce the budget: it keeps the raw turns (retention {q['mean']:.2f}) and its memory "
                 f"grew to {c['final_memory_tokens']:,.0f} tokens, at {c['llm_tokens_per_day']:,.0f} LLM tokens and "
                 f"{c['llm_s_per_day']:.1f} s per replayed day ({int(c['calls'])} calls).")
lines.append(f"- Keeping everything (none, no LLM calls, budget ignored): retention {none_ret['mean']:.2f}, answer in "
             f"context@{MIDDLE} {none_aic['mean']:.2f}, memory {none_mem:,.0f} tokens.")
if picks:
    top = max(picks, key=lambda t: t[2])
    bottom = ("Answer: under a budget, " + "; ".join(f"at {b} tokens {r} keeps the most ({m:.2f} of answers{t and ', tied'})"
                                                    for b, r, m, t in picks)
              + f", against {none_ret['mean']:.2f} when memory keeps everything ({none_mem:,.0f} tokens); "
              f"the best kept share is {top[2]:.2f}, at {top[0]} tokens.")
else:
    bottom = "Answer: no budget-enforcing rollup kept memory within its budget on this run."
if BACKEND != "local":
    bottom += f" (Backend {BACKEND}: simulated replies, the quality figures are not a model's.)"
answer = "\n".join([bottom, "", *lines])
(OUT / "answer.md").write_text(answer + "\n")
(OUT / "figures.json").write_text(json.dumps(TITLES, indent=1) + "\n")
print(answer)
print(f"\nnotebook run time: {time.perf_counter() - STARTED:.0f} s ({MODE} mode, {overview['llm_calls_paid_this_run'].item()} "
      f"LLM calls paid this run)")
