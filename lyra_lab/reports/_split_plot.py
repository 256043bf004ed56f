"""``retrieval_and_answering.png``: the split (``_split``) and the distance to the ceilings as one figure.

One row per pipeline, the same rows in every panel (the pipeline and its n named once, at the left):

1. the share of its answered probes whose evidence was in the answerer's context;
2. its accuracy given the evidence was in (green circle) and given it was not (red square);
3. when the grid has ceilings beside it, how far each is above it (``_ceiling_report``: paired, ceiling
   minus pipeline; ``oracle`` ▲, ``full_context`` ▼), a line at 0.

Every value is a mean with its 95% CI (conversations resampled), hollow when it rests on fewer than
``SMALL_N`` probes; a value without probes (no probe had the evidence in context) is left out.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from lyra_lab.reports._ceiling_report import CeilingSection
from lyra_lab.reports._figures import FIGURE_WIDTH, fit_text, new_figure, save, wrap_label
from lyra_lab.reports._legible import Estimate, ci_point, n_phrase, short_labels, small_note
from lyra_lab.reports._split import PipelineSplit, SplitSection
from lyra_lab.stats import BootstrapCI

_IN, _OUT = "tab:green", "tab:red"
_CEILING_MARKS = {"oracle": ("^", "tab:purple"), "full_context": ("v", "tab:brown")}
MAX_ROWS = 16  # pipelines a figure holds legibly
_DODGE = 0.17  # rows: two values of one pipeline in one panel, drawn this far apart


def _estimate(ci: BootstrapCI) -> Estimate | None:
    return None if ci.n == 0 or math.isnan(ci.mean) else Estimate(ci.mean, ci.low, ci.high, ci.n)


def split_figure(split: SplitSection, ceilings: CeilingSection | None, path: Path) -> Path | None:
    """Draw the split (and the ceilings' distances, when given) into ``path``; None without a pipeline."""
    if not split.splits:
        return None
    rows, cut = split.splits, len(split.splits) > MAX_ROWS
    if cut:  # the most accurate pipelines, in the table's order
        def accuracy(s: PipelineSplit) -> float:
            share, a, o = s.share.mean, s.accuracy_in.mean, s.accuracy_out.mean
            return float(np.nansum([share * a, (1 - share) * o]))
        best = set(s.pipeline for s in sorted(rows, key=accuracy, reverse=True)[:MAX_ROWS])
        rows = [s for s in rows if s.pipeline in best]
    distances = ceilings.distances if ceilings is not None else []
    names = sorted({d.ceiling for d in distances})
    ncols = 3 if distances else 2
    short, shared = short_labels([s.pipeline for s in rows])
    labels = [f"{wrap_label(short[s.pipeline], 30)}\n(n={s.share.n}: {s.accuracy_in.n} in, {s.accuracy_out.n} not)"
              for s in rows]
    lines = sum(label.count("\n") + 1 for label in labels)
    fig = new_figure(figsize=(FIGURE_WIDTH, 1.3 + 0.17 * lines + 0.12 * len(rows)), layout="constrained")
    axes = fig.subplots(1, ncols, sharey=True, squeeze=False)[0]
    y = list(range(len(rows)))[::-1]
    for yi, s in zip(y, rows):
        share = _estimate(s.share)
        if share is not None:
            ci_point(axes[0], share, yi, "C0", horizontal=True)
        for offset, ci, color, marker in ((_DODGE, s.accuracy_in, _IN, "o"), (-_DODGE, s.accuracy_out, _OUT, "s")):
            e = _estimate(ci)
            if e is not None:
                ci_point(axes[1], e, yi + offset, color, horizontal=True, marker=marker)
        for j, name in enumerate(names):
            found = next((d for d in distances if d.pipeline == s.pipeline and d.ceiling == name), None)
            e = _estimate(found.distance) if found is not None else None
            if e is not None:
                shift = _DODGE * (1 - 2 * j) if len(names) > 1 else 0.0
                marker, color = _CEILING_MARKS.get(name, ("D", "tab:gray"))
                ci_point(axes[2], e, yi + shift, color, horizontal=True, marker=marker)
    axes[0].set_yticks(y, labels, fontsize=7.5)
    axes[0].set_ylim(-0.6, len(rows) - 0.4)
    axes[0].set_xlim(-0.04, 1.04)
    axes[0].set_xlabel("share with the evidence in context", fontsize=8.5)
    axes[1].set_xlim(-0.04, 1.04)
    axes[1].set_xlabel(f"{split.name} ({split.metric}): evidence in (green ●),\nnot in (red ■)", fontsize=8.5)
    if distances:
        values = [v for d in distances for v in (d.distance.low, d.distance.high, d.distance.mean)
                  if not math.isnan(v)]
        reach = max([abs(v) for v in values] + [0.05]) * 1.1
        axes[2].set_xlim(-reach, reach)
        axes[2].axvline(0, color="0.5", lw=0.8, zorder=1)
        glyphs = {"^": "▲", "v": "▼"}
        marks = ", ".join(f"{name} {glyphs.get(_CEILING_MARKS.get(name, ('D', ''))[0], '◆')}" for name in names)
        axes[2].set_xlabel(f"ceiling minus pipeline, paired\n({marks})", fontsize=8.5)
    for ax in axes:
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(axis="x", labelsize=8)
    counts = [s.share.n for s in rows]
    fig.suptitle(fit_text(f"Retrieval and answering apart: {split.name} ({split.metric})\nmean, 95% CI resampling "
                          f"{split.unit} · {n_phrase(counts)}{small_note(counts)}"
                          + (f" · labels omit what all share: {shared}" if shared else "")
                          + (f" · the {MAX_ROWS} most accurate of {len(split.splits)} pipelines (all in the table)"
                             if cut else ""), FIGURE_WIDTH, 10),
                 fontsize=10)
    return save(fig, path)
