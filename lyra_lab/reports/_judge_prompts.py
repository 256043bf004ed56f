"""Judge-prompt sensitivity: the same answers under each judge prompt, one table and one figure.

A run whose ``[qa] judges`` name several prompts (lyra-lab's own ``correct_wrong_v1``, mem0's
``mem0_locomo``, LongMemEval's ``longmemeval_v1``, ``strict_v1``, …) has every answer graded by
each.  Compared only on the answers every judge graded (paired):

* ``prompt_accuracy(df)``: J per pipeline under each judge, with its 95% cluster-bootstrap interval
  (whole conversations resampled, ``lyra_lab.stats.cluster_bootstrap_ci``; each answer its own unit
  when all come from one conversation) and n;
* ``prompt_differences(df)``: each judge's J minus the reference judge's (lyra-lab's default prompt
  when it is among them, else the first judge), per pipeline and over all pipelines, from the
  per-answer differences with the same cluster-bootstrap interval: how much of a gap is the judge;
* ``prompt_figure(...)``: one figure, a row per judge: J per pipeline (a panel each) and the paired
  difference to the reference (last panel), each point labelled with its value, each panel with
  its n (paired: the same answers under every judge).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from lyra_lab.measures import DEFAULT_JUDGE_PROMPT, JUDGE_PROMPTS
from lyra_lab.reports._agreement import EXACT_MATCH, verdicts_wide
from lyra_lab.reports._figures import FIGURE_WIDTH, new_figure, save, wrap_label
from lyra_lab.stats import cluster_bootstrap_ci

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ALL = "all pipelines"
MAX_PANELS = 4  # pipelines drawn one panel each; more are drawn pooled (ALL) only
INTERVAL = ("95% cluster-bootstrap interval (whole conversations resampled; answers, when they come from one "
            "conversation; 1000 resamples, seed 0)")


def judge_prompts(df: pd.DataFrame) -> dict[str, str]:
    """Judge label → the name of its prompt (from the ``judge_prompt`` column; ``""`` when not recorded)."""
    judged = df[df["metric"] == "judge"]
    if "judge_prompt" not in judged.columns:
        return {str(j): "" for j in judged["judge"].dropna().unique()} if "judge" in judged.columns else {}
    pairs = judged[["judge", "judge_prompt"]].dropna().drop_duplicates("judge")
    return {str(j): str(p) for j, p in zip(pairs["judge"], pairs["judge_prompt"])}


def prompt_source(prompt: str) -> str:
    """Where a judge prompt comes from (its ``source``), or ``unknown``."""
    known = JUDGE_PROMPTS.get(prompt)
    return known.source if known is not None else "unknown"


def reference_judge(judges: list[str], prompts: dict[str, str]) -> str:
    """The judge others are compared to: the one with lyra-lab's default prompt, else the first."""
    own = [j for j in judges if prompts.get(j) == DEFAULT_JUDGE_PROMPT]
    return own[0] if own else judges[0]


