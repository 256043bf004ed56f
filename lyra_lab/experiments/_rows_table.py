"""``rows_table(files)``: a run folder's rows files as one Arrow table of tidy rows, built a group at a time.

Each file's groups (``lyra_lab._cell_rows``) are parsed by pyarrow's JSON reader into a
small table of their shared columns, typed as that reader typed a file of one row a
line (the same values, repeated), and the lists of their metrics and values; a file
of the old shape is read by that reader as before, each row a group of one.  The tidy rows are then one ``take`` of the group table
(a group's columns repeated for each of its metrics) beside the ``metric`` and
``value`` columns, already in the frame's sort order (cell, pipeline, conversation,
probe, metric; stable), computed on integer codes: sorting 210,442 rows of Arrow
strings in pandas cost ~0.35 CPU s of gathering alone.

``None`` means "take the plain path" (``read_row_records`` and pandas), whose errors
name file and line, for whatever that path might read differently: a file pyarrow
cannot parse, columns holding different JSON types, nested values, a missing boolean,
or no rows at all.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import orjson

from lyra_lab._cell_rows import CELL_ROWS, first_line, is_grouped
from lyra_lab._fast_jsonl import jsonl_bytes

GROUP_KEYS = ("cell_id", "pipeline", "conversation_id", "probe_id")  # then metric: the frame's sort


@dataclass(frozen=True)
class RowsTable:
    """The tidy rows; ``sorted`` when they are in the frame's order already."""

    table: Any  # pyarrow.Table
    sorted: bool


@dataclass(frozen=True)
class _Part:
    """One file: its groups' columns, how many rows each group has, and every row's metric and value."""

    groups: Any  # pyarrow.Table
    counts: np.ndarray
    metric: Any  # pyarrow.Array of strings
    value: np.ndarray


class ReadAhead:
    """Rows files parsed before the table is asked for: by the runner as each cell's file lands, while
    the cells in flight elsewhere (worker processes, Ray) leave it waiting, so the end of a run only
    joins them.  A part is used only for the file it was read from, unchanged since (same inode, size
    and modification time); any other file is read when the table is built.  (The run folder replaces
    a rows file by renaming a new one over it, a new inode; a file edited in place to the same size
    within the clock's granularity would look unchanged.)
    """

    def __init__(self) -> None:
        self._parts: dict[Path, tuple[tuple[int, int, int], _Part | None]] = {}

    def read(self, path: Path) -> None:
        """Parse ``path`` now (a file pyarrow cannot parse is left to ``rows_table``, which says so)."""
        import pyarrow as pa

        try:
            key = _identity(path)
            self._parts[path] = (key, _part(path) if key[1] else None)
        except (pa.ArrowException, OSError, ValueError):
            self._parts.pop(path, None)

    def part(self, path: Path) -> _Part | None:
        """``path``'s part, from what was read ahead when the file is unchanged."""
        kept = self._parts.pop(path, None)
        if kept is not None and kept[0] == _identity(path):
            return kept[1]
        return _part(path) if path.stat().st_size else None


