"""Answer prompts side by side and answer repeats: one table, one figure of paired differences.

A run with ``[qa] prompts`` answers every QA'd probe under each prompt over the same context; one with
``[qa] repeats = R`` asks each answer R times.  Their rows name ``answer_prompt`` and ``repeat``.  Here,
per pipeline × prompt, over the probes answered:

* the QA figure (``judge`` when the run has exactly one judge, else ``qa_f1``): the mean over probes of
  each probe's mean over its repeats, with a 95% interval that accounts for both sources of noise — a
  cluster bootstrap (``lyra_lab.stats.cluster_bootstrap_ci``) resampling whole conversations (probes when
  all come from one), each with its probes' repeat-averaged values intact, so the spread between probes
  and the spread of the repeats inside each probe both reach the interval (repeats nested in probes);
* beside it, with R > 1: the between-repeat spread (the standard deviation, ddof 1, of the R per-repeat
  means) and the within-probe agreement (the share of probes whose R repeats scored the same);
* the paired difference of each prompt to the reference prompt (the first the run asks), on the same
  probes: ``lyra_lab.stats.compare`` (paired cluster bootstrap, sign-flip p over conversations), its
  p-values Holm-corrected across every comparison of the table, as the report's paired section does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from lyra_lab.measures import ANSWER_PROMPTS
from lyra_lab.reports._figures import FIGURE_WIDTH, new_figure, save, wrap_label
from lyra_lab.reports._sections import TableSection
from lyra_lab.stats import cluster_bootstrap_ci, compare, holm, row_pipeline_labels

if TYPE_CHECKING:
    from matplotlib.figure import Figure

TITLE = "Answer prompts and repeats"
PROMPT, REPEAT = "answer_prompt", "repeat"
COLUMNS = ["pipeline", "prompt", "n", "mean", "low", "high", "repeats", "repeat_sd", "agreement"]
DIFF_COLUMNS = ["pipeline", "prompt", "reference", "n", "diff", "low", "high", "p", "p_holm"]


@dataclass
class PromptSection(TableSection):
    """The section (its figure in ``figures``), the CSVs behind it and the line the summary table gets."""

    files: list[Path] = field(default_factory=list)
    summary_note: str = ""


def varied(df: pd.DataFrame) -> bool:
    """Whether the run asked several prompts or repeats (its QA rows name them)."""
    return PROMPT in df.columns and bool(df[PROMPT].notna().any())


def qa_metric(df: pd.DataFrame) -> str | None:
    """The figure the section compares: ``judge`` with exactly one judge, else ``qa_f1`` (None: neither)."""
    rows = df[df[PROMPT].notna()] if PROMPT in df.columns else df
    present = set(rows["metric"])
    judges = rows.loc[rows["metric"] == "judge", "judge"].dropna().unique() if "judge" in rows.columns else []
    if "judge" in present and len(judges) <= 1:
        return "judge"
    return "qa_f1" if "qa_f1" in present else None


def _values(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One row per QA value: ``pipeline`` (without its prompt), ``label`` (with it), prompt, probe, repeat."""
    df = df.reset_index(drop=True)
    rows = df[(df["metric"] == metric) & df[PROMPT].notna()].dropna(subset=["value"])
    return pd.DataFrame({
        "pipeline": row_pipeline_labels(df.drop(columns=[PROMPT])).loc[rows.index],
        "label": row_pipeline_labels(df).loc[rows.index], "prompt": rows[PROMPT].astype(str),
        "conversation_id": rows["conversation_id"].astype(str), "probe_id": rows["probe_id"].astype(str),
        "seed": rows["seed"] if "seed" in rows.columns else 0,
        "repeat": rows[REPEAT] if REPEAT in rows.columns else 0, "value": rows["value"].astype(float)})


def _clusters(part: pd.DataFrame) -> list[object]:
    """Conversations, or each probe alone when every probe comes from one conversation."""
    if part["conversation_id"].nunique() > 1:
        return part["conversation_id"].tolist()
    return (part["conversation_id"] + "/" + part["probe_id"]).tolist()


