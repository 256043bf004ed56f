"""``figure_problems(fig)``: what makes a drawn figure hard to read, found from what matplotlib drew.

The figure is drawn once (on an Agg canvas when it has none) while every text actually drawn
is recorded with its window extent, so tick labels outside the view and empty strings do not
count.  Reported, each as a ``FigureProblem``:

* ``overlapping text`` — two drawn texts (titles, axis and tick labels, annotations, direct
  labels, a legend taken as one box) whose boxes intersect by more than a pixel each way;
* ``legend over data`` — a legend box that covers a point, a line, a band or a bar of an axes;
* ``hidden series`` — a line or marker set drawn exactly over another one of the same axes
  (every point within half the upper line's width): identical series must be drawn once;
* ``invisible series`` — a line or marker set with data that cannot be seen: fully transparent,
  of zero width and size, or with every point outside its axes' view.

The tests run it on every figure of a demo report and of every notebook's small mode; anyone
can run it on their own figures.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

_OVERLAP_PX = 1.0  # intersections thinner than this (either way) are anti-aliasing, not overlap
_MIN_LINE_PX = 3.0  # a line shorter than this either way is a dot


@dataclass(frozen=True)
class FigureProblem:
    """One thing wrong with a figure: ``kind`` (see the module docstring) and what, where."""

    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


@dataclass(frozen=True)
class _Box:
    name: str
    bbox: Any  # matplotlib Bbox in display pixels
    owner: Any  # the artist it belongs to


def _describe(text: Any) -> str:
    words = " ".join(str(text.get_text()).split())
    return repr(words if len(words) <= 60 else words[:57] + "...")


@contextlib.contextmanager
def _recording_texts() -> Iterator[list[Any]]:
    """Every ``Text`` drawn inside the block, with a non-empty visible string, in draw order."""
    from matplotlib.text import Text

    drawn: list[Any] = []
    original = Text.draw

    def draw(self: Any, renderer: Any) -> None:
        original(self, renderer)
        if self.get_visible() and str(self.get_text()).strip():
            drawn.append(self)

    Text.draw = draw  # type: ignore[method-assign]
    try:
        yield drawn
    finally:
        Text.draw = original  # type: ignore[method-assign]


@contextlib.contextmanager
def _agg_canvas(fig: Any) -> Iterator[Any]:
    """The figure's renderer: its own canvas's when it has one, else a temporary Agg canvas's."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas
    if hasattr(canvas, "get_renderer"):
        yield canvas
        return
    temporary = FigureCanvasAgg(fig)
    try:
        yield temporary
    finally:
        fig.set_canvas(canvas)


def figure_problems(fig: Any) -> list[FigureProblem]:
    """Everything ``fig`` draws that a reader cannot read or see (see the module docstring)."""
    from matplotlib.legend import Legend
    from matplotlib.text import Text

    with _agg_canvas(fig) as canvas, _recording_texts() as drawn:
        canvas.draw()
        renderer = canvas.get_renderer()
        legends = [a for a in fig.findobj(Legend) if a.get_visible()]
        in_legend = {id(t) for lg in legends for t in [*lg.get_texts(), lg.get_title()]}
        # Text's own extent: an annotation's would include its arrow (a leader line is not text)
        boxes = [_Box(_describe(t), Text.get_window_extent(t, renderer), t) for t in drawn if id(t) not in in_legend]
        boxes += [_Box(f"legend ({len(lg.get_texts())} entries)", lg.get_window_extent(renderer), lg)
                  for lg in legends]
        problems = _overlaps(boxes)
        for lg in legends:
            problems += _legend_over_data(fig, lg, lg.get_window_extent(renderer))
        for ax in fig.axes:
            if ax.get_visible():
                problems += _series_problems(ax, renderer)
    return problems


def _overlaps(boxes: list[_Box]) -> list[FigureProblem]:
    out = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            width = min(a.bbox.x1, b.bbox.x1) - max(a.bbox.x0, b.bbox.x0)
            height = min(a.bbox.y1, b.bbox.y1) - max(a.bbox.y0, b.bbox.y0)
            if width > _OVERLAP_PX and height > _OVERLAP_PX:
                out.append(FigureProblem("overlapping text", f"{a.name} and {b.name} ({width:.0f}×{height:.0f} px)"))
    return out


def _points(artist: Any) -> np.ndarray:
    """An artist's data as display points (N×2), finite ones only."""
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D

    if isinstance(artist, Line2D):
        xy = np.asarray(artist.get_xydata(), dtype=float).reshape(-1, 2)
        pts = artist.get_transform().transform(xy) if len(xy) else xy
    elif isinstance(artist, Collection):
        offsets = np.asarray(artist.get_offsets(), dtype=float).reshape(-1, 2)
        if len(offsets) and len(artist.get_paths()) == 1 and not _is_area(artist):  # markers at offsets
            pts = artist.get_offset_transform().transform(offsets)
        else:
            verts = [np.asarray(p.vertices, dtype=float) for p in artist.get_paths()]
            verts = [v.reshape(-1, 2) for v in verts if v.size]
            xy = np.concatenate(verts) if verts else np.empty((0, 2))
            pts = artist.get_transform().transform(xy) if len(xy) else xy
    else:
        return np.empty((0, 2))
    return pts[np.isfinite(pts).all(axis=1)]


def _is_area(collection: Any) -> bool:
    from matplotlib.collections import LineCollection, PolyCollection

    return isinstance(collection, (PolyCollection, LineCollection))


