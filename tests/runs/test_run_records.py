"""Every file a run or a bench writes is versioned, read through ``lyra_lab._records``, and old shapes still read."""

from __future__ import annotations

import json
import sqlite3

import pandas as pd
import pytest

from lyra_lab._records import RecordError, iter_jsonl
from lyra_lab._run_records import BENCH_RESULT, RESPONSE_CACHE, SPEC, read_spec
from lyra_lab.backends import Completion, EmbeddingCache, ResponseCache, Usage
from lyra_lab.bench import BenchResult, load_result
from lyra_lab.runs import run_corpus
from lyra_lab.runs import RunFolder
from lyra_lab.runs import read_log


def test_a_spec_json_reads_with_or_without_its_envelope_and_a_newer_one_is_refused(tmp_path):
    old, new, newer = tmp_path / "old.json", tmp_path / "new.json", tmp_path / "newer.json"
    old.write_text(json.dumps({"name": "x", "aliases": []}), encoding="utf-8")  # written before the envelope
    new.write_text(json.dumps(SPEC.wrap({"name": "x", "aliases": []})), encoding="utf-8")
    newer.write_text(json.dumps({"schema": "experiment/2", "name": "x"}), encoding="utf-8")
    assert read_spec(old) == read_spec(new) == {"name": "x", "aliases": []}
    with pytest.raises(RecordError, match=r"newer.json: experiment schema version 2 is newer than this lyra-lab"):
        read_spec(newer)


def test_the_report_reads_the_corpus_of_an_old_spec_json_without_envelope(tmp_path, corpus_path):
    (tmp_path / "spec.json").write_text(json.dumps({"corpus": {"path": str(corpus_path)}}), encoding="utf-8")
    corpus = run_corpus(tmp_path)
    assert corpus is not None and len(corpus.conversations) >= 1
    (tmp_path / "spec.json").write_text(json.dumps({"schema": "experiment/9", "corpus": {"path": str(corpus_path)}}),
                                        encoding="utf-8")
    assert run_corpus(tmp_path) is None  # a version it cannot read: no corpus, as for a moved one


def test_logs_and_attempts_skip_a_line_cut_short_by_a_kill(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"event": "a"}\n[1, 2]\n{"event": "b"}\n{"event": "c", "cut sh')
    assert [e["event"] for e in read_log(log)] == ["a", "b"]
    assert [e["event"] for e in iter_jsonl(log, keep=lambda raw: b'"b"' in raw)] == ["b"]
    folder = RunFolder(tmp_path / "run")
    folder.prepare()
    folder.attempts_path.write_bytes(b'{"attempt": 1, "python": "3.11"}\n{"attempt": 2, "pyth')
    assert [r["attempt"] for r in folder.attempts()] == [1]
    assert folder.start_attempt(None)["attempt"] == 2
    assert [r["attempt"] for r in folder.attempts()] == [1, 2]


def _records() -> pd.DataFrame:
    return pd.DataFrame({"level": [1], "ok": [True], "latency_s": [0.5]})


def test_a_bench_spec_json_has_an_envelope_and_an_old_one_still_loads(tmp_path, monkeypatch):
    import lyra_lab.bench._results as results

    monkeypatch.setattr(results, "coerce", lambda df: df)  # only spec.json is under test here
    result = BenchResult(_records(), {"backend": {"name": "fake"}, "environment": {"python": "3.11"}})
    monkeypatch.setattr(BenchResult, "summary", lambda self: pd.DataFrame())
    result.save(tmp_path / "new", plots=False)
    written = json.loads((tmp_path / "new" / "spec.json").read_text(encoding="utf-8"))
    assert written["schema"] == "bench_result/1" and written["backend"] == {"name": "fake"}
    assert load_result(tmp_path / "new").meta == result.meta
    old = tmp_path / "old"
    old.mkdir()
    _records().to_parquet(old / "records.parquet", index=False)
    (old / "spec.json").write_text(json.dumps({"backend": {"name": "fake"}}), encoding="utf-8")
    assert load_result(old).meta == {"backend": {"name": "fake"}}
    (old / "spec.json").write_text(json.dumps({"schema": "bench_result/3"}), encoding="utf-8")
    with pytest.raises(RecordError, match=r"bench result schema version 3 is newer than this lyra-lab"):
        load_result(old)
    assert BENCH_RESULT.version_of({}) == 1


def test_a_response_cache_written_before_its_version_reads_and_is_stamped(tmp_path):
    path = tmp_path / "r.sqlite"
    conn = sqlite3.connect(path)  # the table as lyra-lab wrote it before user_version was set
    conn.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, backend TEXT NOT NULL, model TEXT NOT NULL, "
                 "completion TEXT NOT NULL, created REAL NOT NULL)")
    conn.commit()
    conn.close()
    with ResponseCache(path) as cache:
        cache.put("k", Completion(text="hi", usage=Usage(1, 1), latency_s=0.1, backend="b", model="m"))
        assert cache.get("k").text == "hi"
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == RESPONSE_CACHE.version
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 5")
    conn.commit()
    conn.close()
    with pytest.raises(RecordError) as err:
        ResponseCache(path)
    assert str(err.value) == (f"{path}: response cache schema version 5 is newer than this lyra-lab; this lyra-lab "
                              "supports version 1; upgrade lyra-lab to read it")


def test_an_embedding_cache_carries_its_version(tmp_path):
    EmbeddingCache(tmp_path / "e.sqlite")
    assert sqlite3.connect(tmp_path / "e.sqlite").execute("PRAGMA user_version").fetchone()[0] == 1
