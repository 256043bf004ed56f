"""``load_results(run_dir)``: the tidy long frame of a run, the one reader of its rows.

The per-cell files ``rows/<cell_id>.jsonl`` are the truth (a cell's rows as groups, see
``_cell_rows``); ``results.parquet`` is derived from them and rebuilt whenever the set of
cells it was built from differs from the files in ``rows/`` (recorded in the parquet's
metadata) or a rows file is newer.  The frame has one row per run × pipeline ×
conversation × probe × metric: the identifying columns (``ID_COLUMNS``), then every
strategy parameter as a column of its own.  ``degraded`` counts the fallbacks and failed calls
behind a row's cell × recaller (0: none; rows written before it was counted read as 0); the
counts per kind are the conversation-level ``degraded.<stage>.<kind>`` metrics.
"""

from __future__ import annotations

import json
import os
from itertools import chain
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from lyra_lab._atomic import replaced
from lyra_lab.runs._cell_rows import RowGroup, read_cell_rows
from lyra_lab.runs._folder import schema_version

ID_COLUMNS = ("run", "cell_id", "pipeline", "chunker", "summarizer", "rollup", "recaller", "backend", "embedder",
              "seed", "corpus", "conversation_id", "probe_id", "category", "metric", "value", "simulated", "attempt",
              "degraded")
_META_KEY = b"lyra_lab_cells"
_SORT = ["cell_id", "pipeline", "conversation_id", "probe_id", "metric"]


class ResultsFormatError(ValueError):
    """Result rows that cannot be read: the message names the file, the place and the problem."""


def load_results(run_dir: str | os.PathLike[str], write: bool = True) -> pd.DataFrame:
    """All finished cells' rows of ``run_dir`` as one tidy frame (sorted, typed).

    Args:
        run_dir: the run folder.
        write: (re)write ``results.parquet`` when it is missing or stale.

    Raises:
        FileNotFoundError: no such folder.
        ConfigError: a run folder of a schema version this lyra-lab cannot read.
        ResultsFormatError: a rows file that cannot be read (its line named).
    """
    import pyarrow.parquet as pq

    run_dir = Path(run_dir)
    rows_dir = run_dir / "rows"
    if not run_dir.is_dir():
        raise FileNotFoundError(f"{run_dir}: no such run folder")
    schema_version(run_dir)
    files = sorted(rows_dir.glob("*.jsonl")) if rows_dir.is_dir() else []
    cells = json.dumps(sorted(f.stem for f in files)).encode()
    parquet = run_dir / "results.parquet"
    if parquet.exists():
        meta = pq.read_schema(parquet).metadata or {}
        newest = max((f.stat().st_mtime for f in files), default=0.0)
        if meta.get(_META_KEY) == cells and parquet.stat().st_mtime >= newest:
            return pd.read_parquet(parquet)
    groups = [g for f in files for g in read_cell_rows(f, ResultsFormatError).groups]
    table = tidy_table(groups)
    df = table.to_pandas()  # the frame the parquet holds, so a fresh build and a cached read agree exactly
    if write and files:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), _META_KEY: cells})
        with replaced(parquet) as tmp:
            pq.write_table(table, tmp)
    return df


def tidy_table(groups: list[RowGroup]) -> pa.Table:
    """The tidy rows of ``groups`` as an Arrow table, sorted by ``_SORT``.

    Each group's columns are repeated for each of its metrics; the sort is stable (a cell's rows
    keep their order within a probe).

    The order is worked out first (groups by their keys, then each row by its group's place and its
    metric), so each column is gathered once, straight into sorted order.
    """
    import pyarrow.compute as pc

    counts = [len(g.metric) for g in groups]
    owner = np.repeat(np.arange(len(groups)), counts)  # each row's group
    group_keys = pa.table({key: _column(key, [g.columns.get(key) for g in groups]) for key in _SORT[:-1]})
    place = np.empty(len(groups), dtype=np.int64)  # each group's place in key order
    place[pc.sort_indices(group_keys, sort_keys=[(key, "ascending") for key in _SORT[:-1]]).to_numpy()] = \
        np.arange(len(groups))
    metric = pa.array(list(chain.from_iterable(g.metric for g in groups)), type=pa.string())
    order = pc.sort_indices(pa.table({"place": place[owner], "metric": metric}),
                            sort_keys=[("place", "ascending"), ("metric", "ascending")])
    rows = pa.array(owner[order.to_numpy()])  # the group of each row, in sorted order
    columns: dict[str, pa.Array] = {}
    for name in dict.fromkeys(chain(ID_COLUMNS, *(g.columns for g in groups))):
        if name not in ("metric", "value"):  # a group's value, repeated for each of its rows
            columns[name] = _column(name, [g.columns.get(name) for g in groups]).take(rows)
    columns["metric"] = metric.take(order)
    value = np.fromiter(chain.from_iterable(g.value for g in groups), dtype=float, count=sum(counts))
    columns["value"] = pa.array(value[order.to_numpy()], type=pa.float64())
    params = sorted(n for n in columns if n not in ID_COLUMNS)
    return pa.table({name: columns[name] for name in [*ID_COLUMNS, *params]})


_STRINGS = ("run", "cell_id", "pipeline", "chunker", "summarizer", "rollup", "recaller", "backend", "embedder",
            "corpus", "conversation_id", "probe_id", "category")


def _column(name: str, values: list[object]) -> pa.Array:
    """One column of the table, typed.

    Identifiers as text (missing: ""), flags and counters as such, a parameter as what its
    values are (text when they mix kinds, so nothing is lost).
    """
    if name in _STRINGS:
        return pa.array(["" if v is None else str(v) for v in values], type=pa.string())
    if name == "simulated":
        return pa.array([bool(v) for v in values], type=pa.bool_())
    if name in ("seed", "attempt", "degraded"):
        return pa.array([0 if v is None else int(v) for v in values], type=pa.int64())  # type: ignore[call-overload]
    kinds = {type(v) for v in values if v is not None}
    if len(kinds) > 1 and not kinds <= {int, float}:
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())
