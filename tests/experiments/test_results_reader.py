"""The pyarrow fast path of load_results reads rows exactly as the plain json path does, or steps aside."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from lyra_lab.experiments import _results

BASE = {"run": "r", "pipeline": "p", "chunker": "turn_window", "summarizer": "none", "rollup": "none",
        "recaller": "bm25", "backend": "fake", "embedder": "hashing", "seed": 0, "corpus": "c",
        "conversation_id": "u0", "simulated": False}


def write(tmp_path, cells):
    rows = tmp_path / "rows"
    rows.mkdir()
    for cell, records in cells.items():
        (rows / f"{cell}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return sorted(rows.glob("*.jsonl"))


def plain(files):
    fast = _results._read_rows
    try:
        _results._read_rows = lambda f: None
        return _results._frame(files)
    finally:
        _results._read_rows = fast


@pytest.mark.parametrize("params", [
    [{"recaller.k": 5}, {"recaller.k": 7.5}],                      # int and float
    [{"recaller.method": "rrf"}, {"recaller.method": 3}],          # str and int: plain path
    [{"recaller.w": None}, {"recaller.w": 2}],                     # null and int
    [{"recaller.ids": [1, 2]}, {"recaller.ids": [3]}],             # nested: plain path
    [{}, {"x.flag": True}],                                        # missing bool: plain path
    [{"recaller.method": "rrf"}, {}],                              # missing str
    [{"recaller.w": 0.5}, {}],                                     # missing float
])
def test_fast_and_plain_readers_agree(tmp_path, params):
    cells = {f"u0-{i:012x}": [{**BASE, "cell_id": f"u0-{i:012x}", "probe_id": f"q{j}", "category": "1",
                                "metric": "recall@1", "value": j / 3, **p} for j in range(3)]
             for i, p in enumerate(params)}
    files = write(tmp_path, cells)
    pd.testing.assert_frame_equal(_results._frame(files), plain(files))


def test_invalid_json_still_names_file_and_line(tmp_path):
    files = write(tmp_path, {"u0-000000000000": [{**BASE, "cell_id": "x", "metric": "m", "value": 1.0}]})
    with files[0].open("a", encoding="utf-8") as fh:
        fh.write("{not json\n")
    with pytest.raises(ValueError, match="line 2"):
        _results._frame(files)
