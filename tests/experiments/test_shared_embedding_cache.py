"""Nothing is embedded twice: runs in different folders share the embedding cache of the user cache
(``LYRA_LAB_CACHE_DIR``, private to the test session); responses stay in each run folder."""

from __future__ import annotations

import pytest

import lyra_lab.backends
from lyra_lab.backends import CachedEmbedder, HashingEmbedder, cache_dir
from lyra_lab.experiments import ExperimentSpec, run_experiment
from lyra_lab.experiments.grid._resources import Resources

GRID = """
name = "dense"
[corpus]
path = "tiny.jsonl"
[grid]
chunkers = [{ name = "turn_window", max_turns = 1 }]
summarizers = ["none"]
recallers = ["dense"]
[run]
backends = ["fake"]
embedders = ["hashing"]
ks = [1, 3]
cache = "MODE"
"""


class CountingEmbedder(HashingEmbedder):
    """A fake (hashing) embedder that counts the texts it is asked to embed."""

    texts = 0

    def embed(self, texts, kind="passage"):
        CountingEmbedder.texts += len(texts)
        return super().embed(texts, kind=kind)


@pytest.fixture
def counting(monkeypatch, tmp_path):
    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path / "user-cache"))  # empty for each test
    CountingEmbedder.texts = 0
    monkeypatch.setattr(lyra_lab.backends, "make_embedder", lambda spec: CountingEmbedder(name="counting"))
    return CountingEmbedder


@pytest.mark.parametrize("mode", ["run", "user"])
def test_a_second_grid_in_a_new_run_folder_embeds_nothing(write_toml, registries, tmp_path, counting, mode):
    spec = ExperimentSpec.from_toml(write_toml(GRID.replace("MODE", mode)), registries)
    first = run_experiment(spec, tmp_path / "first")
    embedded = counting.texts
    assert embedded > 0
    second = run_experiment(spec, tmp_path / "second")
    assert counting.texts == embedded  # the second run's passages and queries all came from the cache
    assert (cache_dir() / "embeddings.sqlite").exists()
    assert not (tmp_path / "second" / "cache" / "embeddings.sqlite").exists()
    def recall(df):
        rows = df[df["metric"].str.startswith("evidence_recall")]
        return sorted(rows[["probe_id", "metric", "value"]].values.tolist())

    assert recall(first) and recall(first) == recall(second)


def test_cache_off_embeds_every_time(write_toml, registries, tmp_path, counting):
    spec = ExperimentSpec.from_toml(write_toml(GRID.replace("MODE", "off")), registries)
    run_experiment(spec, tmp_path / "first")
    embedded = counting.texts
    run_experiment(spec, tmp_path / "second")
    assert counting.texts == 2 * embedded


def test_resources_report_each_cached_embedders_hits_and_misses(tmp_path, counting):
    with Resources("run", tmp_path / "cache") as resources:
        assert resources.embedding_stats() == []
        lazy = resources.embedder("hashing")
        lazy.embed(["a", "b"])
        lazy.embed(["a", "c"])
        [stats] = resources.embedding_stats()
        assert isinstance(lazy.get(), CachedEmbedder)
        assert (stats.embedder, stats.hits, stats.misses) == ("counting-256", 1, 3)


def test_run_done_counts_the_embeddings_of_worker_processes(write_toml, registries, tmp_path, counting):
    """Cells on worker processes embed there: their hits and misses come back with each cell to run_done."""
    import json

    grid = GRID.replace("MODE", "run") + 'executor = "processes"\nmax_cells = 2\n'
    spec = ExperimentSpec.from_toml(write_toml(grid), registries)

    def run_done(run_dir):
        lines = (run_dir / "log.jsonl").read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if '"run_done"' in line][-1]

    run_experiment(spec, tmp_path / "first")
    [first] = run_done(tmp_path / "first")["embeddings"]
    assert first["embedder"] == "counting-256" and first["misses"] > 0  # embedded in the workers, counted here
    run_experiment(spec, tmp_path / "second")
    [second] = run_done(tmp_path / "second")["embeddings"]
    assert second["misses"] == 0 and second["hits"] >= first["misses"]  # everything from the shared cache