def _legend_over_data(fig: Any, legend: Any, box: Any) -> list[FigureProblem]:
    inner = box.padded(-2)
    out = []
    for ax in fig.axes:
        if not ax.get_visible() or not ax.bbox.overlaps(inner):
            continue
        covered = []
        for artist in [*ax.lines, *ax.collections]:
            if not artist.get_visible():
                continue
            pts = _points(artist)
            inside_axes = pts[_inside(pts, ax.bbox)] if len(pts) else pts
            if len(inside_axes) and _inside(inside_axes, inner).any():
                covered.append(artist)
            elif _crosses(artist, inner):
                covered.append(artist)
        covered += [p for p in ax.patches if p.get_visible() and p.get_window_extent().overlaps(inner)]
        if covered:
            out.append(FigureProblem("legend over data", f"the legend covers {len(covered)} series of the axes "
                                                         f"titled {ax.get_title()!r}"))
    return out


def _crosses(artist: Any, box: Any) -> bool:
    """A line drawn through ``box`` between two of its points (no point inside)."""
    from matplotlib.lines import Line2D

    if not isinstance(artist, Line2D) or not _has_line(artist):
        return False
    path = artist.get_transform().transform_path(artist.get_path())
    return bool(path.intersects_bbox(box, filled=False))


def _inside(pts: np.ndarray, box: Any) -> np.ndarray:
    return (pts[:, 0] >= box.x0) & (pts[:, 0] <= box.x1) & (pts[:, 1] >= box.y0) & (pts[:, 1] <= box.y1)


def _series(ax: Any) -> list[Any]:
    """The axes' data series that carry data, in draw order (z-order, then the order they were added)."""
    items = [a for a in [*ax.lines, *ax.collections] if a.get_visible() and len(_points(a))]
    return sorted(items, key=lambda a: a.get_zorder())  # sorted() is stable: insertion order within a z-order


def _series_problems(ax: Any, renderer: Any) -> list[FigureProblem]:
    out = []
    title = ax.get_title() or ax.get_ylabel() or "untitled axes"
    series = _series(ax)
    px_per_pt = renderer.points_to_pixels(1.0)
    for artist in series:
        why = _invisible(artist, ax)
        if why:
            out.append(FigureProblem("invisible series", f"{_name(artist)} in {title!r}: {why}"))
    from matplotlib.lines import Line2D

    lines = [a for a in series if isinstance(a, Line2D)]
    # the parts of one error bar (its two caps on a narrow interval) are one series, not two
    bar_of = {id(part): i for i, c in enumerate(ax.containers) if type(c).__name__ == "ErrorbarContainer"
              for part in (c.lines[1] or ())}
    for i, low in enumerate(lines):
        for high in lines[i + 1:]:
            if id(low) in bar_of and bar_of.get(id(high)) == bar_of[id(low)]:
                continue
            if _covers(high, low, px_per_pt):
                out.append(FigureProblem("hidden series", f"{_name(low)} is drawn under {_name(high)} with the same "
                                                          f"values in {title!r}"))
                break
    return out


def _name(artist: Any) -> str:
    """The series' label, else what it is and where its data starts (data coordinates)."""
    label = str(artist.get_label() or "")
    if label and not label.startswith("_"):
        return f"series {label!r}"
    from matplotlib.lines import Line2D

    if isinstance(artist, Line2D):
        xy = np.asarray(artist.get_xydata(), dtype=float).reshape(-1, 2)
        kind = "line" if _has_line(artist) else "marker set"
        start = f" from ({xy[0, 0]:.4g}, {xy[0, 1]:.4g})" if len(xy) else ""
        return f"an unlabelled {kind} of {len(xy)} point(s){start}"
    return f"an unlabelled {type(artist).__name__}"


def _has_line(line: Any) -> bool:
    return line.get_linestyle() not in ("None", "", " ", "none") and line.get_linewidth() > 0


def _has_marker(line: Any) -> bool:
    return line.get_marker() not in (None, "None", "", " ", "none") and line.get_markersize() > 0


def _invisible(artist: Any, ax: Any) -> str | None:
    from matplotlib.lines import Line2D

    alpha = artist.get_alpha()
    if alpha is not None and alpha <= 0:
        return "alpha 0"
    if isinstance(artist, Line2D):
        if not _has_line(artist) and not _has_marker(artist):
            return "no line and no marker"
    else:
        sizes = getattr(artist, "get_sizes", lambda: None)()
        if sizes is not None and len(sizes) and not _is_area(artist) and np.all(np.asarray(sizes) <= 0):
            return "marker size 0"
    if artist.get_clip_on():
        pts = _points(artist)
        box = ax.bbox.padded(1)
        if len(pts) and not _inside(pts, box).any() and not (isinstance(artist, Line2D) and _crosses(artist, box)):
            return "every point outside the axes' view"
    return None


def _covers(high: Any, low: Any, px_per_pt: float) -> bool:
    """``high`` is drawn over ``low`` at the same points (within half ``high``'s line or marker width).

    A line is covered only by a line, markers only by markers of the same shape: a line's own
    markers drawn as a separate set do not hide it, nor does a point sitting on another
    series' error-bar cap.
    """
    if (_has_line(low) and not _has_line(high)) or (_has_marker(low) and not _has_marker(high)):
        return False
    if _has_marker(low) and low.get_marker() != high.get_marker():
        return False
    a, b = _points(low), _points(high)
    if len(a) != len(b) or not len(a):
        return False
    if not _has_marker(low) and np.ptp(a, axis=0).max() < _MIN_LINE_PX:
        return False  # a line squeezed to a dot (a box of nearly equal values): nothing a reader would miss
    width = max(high.get_linewidth() if _has_line(high) else 0.0, high.get_markersize() if _has_marker(high) else 0.0)
    tolerance = max(0.5, 0.5 * width * px_per_pt)
    return bool(np.all(np.abs(a - b) <= tolerance))
