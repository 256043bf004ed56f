"""Both SQLite caches under 16 concurrent writers (8 threads + 8 processes) on overlapping keys.

Every writer writes and reads back keys shared with the others, at once; each
key's value is a function of the key alone, so whoever wrote it last, a read
must return it exactly (no torn row, no "database is locked").
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np

from lyra_lab.backends import Completion, EmbeddingCache, ResponseCache, Usage

KEYS = 48  # shared by all writers
OPS = 40  # writes (each followed by reads) per writer and cache

# The worker, run in threads here and as a script in child processes.
WORKER = textwrap.dedent('''
    import random, time
    from pathlib import Path

    import numpy as np

    from lyra_lab.backends import Completion, EmbeddingCache, ResponseCache, Usage

    def completion_for(k):
        return Completion(text=f"answer {k} " + "x" * (k * 37 % 500), usage=Usage(k, 2 * k, k / 1e6, calls=1),
                          latency_s=k / 100, backend="b", model="m", meta={"k": k})

    def vector_for(k):
        return np.random.default_rng(k).standard_normal(96).astype(np.float32)

    def work(folder, writer, start_at):
        rng = random.Random(writer)
        while time.time() < start_at:
            time.sleep(0.001)
        with ResponseCache(Path(folder) / "responses.sqlite") as rc, \\
                EmbeddingCache(Path(folder) / "embeddings.sqlite") as ec:
            for _ in range(OPS):
                k = rng.randrange(KEYS)
                rc.put(f"key-{k}", completion_for(k))
                ec.put_many("emb", "passage", [(f"sha-{k}", vector_for(k)), (f"sha-{(k + 1) % KEYS}",
                                                                            vector_for((k + 1) % KEYS))])
                j = rng.randrange(KEYS)
                got = rc.get(f"key-{j}")
                if got is not None:
                    want = completion_for(j)
                    assert (got.text, got.usage.prompt_tokens, got.usage.completion_tokens, got.latency_s,
                            dict(got.meta)["k"]) == (want.text, j, 2 * j, want.latency_s, j), f"torn row {j}"
                for sha, vec in ec.get_many("emb", "passage", [f"sha-{j}", f"sha-{k}"]).items():
                    assert np.array_equal(vec, vector_for(int(sha.split("-")[1]))), f"torn vector {sha}"
                assert f"sha-{k}" in ec.get_many("emb", "passage", [f"sha-{k}"]), "own write not visible"
''').replace("OPS", str(OPS)).replace("KEYS", str(KEYS))


def test_sixteen_writers_threads_and_processes_round_trip_exactly(tmp_path):
    import time

    namespace: dict = {}
    exec(compile(WORKER, "cache_worker", "exec"), namespace)
    start_at = time.time() + 4.0  # children need ~1-2 s to import; all start together
    script = tmp_path / "worker.py"
    script.write_text(WORKER + "\nimport sys\nwork(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))\n"
                      "print('ok')\n", encoding="utf-8")
    children = [subprocess.Popen([sys.executable, str(script), str(tmp_path), str(100 + i), repr(start_at)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(8)]
    errors: list[BaseException] = []

    def thread_worker(i: int) -> None:
        try:
            namespace["work"](str(tmp_path), i, start_at)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=thread_worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    outputs = [c.communicate(timeout=300) for c in children]
    assert not errors, errors
    for child, (out, err) in zip(children, outputs, strict=True):
        assert child.returncode == 0 and out.strip() == "ok", err[-3000:]

    # every key any writer wrote is there, exactly
    with ResponseCache(tmp_path / "responses.sqlite") as rc, \
            EmbeddingCache(tmp_path / "embeddings.sqlite") as ec:
        assert 0 < len(rc) <= KEYS and 0 < len(ec) <= KEYS
        for k in range(KEYS):
            got = rc.get(f"key-{k}")
            if got is not None:
                assert got.text == namespace["completion_for"](k).text
        vectors = ec.get_many("emb", "passage", [f"sha-{k}" for k in range(KEYS)])
        for sha, vec in vectors.items():
            assert np.array_equal(vec, namespace["vector_for"](int(sha.split("-")[1])))
    import sqlite3

    for name in ("responses.sqlite", "embeddings.sqlite"):
        with sqlite3.connect(tmp_path / name) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_busy_file_is_retried_not_raised(tmp_path):
    """Another connection holds the write lock for a while: a put waits for it instead of failing."""
    import sqlite3
    import time

    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        blocker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        blocker.execute("BEGIN IMMEDIATE")
        released = threading.Timer(0.5, lambda: blocker.execute("COMMIT"))
        released.start()
        began = time.monotonic()
        cache.put("k", Completion(text="t", usage=Usage(1, 1, 0.0, calls=1), latency_s=0.1, backend="b",
                                  model="m"))
        assert time.monotonic() - began >= 0.4  # it waited for the lock
        released.join()
        blocker.close()
        assert cache.get("k").text == "t"


def test_many_caches_opened_at_once_on_a_new_file(tmp_path):
    """Opening (journal mode switch, schema) races between connections; none may fail."""
    errors: list[BaseException] = []

    def open_and_write(i: int) -> None:
        try:
            with EmbeddingCache(Path(tmp_path) / "e.sqlite") as ec:
                ec.put_many("emb", "passage", [(f"s{i}", np.full(4, i, dtype=np.float32))])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_and_write, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    with EmbeddingCache(tmp_path / "e.sqlite") as ec:
        assert len(ec) == 16
