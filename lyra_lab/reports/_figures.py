"""The report's figure plumbing: standalone figures, panel grids, pipeline labels, saving.

Figures are ``matplotlib.figure.Figure`` objects drawn on their own Agg canvas, never
through ``pyplot``: writing a report must not switch the caller's backend or touch
rcParams (a notebook's later ``plt.show()`` must still work).  Pipeline names are long
(``token_budget+map_reduce+none|dense``): they are wrapped at ``+``/``|`` and shortened
by ``_legible.short_labels``, never rotated.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Hashable, Iterable, Sequence

FIGURE_WIDTH = 10.0  # inches: a page with margins, at the report's dpi
DPI = 110


def new_figure(**kwargs: Any) -> Any:
    """A standalone figure (no pyplot, no global backend switch); ``save`` writes it."""
    from matplotlib.figure import Figure

    return Figure(**kwargs)


def panel_grid(n: int, panel_h: float, *, width: float = FIGURE_WIDTH, ncols: int | None = None,
               sharex: bool = True, sharey: bool = True) -> tuple[Any, Any]:
    """A constrained-layout figure of ``n`` panels, ``width`` inches wide: one column up to 3 panels, else two.

    Returns ``(fig, axes)`` with ``axes`` a 2-d array; panels past ``n`` are hidden, and the
    panel above a hidden one keeps its x tick labels.
    """
    ncols = ncols or (1 if n <= 3 else 2)
    nrows = -(-n // ncols)
    fig = new_figure(figsize=(width, panel_h * nrows + 1.0), layout="constrained")
    axes = fig.subplots(nrows=nrows, ncols=ncols, sharex=sharex, sharey=sharey, squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
        above = axes[-2, list(axes[-1]).index(ax)] if nrows > 1 else None
        if above is not None:
            above.xaxis.set_tick_params(labelbottom=True)
    return fig, axes


def bottom_axes(axes: Any) -> list[Any]:
    """The lowest visible panel of each column: where the x label goes."""
    return [next(ax for ax in column[::-1] if ax.get_visible()) for column in axes.T]


def wrap_label(label: str, width: int = 28) -> str:
    """Break a pipeline label after ``+``/``|`` (or ``,`` in a group's ``{a,b}``), lines of ~``width`` characters."""
    parts = re.split(r"(?<=[+|,])", str(label))
    lines, line = [], ""
    for part in parts:
        if line and len(line) + len(part) > width:
            lines.append(line)
            line = ""
        line += part
    return "\n".join(lines + [line])


def split_pipeline(label: str) -> tuple[str, str]:
    """``"memory|recaller[|backend=x]"`` → ``("memory", "recaller[|backend=x]")`` (facet key second)."""
    memory, _, rest = str(label).partition("|")
    return memory, rest


def without_recaller(label: str) -> str:
    """``"memory|recaller|backend=x"`` → ``"memory|backend=x"``: what a memory's recallers share."""
    parts = str(label).split("|")
    return "|".join(parts[:1] + parts[2:])


def simulated_note(simulated: dict[str, bool], pipelines: Any, how: str) -> str:
    """``" — all simulated"`` when every pipeline shown is, ``"; <how>: simulated"`` when some are, else ``""``."""
    flags = [bool(simulated.get(str(p))) for p in pipelines]
    if flags and all(flags):
        return " — all simulated (latency and cost not real)"
    return f"; {how}: simulated" if any(flags) else ""


def fit_text(text: str, width_in: float, fontsize: float = 10.0) -> str:
    """``text`` with each line wrapped to fit ``width_in`` inches at ``fontsize`` points (average glyph width)."""
    import textwrap

    chars = max(20, int(width_in * 72 / (0.52 * fontsize)))
    return "\n".join(textwrap.fill(line, chars, break_on_hyphens=False) for line in text.split("\n"))


def save(fig: Any, path: Path) -> Path:
    """Write ``fig`` as a PNG at ``path`` ("tight": labels outside the axes stay in the file)."""
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    return path


def error_bars(mean: Sequence[float], low: Sequence[float], high: Sequence[float]) -> Any:
    """``yerr``/``xerr`` for ``bar``/``errorbar``: a 2×n array, NaN where an interval has no width (or is missing).

    A bar of zero width draws its two caps on top of each other; NaN draws none.

    >>> error_bars([0.5, 0.0], [0.25, 0.0], [0.75, 0.0]).tolist()
    [[0.25, nan], [0.25, nan]]
    """
    import numpy as np

    m, lo, hi = (np.asarray(v, dtype=float) for v in (mean, low, high))
    below, above = np.clip(m - lo, 0, None), np.clip(hi - m, 0, None)
    none = ~(np.nan_to_num(below + above) > 1e-12)
    return np.vstack([np.where(none, np.nan, below), np.where(none, np.nan, above)])


def log_axis(axis: Any) -> None:
    """Put ``axis`` (``ax.xaxis`` or ``ax.yaxis``) on a log scale with ticks written as plain numbers.

    Call it once the data is drawn: the ticks suit the span — every decade past three decades,
    1, 2, 5 × 10^k down to one decade, and 1, 1.5, 2, 3, 5, 7 × 10^k within one.
    """
    import math

    from matplotlib.ticker import LogLocator, NullFormatter

    axis.axes.set_xscale("log") if axis is axis.axes.xaxis else axis.axes.set_yscale("log")
    low, high = sorted(axis.get_view_interval())
    span = math.log10(high / low) if low > 0 and high > 0 else 3.0
    subs = (1.0,) if span > 3 else (1.0, 2.0, 5.0) if span > 1 else (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter("{x:g}")
    axis.set_minor_formatter(NullFormatter())


def stable_colors(keys: Iterable[Hashable]) -> dict[Hashable, Any]:
    """One colour per key, in first-seen order (tab10, then tab20, then a continuous map)."""
    from matplotlib import colormaps

    keys = list(dict.fromkeys(keys))
    n = len(keys)
    if n <= 10:
        colors = [colormaps["tab10"](i) for i in range(n)]
    elif n <= 20:
        colors = [colormaps["tab20"](i) for i in range(n)]
    else:
        colors = [colormaps["turbo"](i / max(1, n - 1)) for i in range(n)]
    return dict(zip(keys, colors))
