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
from typing import TYPE_CHECKING, Any, Hashable, Iterable, Sequence

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure

FIGURE_WIDTH = 10.0  # inches: a page with margins, at the report's dpi
DPI = 110


def new_figure(**kwargs: Any) -> Figure:
    """A standalone figure (no pyplot, no global backend switch); ``save`` writes it."""
    from matplotlib.figure import Figure

    return Figure(**kwargs)


def panel_grid(n: int, panel_h: float, *, width: float = FIGURE_WIDTH, ncols: int | None = None,
               ) -> tuple[Figure, np.ndarray]:
    """A constrained-layout figure of ``n`` panels, ``width`` inches wide: one column up to 3 panels, else two.

    Returns ``(fig, axes)`` with ``axes`` a 2-d array sharing both axes; panels past ``n`` are
    hidden, and the panel above a hidden one keeps its x tick labels.
    """
    ncols = ncols or (1 if n <= 3 else 2)
    nrows = -(-n // ncols)
    fig = new_figure(figsize=(width, panel_h * nrows + 1.0), layout="constrained")
    axes = fig.subplots(nrows=nrows, ncols=ncols, sharex=True, sharey=True, squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
        above = axes[-2, list(axes[-1]).index(ax)] if nrows > 1 else None
        if above is not None:
            above.xaxis.set_tick_params(labelbottom=True)
    return fig, axes


def bottom_axes(axes: np.ndarray) -> list[Axes]:
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


def simulated_note(simulated: dict[str, bool], pipelines: Iterable[object], how: str) -> str:
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


def save(fig: Figure, path: Path) -> Path:
    """Write ``fig`` as a PNG at ``path`` ("tight": labels outside the axes stay in the file)."""
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    return path


def error_bars(mean: Sequence[float], low: Sequence[float], high: Sequence[float]) -> np.ndarray:
    """``yerr``/``xerr`` for ``bar``/``errorbar``: a 2×n array, NaN where an interval has no width (or is missing).

    A bar of zero width draws its two caps on top of each other; NaN draws none.

    >>> error_bars([0.5, 0.0], [0.25, 0.0], [0.75, 0.0]).tolist()
    [[0.25, nan], [0.25, nan]]
    """
    m, lo, hi = (np.asarray(v, dtype=float) for v in (mean, low, high))
    below, above = np.clip(m - lo, 0, None), np.clip(hi - m, 0, None)
    none = ~(np.nan_to_num(below + above) > 1e-12)
    return np.vstack([np.where(none, np.nan, below), np.where(none, np.nan, above)])


_LOG_SUBS = ((1.0, 1.5, 2.0, 3.0, 5.0, 7.0), (1.0, 2.0, 5.0), (1.0, 3.0), (1.0,))
_TICK_GAP_EM = 0.8  # room between two tick labels, in ems of their font


def _log_ticks(low: float, high: float, subs: tuple[float, ...], stride: int) -> list[float]:
    """``sub × 10^k`` within [low, high], every ``stride``-th decade (plain-number labels: ``{x:g}``)."""
    import math

    ticks = []
    for k in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1):
        if k % stride:
            continue
        ticks += [float(f"{sub * 10.0 ** k:.12g}") for sub in subs]
    return [t for t in sorted(ticks) if low <= t <= high]


def fitting_log_ticks(low: float, high: float, length_pt: float, font_pt: float, vertical: bool) -> list[float]:
    """The finest log ticks between ``low`` and ``high`` whose labels fit an axis ``length_pt`` long.

    Finest means, in order: 1, 1.5, 2, 3, 5, 7 × 10^k (only within one decade), 1, 2, 5 × 10^k (up to
    three decades), 1, 3 × 10^k, every decade, then every 2nd, 3rd … decade.  Labels fit when
    neighbours are at least half their widths apart plus ``_TICK_GAP_EM`` (``vertical``: the height of
    a line), judged by their text (``{x:g}``) at ``font_pt``, an em each digit at most 0.6.

    >>> fitting_log_ticks(1e-4, 1e-2, 100, 8, False)
    [0.0001, 0.001, 0.01]
    >>> fitting_log_ticks(1e-4, 1e-2, 600, 8, False)[:3]
    [0.0001, 0.0002, 0.0005]
    """
    import math

    span = math.log10(high / low)
    finest = 0 if span <= 1 else 1 if span <= 3 else 3

    def fits(ticks: list[float]) -> bool:
        at = [length_pt * math.log10(t / low) / span for t in ticks]
        size = [font_pt * (1.2 if vertical else 0.6 * len(f"{t:g}")) for t in ticks]
        gap = _TICK_GAP_EM * font_pt
        return all(at[i + 1] - at[i] >= (size[i] + size[i + 1]) / 2 + gap for i in range(len(at) - 1))

    for subs in _LOG_SUBS[finest:]:
        ticks = _log_ticks(low, high, subs, 1)
        if len(ticks) >= 2 and fits(ticks):
            return ticks
    for stride in range(2, 1 + max(2, math.ceil(span))):
        ticks = _log_ticks(low, high, (1.0,), stride)
        if fits(ticks):
            return ticks
    return _log_ticks(low, high, (1.0,), max(1, math.ceil(span)))


def _fitting_log_locator(axis: Axis) -> Any:
    """A locator giving ``fitting_log_ticks`` for ``axis`` at its size when drawn (after the layout)."""
    from matplotlib.ticker import Locator

    class FittingLogLocator(Locator):
        def __call__(self) -> Any:
            low, high = sorted(axis.get_view_interval())
            return self.tick_values(low, high)

        def tick_values(self, vmin: float, vmax: float) -> Any:
            low, high = sorted((vmin, vmax))
            if not (low > 0 and high > low):
                return []
            box = axis.axes.bbox
            vertical = axis is axis.axes.yaxis
            dpi = axis.axes.figure.dpi
            length_pt = (box.height if vertical else box.width) / dpi * 72
            tick = axis.majorTicks[0] if axis.majorTicks else None
            font_pt = float(tick.label1.get_fontsize()) if tick is not None else 10.0
            return fitting_log_ticks(low, high, length_pt, font_pt, vertical)

    return FittingLogLocator()


def log_axis(axis: Axis) -> None:
    """Put ``axis`` (``ax.xaxis`` or ``ax.yaxis``) on a log scale with ticks written as plain numbers.

    Call it once the data is drawn.  The ticks suit the span and the axis' drawn length
    (``fitting_log_ticks``, chosen when the figure is drawn, after its layout): 1, 1.5, 2, 3, 5, 7 ×
    10^k within one decade, 1, 2, 5 × 10^k up to three, every decade past that, and coarser whenever
    the labels would otherwise touch.
    """
    from matplotlib.ticker import NullFormatter

    axis.axes.set_xscale("log") if axis is axis.axes.xaxis else axis.axes.set_yscale("log")
    axis.set_major_locator(_fitting_log_locator(axis))
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
