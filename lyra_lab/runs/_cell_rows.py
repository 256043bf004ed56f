"""``CellRows``: the tidy rows of one cell, held (and written to ``rows/<cell_id>.jsonl``) as groups.

A cell's tidy rows repeat their identifying columns for every metric: all of LoCoMo
is 210,442 rows of ~30 columns, ~35 metrics of each probe × recaller sharing every
column but ``metric`` and ``value``.  A :class:`RowGroup` holds those shared columns
once and the metrics as two parallel lists, so the rows are built, written, copied
for aliases and read back per group, not per row.

The file (run folder schema version 3) is JSONL: a header line, then one line a group::

    {"columns": {"cell_id": "conv-26-…", "run": …}, "groups": 600, "metrics": [["evidence_recall@1", …], …],
     "rows": 20653, "schema": "cell_rows/1"}
    {"columns": {"pipeline": "…|dense", "probe_id": "conv-26:qa0", …}, "metrics": 0, "value": [0.0, …]}

The header's ``columns`` are those every group shares (same value, same type); a line's
``columns`` the rest of its own.  A group's ``metrics`` is the index of its list of metric
names in the header (a LoCoMo cell's 600 groups use 3 to 5 lists), and ``value`` holds a
value for each name, in order.  Written once each, shared columns and name lists were
three quarters of the bytes.  The header's counts catch a file cut short.  Keys are
sorted (``jsonl_bytes``), but names and values are lists, so a group's rows keep the
order they were made in.

Measured on a LoCoMo cell (20,653 rows, 600 groups): groups a line with every column
were 0.9 MB, written in 5 ms and read back in 10 ms, against 12.7 MB in 37 ms and 59 ms
for a row a line (this shape: 0.24 MB).  Arrow IPC reads in 2 ms, but it is no longer
text a user can read or grep, and the typed table it needs at write time costs what the
JSON read costs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, NamedTuple

from lyra_lab.runs._jsonl import jsonl_bytes
from lyra_lab._records import Schema, jsonl_objects

CELL_ROWS = Schema("cell_rows", 1)


class RowGroup(NamedTuple):
    """Rows sharing every column but ``metric`` and ``value``."""

    columns: dict[str, Any]
    metric: list[str]
    value: list[float]


class CellRows:
    """The tidy rows of one cell, as groups (see the module docstring)."""

    __slots__ = ("groups",)

    def __init__(self, groups: Iterable[RowGroup] = ()):
        self.groups = [g for g in groups if g.metric]

    def add(self, columns: Mapping[str, Any], metrics: Mapping[str, Any]) -> None:
        """Rows ``{**columns, "metric": name, "value": float(value)}`` for each of ``metrics``."""
        if metrics:
            self.groups.append(RowGroup(dict(columns), list(metrics), [float(v) for v in metrics.values()]))

    def __len__(self) -> int:
        """The number of tidy rows."""
        return sum(len(g.metric) for g in self.groups)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CellRows) and self.groups == other.groups

    def __repr__(self) -> str:
        return f"CellRows({len(self.groups)} groups, {len(self)} rows)"

    def set_column(self, name: str, value: object) -> None:
        """Give every row ``name = value``."""
        for g in self.groups:
            g.columns[name] = value

    def map_columns(self, change: Callable[[dict[str, Any]], dict[str, Any]]) -> "CellRows":
        """These rows with each group's columns replaced by ``change(columns)`` (metrics and values kept)."""
        return CellRows(RowGroup(change(dict(g.columns)), list(g.metric), list(g.value)) for g in self.groups)

    def records(self) -> Iterator[dict[str, Any]]:
        """The tidy rows, one dict each (keys sorted, as a row a line was written)."""
        for g in self.groups:
            for metric, value in zip(g.metric, g.value):
                yield dict(sorted({**g.columns, "metric": metric, "value": value}.items()))

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]]) -> "CellRows":
        """Group tidy rows: consecutive rows with the same other columns (and a new metric) share a group."""
        out = cls()
        last: RowGroup | None = None
        for r in records:
            columns = {k: v for k, v in r.items() if k not in ("metric", "value")}
            if last is None or last.columns != columns or r["metric"] in last.metric:
                last = RowGroup(columns, [], [])
                out.groups.append(last)
            last.metric.append(str(r["metric"]))
            last.value.append(float(r["value"]))
        return out

    def to_jsonl(self) -> bytes:
        """The file: a header line, then a line a group (see the module docstring)."""
        shared = self._shared_columns()
        sets: dict[tuple[str, ...], int] = {}
        lines = [{"columns": {k: v for k, v in g.columns.items() if k not in shared},
                  "metrics": sets.setdefault(tuple(g.metric), len(sets)), "value": g.value} for g in self.groups]
        header = CELL_ROWS.wrap({"columns": shared, "groups": len(self.groups), "metrics": [list(m) for m in sets],
                                 "rows": len(self)})
        return jsonl_bytes([header, *lines])

    def _shared_columns(self) -> dict[str, Any]:
        """The columns every group holds with the same value.

        Of the same type too: ``1``, ``1.0`` and ``True`` differ.
        """
        if not self.groups:
            return {}
        shared = dict(self.groups[0].columns)
        for g in self.groups[1:]:
            for k in [k for k, v in shared.items() if k not in g.columns or type(g.columns[k]) is not type(v)
                      or g.columns[k] != v]:
                del shared[k]
        return shared