def _paired(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    wide = verdicts_wide(df)
    judges = [c for c in wide.columns if c != EXACT_MATCH]
    return wide.dropna(subset=judges).reset_index(), judges


def _cluster(frame: pd.DataFrame) -> pd.Series:
    """Conversations, or each answer its own unit when the answers come from one conversation (or none named)."""
    if "conversation_id" in frame.columns and frame["conversation_id"].nunique() > 1:
        return frame["conversation_id"]
    return pd.Series(range(len(frame)), index=frame.index)


def _groups(complete: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    return [*((str(p), part) for p, part in complete.groupby("pipeline", sort=True)), (ALL, complete)]


def prompt_accuracy(df: pd.DataFrame) -> pd.DataFrame:
    """J per pipeline (and over all, ``ALL``) under each judge: ``pipeline, judge, prompt, n, j, low, high``."""
    complete, judges = _paired(df)
    prompts = judge_prompts(df)
    records = []
    for pipeline, part in _groups(complete):
        for judge in judges:
            ci = cluster_bootstrap_ci(part[judge].to_numpy(float), _cluster(part))
            records.append({"pipeline": pipeline, "judge": judge, "prompt": prompts.get(judge, ""), "n": ci.n,
                            "j": ci.mean, "low": ci.low, "high": ci.high})
    return pd.DataFrame.from_records(records, columns=["pipeline", "judge", "prompt", "n", "j", "low", "high"])


def prompt_differences(df: pd.DataFrame) -> pd.DataFrame:
    """Each judge's J minus the reference's on the same answers: ``pipeline, judge, reference, n, diff, low, high``."""
    complete, judges = _paired(df)
    reference = reference_judge(judges, judge_prompts(df))
    records = []
    for pipeline, part in _groups(complete):
        for judge in judges:
            if judge == reference:
                continue
            diff = part[judge].to_numpy(float) - part[reference].to_numpy(float)
            ci = cluster_bootstrap_ci(diff, _cluster(part))
            records.append({"pipeline": pipeline, "judge": judge, "reference": reference, "n": ci.n,
                            "diff": ci.mean, "low": ci.low, "high": ci.high})
    return pd.DataFrame.from_records(records, columns=["pipeline", "judge", "reference", "n", "diff", "low", "high"])


def prompt_figure(accuracy: pd.DataFrame, differences: pd.DataFrame, path: Path) -> Path | None:
    """``draw_prompt_figure`` saved at ``path`` (None when there is nothing to draw)."""
    if accuracy.empty:
        return None
    return save(draw_prompt_figure(accuracy, differences), path)


def draw_prompt_figure(accuracy: pd.DataFrame, differences: pd.DataFrame) -> Figure:
    """J under each judge (a row each; a panel per pipeline) and the paired differences to the reference."""
    pipelines = [p for p in dict.fromkeys(accuracy["pipeline"]) if p != ALL]
    panels = pipelines if len(pipelines) <= MAX_PANELS and len(pipelines) > 1 else [ALL]
    judges = list(dict.fromkeys(accuracy["judge"]))
    reference = str(differences["reference"].iloc[0]) if not differences.empty else judges[0]
    ncols = len(panels) + (0 if differences.empty else 1)
    fig = new_figure(figsize=(min(FIGURE_WIDTH, max(7.0, 3.3 * ncols)), 0.7 * len(judges) + 1.6), layout="constrained")
    axes = fig.subplots(1, ncols, sharey=True, squeeze=False)[0]
    y = np.arange(len(judges))[::-1]
    for ax, pipeline in zip(axes, panels):
        part = accuracy[accuracy["pipeline"] == pipeline].set_index("judge").loc[judges]
        _dots(ax, y, part[["j", "low", "high"]], "C0")
        ax.set_xlim(0.0, 1.3)
        ax.set_xticks([0.0, 0.5, 1.0])
        # paired: every judge graded the same answers, so one n per panel
        ax.set_title(wrap_label(pipeline, 24) + f"\nn={int(part['n'].max())} answers", fontsize=9)
        ax.set_xlabel("judged accuracy J")
    if not differences.empty:
        ax = axes[-1]
        part = differences[differences["pipeline"] == ALL].set_index("judge")
        rows = [j for j in judges if j in part.index]
        ys = np.array([y[judges.index(j)] for j in rows])
        _dots(ax, ys, part.loc[rows, ["diff", "low", "high"]], "C3", signed=True)
        ax.axvline(0.0, color="0.6", linewidth=0.8)
        if reference in judges:
            ax.annotate("reference", (0.0, y[judges.index(reference)]), xytext=(5, 0), textcoords="offset points",
                        va="center", fontsize=8, color="0.4")
        ax.set_xlim(-1.0, 1.3)
        ax.set_xticks([-1.0, 0.0, 1.0])
        n = int(part["n"].max()) if len(part) else 0
        ax.set_title(wrap_label(f"minus {reference}", 24) + f"\npaired, {ALL}, n={n}", fontsize=9)
        ax.set_xlabel("difference in J")
    prompts = dict(zip(accuracy["judge"], accuracy["prompt"]))
    names = [j if prompts.get(j) in ("", j) or j.startswith(f"{prompts[j]}@") else f"{j}\n({prompts[j]})"
             for j in judges]
    axes[0].set_yticks(y, [wrap_label(name, 26) for name in names])
    axes[0].set_ylim(-0.7, len(judges) - 0.3)
    fig.suptitle("The same answers under each judge prompt (95% bootstrap intervals)", fontsize=10)
    return fig


def _dots(ax: object, y: np.ndarray, points: pd.DataFrame, color: str, signed: bool = False) -> None:
    """Points (columns: value, low, high) with their intervals, each labelled right of it with its value."""
    m, lo, hi = (points.iloc[:, i].to_numpy(float) for i in range(3))
    ax.errorbar(m, y, xerr=np.vstack([m - lo, hi - m]), fmt="o", color=color, capsize=3)  # type: ignore[attr-defined]
    for yi, mi, hii in zip(y, m, np.where(np.isnan(hi), m, hi)):
        ax.annotate(f"{mi:+.2f}" if signed else f"{mi:.2f}", (hii, yi), xytext=(5, 0),  # type: ignore[attr-defined]
                    textcoords="offset points", va="center", fontsize=8)