def prompt_table(df: pd.DataFrame, metric: str, n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Per pipeline × prompt: n probes, the figure and its interval, repeats, their spread and agreement."""
    values = _values(df, metric)
    records = []
    for (pipeline, prompt), part in values.groupby(["pipeline", "prompt"], sort=False):
        probes = part.groupby(["conversation_id", "probe_id"], sort=True)
        per_probe = probes["value"].mean().reset_index()
        ci = cluster_bootstrap_ci(per_probe["value"].to_numpy(float), _clusters(per_probe), n_resamples, seed=seed)
        repeats = int(part["repeat"].nunique())
        per_repeat = part.groupby("repeat")["value"].mean()
        spread = float(per_repeat.std(ddof=1)) if repeats > 1 else float("nan")
        agreement = float((probes["value"].nunique() == 1).mean()) if repeats > 1 else float("nan")
        records.append({"pipeline": pipeline, "prompt": prompt, "n": ci.n, "mean": ci.mean, "low": ci.low,
                        "high": ci.high, "repeats": repeats, "repeat_sd": spread, "agreement": agreement})
    return pd.DataFrame.from_records(records, columns=COLUMNS)


def prompt_differences(df: pd.DataFrame, metric: str, n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Each prompt minus the reference prompt (the run's first), per pipeline, paired on probes; Holm's p."""
    values = _values(df, metric)
    order = list(dict.fromkeys(values["prompt"]))
    if len(order) < 2:
        return pd.DataFrame(columns=DIFF_COLUMNS)
    reference = order[0]
    cluster = "conversation" if values["conversation_id"].nunique() > 1 else None
    records = []
    for pipeline, part in values.groupby("pipeline", sort=False):
        labels = dict(zip(part["prompt"], part["label"]))
        for prompt in order[1:]:
            if prompt not in labels or reference not in labels:
                continue
            c = compare(df, labels[prompt], labels[reference], metric, cluster=cluster, n_boot=n_resamples, seed=seed)
            records.append({"pipeline": pipeline, "prompt": prompt, "reference": reference, "n": c.n_probes,
                            "diff": c.difference, "low": c.ci_low, "high": c.ci_high, "p": c.p_value})
    out = pd.DataFrame.from_records(records, columns=DIFF_COLUMNS[:-1])
    out["p_holm"] = holm(out["p"].to_numpy(float)) if len(out) else []
    return out


def _ci(mean: float, low: float, high: float, signed: bool = False) -> str:
    if pd.isna(mean):
        return "—"
    sign = "+" if signed else ""
    if pd.isna(low):
        return f"{mean + 0.0:{sign}.3f}"
    return f"{mean + 0.0:{sign}.3f} [{low + 0.0:{sign}.3f}, {high + 0.0:{sign}.3f}]"


def _source(prompt: str) -> str:
    known = ANSWER_PROMPTS.get(prompt)
    return (known.source or "lyra-lab") if known is not None else "unknown"


def prompt_section(df: pd.DataFrame, out: Path, n_resamples: int = 1000, seed: int = 0) -> PromptSection | None:
    """The section for a run with ``[qa] prompts`` or ``repeats`` (None for any other run)."""
    if not varied(df):
        return None
    metric = qa_metric(df)
    if metric is None:
        return None
    table = prompt_table(df, metric, n_resamples, seed)
    diffs = prompt_differences(df, metric, n_resamples, seed)
    files = [out / "answer_prompts.csv", out / "answer_prompt_differences.csv"]
    table.to_csv(files[0], index=False)
    diffs.to_csv(files[1], index=False)
    figure = prompt_figure(table, diffs, metric, out / "answer_prompts.png")
    repeats = int(table["repeats"].max()) if len(table) else 1
    notes = [f"Every answered probe was asked under each answer prompt over the same context"
             f"{f', {repeats} times each (repeats)' if repeats > 1 else ''}. `{metric}` per pipeline × prompt: "
             "the mean over probes of each probe's mean over its repeats [95% cluster bootstrap resampling whole "
             "conversations (probes, from one conversation), repeats nested in probes, so the interval carries "
             f"the repeats' noise as well as the probes'; {n_resamples} resamples], n probes."]
    if repeats > 1:
        notes.append("Between-repeat sd: the standard deviation of the per-repeat means; within-probe "
                     "agreement: the share of probes whose repeats all scored the same.")
    tables = [(f"`{metric}` under each answer prompt", ["pipeline", "prompt", "source", "n", f"{metric} [95% CI]",
                                                        "repeats", "between-repeat sd", "within-probe agreement"],
               [[r.pipeline, r.prompt, _source(r.prompt), str(r.n), _ci(r.mean, r.low, r.high), str(r.repeats),
                 "—" if pd.isna(r.repeat_sd) else f"{r.repeat_sd:.3f}",
                 "—" if pd.isna(r.agreement) else f"{r.agreement:.3f}"] for r in table.itertuples()])]
    if len(diffs):
        notes.append(f"Paired differences to `{diffs['reference'].iloc[0]}` on the same probes (repeats averaged "
                     "within a probe): paired cluster bootstrap and sign-flip test over conversations "
                     "(lyra_lab.stats.compare), p Holm-corrected over the table's comparisons. "
                     "Figure: answer_prompts.png.")
        tables.append((f"`{metric}`: each prompt minus `{diffs['reference'].iloc[0]}`, paired",
                       ["pipeline", "prompt", "n", "difference [95% CI]", "p (Holm)"],
                       [[r.pipeline, r.prompt, str(r.n), _ci(r.diff, r.low, r.high, True), f"{r.p_holm:.3g}"]
                        for r in diffs.itertuples()]))
    return PromptSection(TITLE, "answer_prompts", notes, tables, figures=[figure] if figure is not None else [],
                         files=files, summary_note=summary_note(table, metric))


def summary_note(table: pd.DataFrame, metric: str) -> str:
    """The line under the summary table: what its QA rows average, and each one's repeat spread and agreement."""
    prompts = ", ".join(f"`{p}`" for p in dict.fromkeys(table["prompt"]))
    line = (f"QA rows are per answer prompt ({prompts}: the `answer_prompt` column); see {TITLE}.")
    repeats = int(table["repeats"].max()) if len(table) else 1
    if repeats < 2:
        return line
    beside = "; ".join(f"{r.pipeline} · {r.prompt}: {metric} {r.mean:.3f}, between-repeat sd {r.repeat_sd:.3f}, "
                       f"within-probe agreement {r.agreement:.3f} (n={r.n})" for r in table.itertuples())
    return (line + f" Each QA figure averages {repeats} repeats per probe (n counts probes): " + beside + ".")


def prompt_figure(table: pd.DataFrame, diffs: pd.DataFrame, metric: str, path: Path) -> Path | None:
    """``draw_prompt_figure`` saved at ``path`` (None when there is nothing to draw)."""
    if table.empty:
        return None
    return save(draw_prompt_figure(table, diffs, metric), path)


def draw_prompt_figure(table: pd.DataFrame, diffs: pd.DataFrame, metric: str) -> Figure:
    """The figure per pipeline × prompt (left) and each prompt's paired difference to the reference (right)."""
    rows = [(str(r.pipeline), str(r.prompt)) for r in table.itertuples()]
    ncols = 2 if len(diffs) else 1
    fig = new_figure(figsize=(FIGURE_WIDTH, 0.45 * len(rows) + 1.6), layout="constrained")
    axes = fig.subplots(1, ncols, sharey=True, squeeze=False)[0]
    y = np.arange(len(rows))[::-1].astype(float)
    points = table[["mean", "low", "high"]].to_numpy(float).T
    _dots(axes[0], y, points, [f"{a:.2f} (n={n})" for a, n in zip(points[0], table["n"])], "C0")
    axes[0].set_xlim(0.0, 1.45)
    axes[0].set_xticks([0.0, 0.5, 1.0])
    axes[0].set_xlabel(f"{metric} (mean over probes, 95% CI)")
    axes[0].set_title("under each answer prompt", fontsize=9)
    if len(diffs):
        ax = axes[1]
        at = {(str(r.pipeline), str(r.prompt)): i for i, r in enumerate(diffs.itertuples())}
        ys = np.array([y[rows.index(k)] for k in at])
        points = diffs[["diff", "low", "high"]].to_numpy(float).T
        _dots(ax, ys, points, [f"{v:+.2f} (n={n}, p={p:.2g})" for v, n, p in
                               zip(points[0], diffs["n"], diffs["p_holm"])], "C3")
        ax.axvline(0.0, color="0.6", linewidth=0.8)
        ax.set_xlim(-1.0, 1.9)
        ax.set_xticks([-1.0, -0.5, 0.0, 0.5, 1.0])
        ax.set_xlabel(f"difference in {metric} (paired, 95% CI; p Holm)")
        ax.set_title(f"minus {diffs['reference'].iloc[0]}, on the same probes", fontsize=9)
    labels = [wrap_label(f"{prompt} · {pipeline}", 34) for pipeline, prompt in rows]
    axes[0].set_yticks(y, labels, fontsize=8)
    axes[0].set_ylim(-0.7, len(rows) - 0.3)
    fig.suptitle("Answer prompts side by side, the same contexts (95% bootstrap intervals)", fontsize=10)
    return fig


def _dots(ax: object, y: np.ndarray, points: np.ndarray, texts: list[str], color: str) -> None:
    """Points (rows: value, low, high) with their intervals, each labelled right of its interval."""
    m, lo, hi = points
    lo, hi = np.where(np.isnan(lo), m, lo), np.where(np.isnan(hi), m, hi)
    ax.errorbar(m, y, xerr=np.vstack([m - lo, hi - m]), fmt="o", color=color, capsize=3)  # type: ignore[attr-defined]
    for yi, hii, text in zip(y, hi, texts):
        ax.annotate(text, (hii, yi), xytext=(5, 0), textcoords="offset points",  # type: ignore[attr-defined]
                    va="center", fontsize=8)