def read_cell_rows(path: Path, error: type[Exception] = ValueError) -> CellRows:
    """The rows of a ``rows/<cell_id>.jsonl`` file.

    Raises:
        error: one line naming the file and the line (or the header) and the problem.
    """
    records = iter(jsonl_objects(path, path.read_bytes().split(b"\n"), error))
    header = next(records, None)
    if header is None:
        raise error(f"{path}: empty rows file")
    try:
        CELL_ROWS.version_of(header, f"{path}: line 1")
    except ValueError as exc:
        raise error(str(exc)) from None
    sets, shared = header.get("metrics"), header.get("columns")
    if not isinstance(sets, list) or not all(isinstance(m, list) and m for m in sets) or type(shared) is not dict:
        raise error(f"{path}: line 1: not a cell_rows header (expected columns: an object, metrics: a list of "
                    "lists of metric names)")
    groups = [_group(path, n, r, sets, error) for n, r in enumerate(records, start=2)]
    if shared:
        groups = [RowGroup({**shared, **g.columns}, g.metric, g.value) for g in groups]
    n_rows = sum(len(g.metric) for g in groups)
    if header.get("groups") != len(groups) or header.get("rows") != n_rows:
        raise error(f"{path}: holds {len(groups)} groups of {n_rows} rows, its header (line 1) says "
                    f"{header.get('groups')} of {header.get('rows')}: the file is cut short or garbled")
    return CellRows(groups)


def degraded_count(path: Path, error: type[Exception] = ValueError) -> int:
    """The largest ``degraded`` column of a rows file's rows (0: none degraded, or rows that never counted).

    Reads the header alone when every group shares the column (the common case), else the whole file.
    """
    with path.open("rb") as f:
        first = f.readline()
    header = next(iter(jsonl_objects(path, [first], error)), None)
    shared = header.get("columns") if isinstance(header, dict) else None
    if isinstance(shared, dict) and "degraded" in shared:
        return int(shared["degraded"] or 0)
    return max((int(g.columns.get("degraded") or 0) for g in read_cell_rows(path, error).groups), default=0)


def failure_of(path: Path, error: type[Exception] = ValueError) -> str | None:
    """The ``failed.<stage>.<reason>`` metric of a rows file whose cell failed for good (None: it did not).

    A cell failed for good when its rows count a failure that would recur (``failed.*``) and nothing that a
    resume could heal (no ``degraded.*`` kind).  Reads the header alone (it lists every metric name of the file).
    """
    with path.open("rb") as f:
        first = f.readline()
    header = next(iter(jsonl_objects(path, [first], error)), None)
    sets = header.get("metrics") if isinstance(header, dict) else None
    names = [n for names in sets if isinstance(names, list) for n in names] if isinstance(sets, list) else []
    if any(isinstance(n, str) and n.startswith("degraded.") for n in names):
        return None
    return next((n for n in names if isinstance(n, str) and n.startswith("failed.")), None)


def _group(path: Path, n: int, record: dict[str, Any], sets: list[list[str]], error: type[Exception]) -> RowGroup:
    columns, k, value = record.get("columns"), record.get("metrics"), record.get("value")
    if (set(record) != {"columns", "metrics", "value"} or type(columns) is not dict or type(k) is not int
            or not 0 <= k < len(sets) or type(value) is not list or len(value) != len(sets[k])):
        raise error(f"{path}: line {n}: not a row group (expected columns: an object, metrics: an index into "
                    "the header's lists of metric names, value: a list of as many values)")
    return RowGroup(columns, sets[k], value)
