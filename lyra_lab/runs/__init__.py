"""Run folders: what a run writes to disk and the one way to read it back.

A run folder holds ``lyra-run.json`` (its schema version), ``spec.json``, ``attempts.jsonl``,
``log.jsonl`` (the append-only event log, ``RunLog``), ``rows/<cell_id>.jsonl`` (each finished
cell's rows, ``CellRows``, written atomically), ``results.parquet`` (derived) and ``report/``.
``RunFolder`` is the single writer; ``load_results`` is the one reader of the rows, and
``logged_probes`` the reader of the per-probe events the inspector and the HTML report show;
``run_status`` says how far a run got (finished, partial or failed cells); ``export_run`` and
``read_export`` write and read the one file a run is re-scored from.
"""

from lyra_lab.runs._cell_rows import CellRows, RowGroup, read_cell_rows
from lyra_lab.runs._export import (
    Exported,
    copy_inputs,
    export_run,
    is_export,
    read_export,
    restore,
    rows_folder,
    scrub,
)
from lyra_lab.runs._folder import RunFolder, environment, file_sha256, schema_version
from lyra_lab.runs._log import NullLog, RunLog, read_log
from lyra_lab.runs._probe_log import (
    DETAIL_EVENT,
    MAX_TURN_IDS,
    AliasOf,
    LoggedProbes,
    logged_aliases,
    logged_probes,
    run_corpus,
    snip,
    turn_texts,
)
from lyra_lab.runs._results import ID_COLUMNS, ResultsFormatError, load_results
from lyra_lab.runs._status import RunStatus, run_status

__all__ = [
    "Exported",
    "copy_inputs",
    "export_run",
    "is_export",
    "read_export",
    "restore",
    "rows_folder",
    "scrub",
    "DETAIL_EVENT",
    "AliasOf",
    "ID_COLUMNS",
    "MAX_TURN_IDS",
    "CellRows",
    "LoggedProbes",
    "NullLog",
    "ResultsFormatError",
    "RowGroup",
    "RunFolder",
    "RunLog",
    "RunStatus",
    "logged_aliases",
    "environment",
    "file_sha256",
    "load_results",
    "logged_probes",
    "snip",
    "read_cell_rows",
    "read_log",
    "run_corpus",
    "run_status",
    "schema_version",
    "turn_texts",
]
