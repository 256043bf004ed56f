"""The schemas of what runs write to disk, in one place every floor reads them from.

A run folder (``lyra_lab.experiments.RunFolder``) holds:

* ``lyra-run.json``: the folder's schema version (``RUN_FOLDER``, a bare ``schema_version``
  field that older lyra-lab versions read); it also versions the files without an envelope
  of their own: ``rows/<cell_id>.jsonl``, ``attempts.jsonl`` and ``log.jsonl``.
* ``spec.json``: the resolved experiment (``SPEC``, an envelope; no envelope is version 1).
* ``cache/``: the response cache and the embedding cache, SQLite files whose
  ``PRAGMA user_version`` is their version (``RESPONSE_CACHE``, ``EMBEDDING_CACHE``; 0, a file
  written before it was set, is version 1).
* ``report/``: Markdown, HTML and figures made from the rows (derived; remade on demand).

A bench result folder holds ``spec.json`` (``BENCH_RESULT``, an envelope; none is version 1),
``records.parquet``, ``summary.csv`` and figures.

>>> SPEC.unwrap({"schema": "experiment/1", "name": "x"})
{'name': 'x'}
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from lyra_lab._records import RecordError, Schema

#: The run folder schema lyra-lab writes and reads (1: before attempts were recorded; 2: one tidy row a
#: line in ``rows/<cell_id>.jsonl``; 3: a cell's rows grouped, ``lyra_lab.runs.CellRows``).  Folders of
#: versions 1 and 2 are refused in one line: run them again with ``--fresh``.
RUN_FOLDER_VERSION = 3
RUN_FOLDER = Schema("run_folder", RUN_FOLDER_VERSION, version_key="schema_version",
                    older="run it again with --fresh", hint=", or choose another --run-dir")
SPEC = Schema("experiment", 1, legacy=1)  # spec.json: ExperimentSpec.to_dict() and the corpus hash
BENCH_RESULT = Schema("bench_result", 1, legacy=1)  # a bench folder's spec.json: the sweep's meta
RESPONSE_CACHE = Schema("response_cache", 1, legacy=1, version_key="user_version")
EMBEDDING_CACHE = Schema("embedding_cache", 1, legacy=1, version_key="user_version")


def read_spec(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The fields of a run's ``spec.json`` (with or without its envelope).

    Raises:
        OSError: the file cannot be read.
        RecordError: (a ``ConfigError``) not JSON, or a version this lyra-lab does not read.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordError(f"{path}: not a JSON experiment record ({exc})") from None
    return SPEC.unwrap(data, path)
