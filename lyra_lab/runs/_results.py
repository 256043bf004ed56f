"""``load_results(run_dir)``: the tidy long frame of a run, the one reader of its rows.

The per-cell files ``rows/<cell_id>.jsonl`` are the truth (a cell's rows as groups, see
``_cell_rows``); ``results.parquet`` is derived from them and rebuilt whenever the set of
cells it was built from differs from the files in ``rows/`` (recorded in the parquet's
metadata) or a rows file is newer.  The frame has one row per run × pipeline ×
conversation × probe × metric: the identifying columns (``ID_COLUMNS``), then every
strategy parameter as a column of its own.
"""

from __future__ import annotations

import json
import os
from itertools import chain
from pathlib import Path

import numpy as np
import pandas as pd

from lyra_lab.runs._cell_rows import RowGroup, read_cell_rows
from lyra_lab.runs._folder import schema_version

ID_COLUMNS = ("run", "cell_id", "pipeline", "chunker", "summarizer", "rollup", "recaller", "backend", "embedder",
              "seed", "corpus", "conversation_id", "probe_id", "category", "metric", "value", "simulated", "attempt")
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
    import pyarrow as pa
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
    table = pa.Table.from_pandas(tidy_frame(groups), preserve_index=False)
    # The frame returned is the one the parquet holds, so a fresh build and a cached read agree exactly.
    df = table.to_pandas()
    if write and files:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), _META_KEY: cells})
        tmp = parquet.with_name(f".results.{os.getpid()}.tmp")
        pq.write_table(table, tmp)
        os.replace(tmp, parquet)
    return df


def tidy_frame(groups: list[RowGroup]) -> pd.DataFrame:
    """The tidy rows of ``groups`` as a frame: each group's columns repeated for each of its metrics."""
    counts = [len(g.metric) for g in groups]
    names = list(dict.fromkeys(chain(ID_COLUMNS, *(g.columns for g in groups))))
    data: dict[str, object] = {}
    for name in names:
        if name in ("metric", "value"):
            continue
        per_group = np.empty(len(groups), dtype=object)
        per_group[:] = [g.columns.get(name) for g in groups]
        data[name] = np.repeat(per_group, counts)
    data["metric"] = np.array(list(chain.from_iterable(g.metric for g in groups)), dtype=object)
    data["value"] = np.fromiter(chain.from_iterable(g.value for g in groups), dtype=float, count=sum(counts))
    df = pd.DataFrame(data).infer_objects()
    df["attempt"] = pd.to_numeric(df["attempt"]).fillna(0).astype(int)
    df["seed"] = pd.to_numeric(df["seed"]).fillna(0).astype(int)
    df["simulated"] = df["simulated"].fillna(False).astype(bool)
    for col in ("run", "cell_id", "pipeline", "chunker", "summarizer", "rollup", "recaller", "backend", "embedder",
                "corpus", "conversation_id", "probe_id", "category", "metric"):
        df[col] = df[col].fillna("").astype(str)
    params = sorted(c for c in df.columns if c not in ID_COLUMNS)
    for col in params:
        kinds = {type(v) for v in df[col].dropna()} if df[col].dtype == object else set()
        if len(kinds) > 1 and not kinds <= {int, float}:
            # One parameter name holding different types across strategies: keep it readable, not lossy.
            df[col] = df[col].map(lambda v: None if v is None or (isinstance(v, float) and v != v) else str(v))
    df = df[list(ID_COLUMNS) + params]
    return df.sort_values(_SORT, kind="stable").reset_index(drop=True)
