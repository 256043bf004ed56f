"""``load_results(run_dir)``: the tidy long frame of a run, from ``rows/`` (cached as results.parquet).

The per-cell JSONL files are the truth (a cell's rows grouped, or one row a line in a
folder of version 1 or 2; ``_rows_table`` builds the frame's table from either);
``results.parquet`` is derived from
them and rebuilt whenever the set of cells it was built from differs from the
files in ``rows/`` (recorded in the parquet's metadata) or a row file is newer.
Rows name the run ``attempt`` that wrote them; rows of a version-1 folder (written
before attempts were recorded) get attempt 0.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from lyra_lab.evaluate import read_row_records
from lyra_lab.experiments._rows_table import ReadAhead, pool, rows_table
from lyra_lab.experiments._runfolder import schema_version

ID_COLUMNS = ("run", "cell_id", "pipeline", "chunker", "summarizer", "rollup", "recaller", "backend", "embedder",
              "seed", "corpus", "conversation_id", "probe_id", "category", "metric", "value", "simulated", "attempt")
_META_KEY = b"lyra_lab_cells"
_SORT = ["cell_id", "pipeline", "conversation_id", "probe_id", "metric"]


def load_results(run_dir: str | os.PathLike[str], write: bool = True, ahead: ReadAhead | None = None) -> pd.DataFrame:
    """All finished cells' rows of ``run_dir`` as one tidy frame (sorted, typed).

    Args:
        run_dir: the run folder.
        write: (re)write ``results.parquet`` when it is missing or stale.
        ahead: rows files parsed already (the runner's, as cells landed); unchanged ones are not read again.

    Raises:
        FileNotFoundError: no such folder.
        ConfigError: a run folder of a schema version this lyra-lab cannot read.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    run_dir = Path(run_dir)
    rows_dir = run_dir / "rows"
    if not run_dir.is_dir():
        raise FileNotFoundError(f"{run_dir}: no such run folder")
    schema_version(run_dir)
    files = sorted(rows_dir.glob("*.jsonl")) if rows_dir.is_dir() else []
    cells = sorted(f.stem for f in files)
    parquet = run_dir / "results.parquet"
    if parquet.exists():
        meta = pq.read_schema(parquet).metadata or {}
        newest = max((f.stat().st_mtime for f in files), default=0.0)
        if meta.get(_META_KEY) == json.dumps(cells).encode() and parquet.stat().st_mtime >= newest:
            return pd.read_parquet(parquet)
    df = _frame(files, ahead)
    if not files:
        return df
    table = pa.Table.from_pandas(df, preserve_index=False)
    # The frame returned is the one the parquet holds, so a fresh build and a cached read agree exactly.
    df = table.to_pandas(memory_pool=pool())
    if write:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), _META_KEY: json.dumps(cells).encode()})
        tmp = parquet.with_name(f".results.{os.getpid()}.tmp")
        # One row group: its min/max statistics could skip nothing, and cost a third of the write.
        pq.write_table(table, tmp, write_statistics=False)
        os.replace(tmp, parquet)
    return df


def _frame(files: list[Path], ahead: ReadAhead | None = None) -> pd.DataFrame:
    built = rows_table(files, ahead)
    if built is None:
        records = read_row_records(files)  # a ResultsFormatError (ValueError) names file and line
        if not records:
            return pd.DataFrame({c: pd.Series(dtype="object") for c in ID_COLUMNS})
        df = pd.DataFrame.from_records(records)
    else:
        df = built.table.to_pandas(memory_pool=pool())
    if "attempt" not in df.columns:
        df["attempt"] = 0  # written before attempts were recorded (a version-1 folder)
    for col in ID_COLUMNS:
        if col not in df.columns:
            df[col] = ""
    df["attempt"] = df["attempt"].fillna(0).astype(int)
    df["value"] = df["value"].astype(float)
    df["simulated"] = df["simulated"].astype(bool)
    df["seed"] = df["seed"].astype(int)
    for col in ("probe_id", "category"):
        df[col] = df[col].fillna("").astype(str)
    params = sorted(c for c in df.columns if c not in ID_COLUMNS)
    for col in params:
        if df[col].dtype != object:
            continue  # a typed column (numbers, bools, Arrow strings) holds one kind of value
        kinds = {type(v) for v in df[col].dropna()}
        if len(kinds) > 1 and not kinds <= {int, float}:
            # One parameter name holding different types across strategies: keep it readable, not lossy.
            df[col] = df[col].map(lambda v: None if v is None or (isinstance(v, float) and v != v) else str(v))
    df = df[list(ID_COLUMNS) + params]
    if built is not None and built.sorted:
        return df.reset_index(drop=True)
    return df.sort_values(_SORT, kind="stable").reset_index(drop=True)