def _identity(path: Path) -> tuple[int, int, int]:
    stat = path.stat()
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def rows_table(files: list[Path], ahead: ReadAhead | None = None) -> RowsTable | None:
    """The tidy rows of ``files`` (see the module docstring); None for the plain path.

    ``ahead``: files already parsed (``ReadAhead``); the rest are parsed here.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    parts: list[_Part] = []
    ahead = ahead or ReadAhead()
    try:
        for f in files:
            part = ahead.part(f)
            if part is None and f.stat().st_size:
                return None
            parts += [part] if part is not None else []
        if not parts:
            return None
        groups = pa.concat_tables([p.groups for p in parts], promote_options="default", memory_pool=pool())
    except (pa.ArrowException, OSError, ValueError):
        return None
    if groups.num_rows == 0 or any(pa.types.is_nested(t) for t in groups.schema.types):
        return None
    # A missing boolean (or all-missing) value becomes None here but NaN on the plain path.
    if any((pa.types.is_boolean(c.type) or pa.types.is_null(c.type)) and c.null_count for c in groups.columns):
        return None
    counts = np.concatenate([p.counts for p in parts])
    metric = pa.concat_arrays([p.metric for p in parts], memory_pool=pool())
    value = np.concatenate([p.value for p in parts])
    owner = np.repeat(np.arange(len(counts)), counts)  # each row's group
    order = _order(groups, owner, metric)
    if order is not None:
        owner, metric, value = owner[order], pc.take(metric, order, memory_pool=pool()), value[order]
    table = pc.take(groups, owner, memory_pool=pool())
    table = table.append_column("metric", metric).append_column("value", pa.array(value, memory_pool=pool()))
    return RowsTable(table, order is not None)


def pool() -> Any:
    """The memory the rows table lives in: the system allocator's.

    In a process holding a large heap (a run's, when ``run_experiment`` loads its results), pyarrow's
    default mimalloc pool took ~0.3 CPU s more for the same table (LoCoMo, 210k rows): fresh arenas
    backed by transparent huge pages, which the kernel compacts and zeroes 2 MB at a time on first
    touch; glibc's malloc hands out ordinary pages (0.24 vs 0.55 CPU s beside 3 M live objects).
    """
    import pyarrow as pa

    return pa.system_memory_pool()


def _part(path: Path) -> _Part | None:
    import pyarrow as pa
    import pyarrow.json as pj

    if not is_grouped(first_line(path)):  # one tidy row a line: each row a group of one
        table = pj.read_json(path, memory_pool=pool())
        if "metric" not in table.column_names or "value" not in table.column_names:
            return None
        metric, value = table["metric"].combine_chunks(), table["value"]
        if not pa.types.is_string(metric.type) or not _is_number(value.type):
            return None
        return _Part(table.drop_columns(["metric", "value"]), np.ones(table.num_rows, dtype=np.int64), metric,
                     value.cast(pa.float64()).to_numpy())
    return _grouped_part(path)


def _grouped_part(path: Path) -> _Part | None:
    """A grouped file's part, parsed by pyarrow's JSON reader (each line's columns one struct column, the
    header's shared ones a row, which it types as it typed them a row a line); None, for the plain path,
    unless the file is what its header says (``read_cell_rows`` then names the line at fault)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    head, _, body = path.read_bytes().partition(b"\n")
    header = orjson.loads(head)
    sets, shared = header.get("metrics"), header.get("columns")
    if header != CELL_ROWS.wrap({"columns": shared, "groups": header.get("groups"), "metrics": sets,
                                 "rows": header.get("rows")}) or type(shared) is not dict:
        return None
    if header["groups"] == 0:  # a cell without rows, as an empty file was
        return _Part(pa.table({}), np.zeros(0, dtype=np.int64), pa.array([], pa.string()), np.zeros(0))
    try:
        sets = pa.array(sets, type=pa.list_(pa.string()))
    except (pa.ArrowException, TypeError):
        return None
    table = pj.read_json(io.BytesIO(body), memory_pool=pool())
    if sorted(table.column_names) != ["columns", "metrics", "value"] or table.num_rows != header["groups"]:
        return None
    columns, which, value = (table[name].combine_chunks() for name in ("columns", "metrics", "value"))
    if not (pa.types.is_struct(columns.type) and pa.types.is_integer(which.type) and pa.types.is_list(value.type)
            and _is_number(value.type.value_type)) or columns.null_count or which.null_count or value.null_count:
        return None
    which = which.to_numpy()
    if sets.null_count or not ((which >= 0) & (which < len(sets))).all():
        return None
    counts = pc.list_value_length(sets).to_numpy(zero_copy_only=False)[which]
    if ((counts == 0).any() or int(counts.sum()) != header["rows"]
            or not np.array_equal(counts, pc.list_value_length(value).to_numpy(zero_copy_only=False))):
        return None
    fields = [f.name for f in columns.type]
    if set(shared) & set(fields):
        return None
    # Every group's shared columns, typed by the JSON reader from their one value as it typed them a row a line.
    common = pj.read_json(io.BytesIO(jsonl_bytes([shared])), memory_pool=pool()) if shared else pa.table({})
    common = pc.take(common, np.zeros(len(counts), dtype=np.int64), memory_pool=pool())
    groups = pa.Table.from_arrays([*common.columns, *columns.flatten()], names=[*common.column_names, *fields])
    metric = pc.list_flatten(pc.take(sets, which, memory_pool=pool()), memory_pool=pool())
    values = pc.cast(pc.list_flatten(value, memory_pool=pool()), pa.float64(), memory_pool=pool())
    return _Part(groups, counts.astype(np.int64), metric, values.to_numpy(zero_copy_only=False))


def _is_number(kind: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_integer(kind) or pa.types.is_floating(kind))


def _order(groups: Any, owner: np.ndarray, metric: Any) -> np.ndarray | None:
    """The rows' stable order by cell, pipeline, conversation, probe and metric; None unless those are
    strings without gaps (pandas then sorts what the frame holds after filling them)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    codes = []
    for name in GROUP_KEYS:
        if name not in groups.column_names:
            return None
        column = groups[name]
        if not pa.types.is_string(column.type) or column.null_count:
            return None
        codes.append(np.unique(column.to_numpy(zero_copy_only=False), return_inverse=True)[1].ravel())
    by_keys = np.lexsort(codes[::-1])  # groups in key order; equal keys keep their order
    changed = np.zeros(len(by_keys), dtype=bool)
    for c in codes:
        changed[1:] |= c[by_keys][1:] != c[by_keys][:-1]
    rank = np.empty(len(by_keys), dtype=np.int64)
    rank[by_keys] = np.cumsum(changed)  # groups with the same keys share a rank
    encoded = pc.dictionary_encode(metric, memory_pool=pool())
    names = np.unique(encoded.dictionary.to_numpy(zero_copy_only=False), return_inverse=True)[1].ravel()
    metric_code = names[encoded.indices.to_numpy()]
    return np.argsort(rank[owner] * max(len(names), 1) + metric_code, kind="stable")
