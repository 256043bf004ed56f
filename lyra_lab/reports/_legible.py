"""What makes a figure readable at a glance, shared by every figure lyra-lab draws.

The report's figures, the bench sweep and the notebooks all use these:

* ``group_identical``: series with the same values (pipelines whose results coincide) become
  one ``SeriesGroup``, drawn once; ``group_label`` names the group (``*`` for a part that takes
  every value the figure has, ``{a,b}`` for some of them, ``×N`` for its size).
* ``short_labels``: pipeline labels without the parts every one of them shares.
* ``label_lines``: direct labels beside an axes, one per series, at the series' height and
  moved apart just enough that no two overlap (a thin leader line joins a moved label to its
  point), instead of a legend to match colours against.
* ``SMALL_N``, ``is_small``, ``small_marker``, ``ci_point``, ``shade_small``: values resting on
  fewer than ``SMALL_N`` observations drawn hollow, or hatched and greyed, with their n written;
  an interval of no width drawn as its point alone (``_figures.error_bars`` for bars).
* ``n_phrase``: "n = 7 probes each" when every series rests on the same count, else the range.

``spread`` is the one-dimensional placement behind ``label_lines``; it is pure and tested alone.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

SMALL_N = 10  # fewer observations than this behind a value: drawn hollow / hatched, its n written beside it
_SEPARATORS = re.compile(r"([+|])")


@dataclass(frozen=True)
class SeriesGroup:
    """Series whose values are identical, drawn once: ``members`` in first-seen order, ``label`` for all."""

    members: tuple[str, ...]
    label: str

    @property
    def first(self) -> str:
        return self.members[0]


@dataclass(frozen=True)
class LineLabel:
    """A direct label: the data point it names (``x``, ``y``), its text and colour."""

    x: float
    y: float
    text: str
    color: Any = "black"


def _key(values: Iterable[Any], digits: int) -> tuple:
    out: list[Any] = []
    for v in values:
        if isinstance(v, float) and math.isnan(v):
            out.append(None)
        elif isinstance(v, (int, float)):
            out.append(round(float(v), digits))
        else:
            out.append(v)
    return tuple(out)


def group_identical(series: Mapping[str, Sequence[Any]], *, digits: int = 9, tolerance: float = 0.0,
                    universe: Sequence[str] | None = None) -> list[SeriesGroup]:
    """Group the series of ``series`` (name → its values, in a fixed order) that have identical values.

    Values are compared after rounding to ``digits`` decimals (NaN equals NaN).  With a
    ``tolerance``, a series also joins a group with a member it is within ``tolerance`` of at
    every position (numbers only; anything else must be equal): lines closer than a line's
    width cannot be told apart, so they are one line.  Groups keep the order in which their
    first member appears; each is labelled by ``group_label`` against ``universe`` (default:
    every name in ``series``).

    >>> print("; ".join(g.label for g in group_identical({"a+x": [1, 2], "b+x": [1, 2], "a+y": [0, 2]})))
    *+x ×2; a+y
    >>> print(" ".join(group_identical({"p": [0.5, 0.7], "q": [0.501, 0.7]}, tolerance=0.005)[0].members))
    p q
    """
    groups: dict[tuple, list[str]] = {}
    members: dict[tuple, list[Sequence[Any]]] = {}
    for name, values in series.items():
        key = _key(values, digits)
        if key not in groups and tolerance > 0:
            key = next((k for k, seen in members.items() if any(_close(v, values, tolerance) for v in seen)), key)
        groups.setdefault(key, []).append(name)
        members.setdefault(key, []).append(values)
    names = list(universe) if universe is not None else list(series)
    return [SeriesGroup(tuple(m), group_label(m, names)) for m in groups.values()]


def _close(a: Sequence[Any], b: Sequence[Any], tolerance: float) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        numbers = isinstance(x, (int, float)) and isinstance(y, (int, float)) and not isinstance(x, bool)
        if numbers:
            if math.isnan(x) or math.isnan(y):
                if not (math.isnan(x) and math.isnan(y)):
                    return False
            elif abs(x - y) > tolerance:
                return False
        elif x != y:
            return False
    return True


def _parts(label: str) -> list[str]:
    return _SEPARATORS.split(str(label))


def group_label(members: Sequence[str], universe: Sequence[str] = ()) -> str:
    """One label for pipelines whose results coincide.

    Labels split at ``+`` and ``|``; a part the members share is kept, a part they vary in
    becomes ``*`` when they take every value ``universe`` has there, else ``{a,b}``.  When
    those sets do not multiply out to exactly the members, the first member is named with a
    count.  More than one member ends in ``×N``.

    >>> group_label(["tb+sp|dense", "tw+sp|dense"], ["tb+sp|dense", "tw+sp|dense", "tb+mr|dense"])
    '*+sp|dense ×2'
    """
    members = list(dict.fromkeys(str(m) for m in members))
    if len(members) == 1:
        return members[0]
    split = [_parts(m) for m in members]
    shape = len(split[0])
    same_shape = all(len(s) == shape for s in split) and all(
        s[i] == split[0][i] for s in split for i in range(1, shape, 2))
    if same_shape:
        others = [p for p in map(_parts, universe) if len(p) == shape]
        out, combos = [], 1
        for i in range(shape):
            values = sorted({s[i] for s in split})
            if i % 2 or len(values) == 1:
                out.append(values[0])
                continue
            combos *= len(values)
            every = sorted({p[i] for p in others} | set(values))
            out.append("*" if values == every else "{" + ",".join(values) + "}")
        if combos == len(members):
            return "".join(out) + f" ×{len(members)}"
    return f"{members[0]} and {len(members) - 1} more, identical"


def short_labels(labels: Sequence[str]) -> tuple[dict[str, str], str]:
    """``labels`` without the parts every one of them shares, and those shared parts as a pattern.

    >>> short_labels(["tb+none|dense", "tw+none|bm25"])
    ({'tb+none|dense': 'tb|dense', 'tw+none|bm25': 'tw|bm25'}, '…+none|…')
    """
    labels = list(dict.fromkeys(str(x) for x in labels))
    split = [_parts(x) for x in labels]
    if len(labels) < 2 or len({len(s) for s in split}) != 1:
        return {x: x for x in labels}, ""
    shape = len(split[0])
    shared = [i % 2 == 0 and len({s[i] for s in split}) == 1 for i in range(shape)]
    if not any(shared) or all(shared[i] for i in range(0, shape, 2)):
        return {x: x for x in labels}, ""
    short = {}
    for label, parts in zip(labels, split):
        kept: list[str] = []
        for i in range(0, shape, 2):
            if shared[i]:
                continue
            if kept:  # the separator before this part, or the one after the dropped part before it
                kept.append(parts[i - 1])
            kept.append(parts[i])
        short[label] = "".join(kept)
    pattern = "".join(split[0][i] if i % 2 or shared[i] else "…" for i in range(shape))
    return short, re.sub(r"(…[+|]?)+…", "…", pattern)


def spread(targets: Sequence[float], sizes: Sequence[float], low: float, high: float) -> list[float]:
    """Centres for labels of ``sizes`` as close as possible to ``targets`` without overlapping, within [low, high].

    One-dimensional: labels keep their order; a run of labels that would overlap is placed as a
    block centred on its targets (least squares), then pushed inside the bounds.  When they do
    not fit between the bounds they start at ``low`` and run past ``high``.

    >>> spread([0.0, 0.1, 5.0], [1.0, 1.0, 1.0], -10, 10)
    [-0.45, 0.55, 5.0]
    """
    order = sorted(range(len(targets)), key=lambda i: (targets[i], i))
    blocks: list[list[int]] = []
    bottoms: list[float] = []

    def placed(block: list[int]) -> float:
        offsets, total = [], 0.0
        for i in block:
            offsets.append(total + sizes[i] / 2)
            total += sizes[i]
        bottom = sum(targets[i] - o for i, o in zip(block, offsets)) / len(block)
        return min(max(bottom, low), max(low, high - total))

    for i in order:
        blocks.append([i])
        bottoms.append(placed([i]))
        while len(blocks) > 1 and bottoms[-2] + sum(sizes[j] for j in blocks[-2]) > bottoms[-1] + 1e-12:
            merged = blocks[-2] + blocks[-1]
            blocks[-2:] = [merged]
            bottoms[-2:] = [placed(merged)]
    centres = [0.0] * len(targets)
    for block, bottom in zip(blocks, bottoms):
        for i in block:
            centres[i] = round(bottom + sizes[i] / 2, 12)
            bottom += sizes[i]
    return centres


def label_lines(ax: Any, labels: Sequence[LineLabel], *, fontsize: float = 7.5, x: float = 1.02,
                pad_pt: float = 2.0) -> list[Any]:
    """Write each label beside ``ax`` (at axes fraction ``x``) at its point's height, none overlapping.

    Labels are spread vertically (``spread``) in points, from the axes' current size and
    limits, so set limits and scales first.  A label moved off its point's height gets a
    leader line to the point.  Returns the annotations.
    """
    if not labels:
        return []
    fig = ax.figure
    if fig.get_layout_engine() is not None:
        fig.draw_without_rendering()  # the final axes size, from the layout
    height_pt = ax.get_position().height * fig.get_figheight() * 72
    to_fraction = ax.transScale + ax.transLimits  # data -> axes fraction, whatever the layout
    ys = [float(to_fraction.transform((label.x, label.y))[1]) * height_pt for label in labels]
    sizes = [(label.text.count("\n") + 1) * fontsize * 1.2 + pad_pt for label in labels]
    centres = spread(ys, sizes, 0.0, height_pt)
    out = []
    for label, y_pt, centre in zip(labels, ys, centres):
        moved = abs(centre - y_pt) > 1.0
        out.append(ax.annotate(
            label.text, xy=(label.x, label.y), xycoords="data", xytext=(x, centre / height_pt),
            textcoords="axes fraction", va="center", ha="left", fontsize=fontsize, color=ink(label.color),
            annotation_clip=False,
            arrowprops={"arrowstyle": "-", "color": label.color, "lw": 0.5, "alpha": 0.5,
                        "shrinkA": 1, "shrinkB": 3} if moved else None))
    return out


def ink(color: Any, darken: float = 0.3) -> tuple[float, float, float]:
    """``color`` darkened for text: a label in a line's pale colour (tab20's light half) is hard to read.

    >>> ink((1.0, 0.5, 0.0))
    (0.7, 0.35, 0.0)
    """
    from matplotlib.colors import to_rgb

    return tuple(round(c * (1 - darken), 6) for c in to_rgb(color))  # type: ignore[return-value]


def is_small(n: Any) -> bool:
    """True when ``n`` observations are too few for an interval to mean much (``n < SMALL_N``)."""
    try:
        return float(n) < SMALL_N
    except (TypeError, ValueError):
        return False


def small_marker(n: Any, color: Any) -> dict[str, Any]:
    """Marker keywords for a point resting on ``n`` values: hollow when ``n`` is small, filled otherwise."""
    return {"mfc": "white" if is_small(n) else color, "mec": color, "color": color}


def ci_point(ax: Any, x: float, y: float, low: float, high: float, n: Any, color: Any, *,
             horizontal: bool = False, ms: float = 5.5, marker: str = "o", **kwargs: Any) -> None:
    """A point with its 95% CI, hollow when ``n`` is small; no bar when the interval has no width.

    A bar of zero width would draw its two caps on top of each other (a series drawn but unseen);
    the point alone says the same.  ``horizontal``: the interval runs along x (``x`` is the value).
    """
    value = x if horizontal else y
    if low == low and high == high and high - low > 1e-12:  # NaN != NaN: no interval
        err = [[value - low], [high - value]]
        ax.errorbar([x], [y], **({"xerr": err} if horizontal else {"yerr": err}), fmt="none", ecolor=color,
                    elinewidth=1.1, capsize=2.5, zorder=2)
    ax.plot([x], [y], marker, ms=ms, zorder=3, **small_marker(n, color), **kwargs)


def shade_small(ax: Any, x: float, y: float, width: float = 1.0, height: float = 1.0) -> Any:
    """Grey out and hatch the cell centred on (x, y) of a heatmap or bar, to mark a small n."""
    from matplotlib.patches import Rectangle

    patch = Rectangle((x - width / 2, y - height / 2), width, height, facecolor=(1, 1, 1, 0.55),
                      edgecolor=(0.35, 0.35, 0.35, 0.6), hatch="///", lw=0)
    ax.add_patch(patch)
    return patch


def n_phrase(counts: Iterable[Any], unit: str = "probes", *, each: bool = True) -> str:
    """``"n = 7 probes each"``, or ``"n = 3–7 probes"`` when the counts differ (NaN and 0 ignored).

    ``each=False`` leaves out the word "each" (for "n = 7 requests per level").

    >>> n_phrase([7, 7]), n_phrase([3, 7.0, float("nan")])
    ('n = 7 probes each', 'n = 3–7 probes')
    """
    values = sorted({int(c) for c in counts if c is not None and not (isinstance(c, float) and math.isnan(c)) and c})
    if not values:
        return f"n = 0 {unit}"
    if len(values) == 1:
        return f"n = {values[0]} {unit.removesuffix('s') if values[0] == 1 else unit}" + (" each" if each else "")
    return f"n = {values[0]}–{values[-1]} {unit}"


def small_note(counts: Iterable[Any], how: str = "hollow") -> str:
    """A caption fragment when some value rests on fewer than ``SMALL_N`` observations, else ``""``."""
    return f"; {how}: n < {SMALL_N}" if any(is_small(c) for c in counts if c) else ""
