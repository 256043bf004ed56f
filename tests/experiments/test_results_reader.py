"""The pyarrow fast path of load_results reads rows exactly as the plain json path does, or steps aside,
for files of one tidy row a line (run folder versions 1-2) and grouped files (version 3) alike."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from lyra_lab._cell_rows import CellRows
from lyra_lab.experiments import _results

BASE = {"run": "r", "pipeline": "p", "chunker": "turn_window", "summarizer": "none", "rollup": "none",
        "recaller": "bm25", "backend": "fake", "embedder": "hashing", "seed": 0, "corpus": "c",
        "conversation_id": "u0", "simulated": False}


def write(tmp_path, cells, grouped=False):
    rows = tmp_path / "rows"
    rows.mkdir(parents=True, exist_ok=True)
    for cell, records in cells.items():
        path = rows / f"{cell}.jsonl"
        if grouped:
            path.write_bytes(CellRows.from_records(records).to_jsonl())
        else:
            path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return sorted(rows.glob("*.jsonl"))


def plain(files, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(_results, "rows_table", lambda f, ahead=None: None)
        return _results._frame(files)


@pytest.mark.parametrize("params", [
    [{"recaller.k": 5}, {"recaller.k": 7.5}],                      # int and float
    [{"recaller.method": "rrf"}, {"recaller.method": 3}],          # str and int: plain path
    [{"recaller.w": None}, {"recaller.w": 2}],                     # null and int
    [{"recaller.ids": [1, 2]}, {"recaller.ids": [3]}],             # nested: plain path
    [{}, {"x.flag": True}],                                        # missing bool: plain path
    [{"recaller.method": "rrf"}, {}],                              # missing str
    [{"recaller.w": 0.5}, {}],                                     # missing float
])
def test_fast_and_plain_readers_agree(tmp_path, params, monkeypatch):
    cells = {f"u0-{i:012x}": [{**BASE, "cell_id": f"u0-{i:012x}", "probe_id": f"q{j % 2}", "category": "1",
                                "metric": m, "value": j / 3, **p} for j, m in enumerate(["recall@1", "mrr", "mrr"])]
             for i, p in enumerate(params)}
    files = write(tmp_path / "tidy", cells)
    expected = plain(files, monkeypatch)
    pd.testing.assert_frame_equal(_results._frame(files), expected)
    grouped = write(tmp_path / "grouped", cells, grouped=True)
    pd.testing.assert_frame_equal(_results._frame(grouped), expected)
    pd.testing.assert_frame_equal(plain(grouped, monkeypatch), expected)
    # a folder a newer lyra-lab resumed: cells of both shapes
    mixed = write(tmp_path / "mixed", dict(list(cells.items())[:1]), grouped=True)
    mixed = write(tmp_path / "mixed", dict(list(cells.items())[1:]))
    pd.testing.assert_frame_equal(_results._frame(mixed), expected)


def test_invalid_json_still_names_file_and_line(tmp_path):
    files = write(tmp_path, {"u0-000000000000": [{**BASE, "cell_id": "x", "metric": "m", "value": 1.0}]})
    with files[0].open("a", encoding="utf-8") as fh:
        fh.write("{not json\n")
    with pytest.raises(ValueError, match="line 2"):
        _results._frame(files)


@pytest.mark.parametrize("values", [[float("nan"), 1.0], [float("inf"), -0.0]])
def test_values_json_cannot_spell_plainly_read_back_on_both_paths(tmp_path, values, monkeypatch):
    cells = {"u0-000000000000": [{**BASE, "cell_id": "u0-000000000000", "probe_id": "q", "category": "",
                                  "metric": f"m{i}", "value": v} for i, v in enumerate(values)]}
    expected = plain(write(tmp_path / "tidy", cells), monkeypatch)
    grouped = write(tmp_path / "grouped", cells, grouped=True)
    pd.testing.assert_frame_equal(_results._frame(grouped), expected)


def test_grouped_files_take_the_fast_path_already_in_the_frame_order(tmp_path, monkeypatch):
    from lyra_lab.experiments._rows_table import rows_table

    cells = {f"u0-{i:012x}": [{**BASE, "cell_id": f"u0-{i:012x}", "probe_id": p, "category": "1", "metric": m,
                                "value": 1.0, "recaller.k": 5 + i}
                               for p in ("q2", "q10", "") for m in ("recall@1", "mrr", "ndcg")] for i in (1, 0)}
    files = write(tmp_path, cells, grouped=True)
    built = rows_table(files)
    assert built is not None and built.sorted
    pd.testing.assert_frame_equal(_results._frame(files), plain(files, monkeypatch))


def test_files_read_ahead_are_used_only_while_unchanged(tmp_path, monkeypatch):
    from lyra_lab.experiments import _rows_table
    from lyra_lab.experiments._rows_table import ReadAhead

    def cell(i, value):
        cell_id = f"u0-{i:012x}"
        return {cell_id: [{**BASE, "cell_id": cell_id, "probe_id": "q", "category": "1", "metric": m,
                           "value": value} for m in ("recall@1", "mrr")]}

    files = write(tmp_path, {**cell(0, 0.5), **cell(1, 0.25)}, grouped=True)
    ahead = ReadAhead()
    for f in files:
        ahead.read(f)
    # rewritten after it was read ahead, as the run folder writes a file: a new file renamed over it
    [new] = write(tmp_path / "new", cell(1, 0.75), grouped=True)
    new.replace(files[1])
    parsed = []
    real = _rows_table._part
    monkeypatch.setattr(_rows_table, "_part", lambda path: parsed.append(path.name) or real(path))
    frame = _results._frame(files, ahead)
    assert parsed == [files[1].name]  # the unchanged file came from the read-ahead, the changed one was read
    assert frame.set_index(["cell_id", "metric"])["value"].to_dict() == {
        ("u0-000000000000", "mrr"): 0.5, ("u0-000000000000", "recall@1"): 0.5,
        ("u0-000000000001", "mrr"): 0.75, ("u0-000000000001", "recall@1"): 0.75}
    pd.testing.assert_frame_equal(frame, plain(files, monkeypatch))
