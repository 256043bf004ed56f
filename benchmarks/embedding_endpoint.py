"""Embedding into a fast remote endpoint: tokens/s through ``OpenAIEmbedder``, before and after issue 37.

The endpoint is the simulated server in its own process, shaped like a GPU serving
multilingual-e5-small (384-d vectors; one device embedding batches one after another at
``--device-rate`` tokens/s, default 2 M, with ``--latency`` s per request on top; no rate
limit). Its vectors are deterministic (``hashed_vectors``), so every configuration's
vectors are compared with those of the plain path: batches of 128 one after another, as
JSON floats, through ``embeddings.create`` (what ``OpenAIEmbedder`` did before issue 37, kept
here as ``Before``). Configurations run alternately, each
``--repeat`` times, in one run; the figure is the median.

tokens/s counts the tokens the server reports (whitespace pieces, "passage: " included;
an E5 tokenizer counts ~1.3x more for English). ``client ms/req`` is this process's CPU
time over the requests sent, ``server ms/req`` the server process's. Every text is embedded
once before the timing: the server computes a text's vector once and keeps it, since its
device time is simulated and a GPU server's CPU does not compute vectors.

    python benchmarks/embedding_endpoint.py                       # 20,000 texts of ~48 tokens
    python benchmarks/embedding_endpoint.py --texts 5000 --repeat 1 --configs 2   # the default configuration only
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

WORDS = ("the quarterly report shows revenue grew in the northern region while logistics costs rose and "
         "the team proposes moving the warehouse contract to a new vendor next spring so that my sister "
         "can book the ryokan in Kyoto before the holidays").split()

BEFORE = "before: embeddings.create, 128 a batch in turn, floats"
CONFIGS = {  # label -> OpenAIEmbedder keywords (BEFORE: the code this issue replaced, kept below)
    BEFORE: {},
    "128 a batch in turn, floats": {"batch_size": 128, "max_concurrency": 1, "encoding_format": "float"},
    "default: 256 a batch, 8 at once, base64": {},
    "512 a batch, 8 at once, base64": {"batch_size": 512},
}


class Before:
    """OpenAIEmbedder.embed as it was before issue 37: ``embeddings.create`` for 128 texts at a time, in turn."""

    def __init__(self, base_url: str):
        import openai

        from lyra_lab.backends import Usage

        self.client = openai.OpenAI(base_url=base_url, api_key="not-needed", max_retries=4)
        self.usage, self.fallbacks = Usage(), {"none": 0}

    def embed(self, texts: list[str]):
        import numpy as np

        from lyra_lab.backends import Usage

        parts = []
        for i in range(0, len(texts), 128):
            response = self.client.embeddings.create(model="sim-e5-small", input=["passage: " + t for t in
                                                                                  texts[i : i + 128]],
                                                     encoding_format="float")
            rows = sorted(response.data, key=lambda d: d.index)
            parts.append(np.asarray([r.embedding for r in rows], dtype=np.float32))
            self.usage = self.usage + Usage(prompt_tokens=response.usage.prompt_tokens, calls=1)
        matrix = np.vstack(parts)  # unit_rows, as then
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def texts_of(n: int, words: int, seed: int = 0) -> list[str]:
    import random

    rng = random.Random(seed)
    return [f"Turn {i}: " + " ".join(rng.choice(WORDS) for _ in range(words - 2)) for i in range(n)]


def serve(spec: dict) -> int:
    """The child: serve until stdin closes."""
    from lyra_lab.backends import SimulatedServer

    with SimulatedServer(**spec) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=20_000)
    parser.add_argument("--words", type=int, default=48, help="whitespace tokens a text")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--device-rate", type=float, default=2e6, help="the simulated device's tokens/s")
    parser.add_argument("--latency", type=float, default=0.005, help="seconds a request adds before it queues")
    parser.add_argument("--configs", default="", help="only these configurations, by position (e.g. 1,3)")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(json.loads(args.serve))

    import numpy as np

    from lyra_lab.backends import OpenAIEmbedder

    spec = {"model": "sim-e5-small", "embedding_dim": 384, "embedding_tokens_per_s": args.device_rate,
            "embedding_latency_s": args.latency}
    child = subprocess.Popen([sys.executable, __file__, "--serve", json.dumps(spec)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        base_url = child.stdout.readline().strip()  # type: ignore[union-attr]
        texts = texts_of(args.texts, args.words)
        print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; simulated endpoint (own process): "
              f"384-d, device {args.device_rate:,.0f} tokens/s, +{args.latency * 1000:g} ms a request; "
              f"{len(texts):,} texts of {args.words} tokens")
        # every text once, untimed: the server computes a text's vector once (its device time is simulated)
        OpenAIEmbedder("sim-e5-small", base_url=base_url, api_key_env=None, passage_prefix="passage: ").embed(texts)
        reference = None
        chosen = [int(i) for i in args.configs.split(",") if i.strip()] or range(len(CONFIGS))
        configs = {label: kw for i, (label, kw) in enumerate(CONFIGS.items()) if i in chosen}
        figures: dict[str, list[dict]] = {label: [] for label in configs}
        for _ in range(args.repeat):
            for label, kw in configs.items():
                embedder = Before(base_url) if label == BEFORE else OpenAIEmbedder(
                    "sim-e5-small", base_url=base_url, api_key_env=None, passage_prefix="passage: ", **kw)
                embedder.embed(texts[:4])  # connect and settle outside the timing
                calls, tokens = embedder.usage.calls, embedder.usage.prompt_tokens
                cpu, server_cpu = time.process_time(), cpu_seconds(child.pid)
                started = time.perf_counter()
                vectors = embedder.embed(texts)
                seconds = time.perf_counter() - started
                requests = embedder.usage.calls - calls
                if reference is None:
                    reference = vectors
                client_s, server_s = time.process_time() - cpu, cpu_seconds(child.pid) - server_cpu
                figures[label].append({
                    "tokens_s": (embedder.usage.prompt_tokens - tokens) / seconds,
                    "client_ms": client_s / requests * 1000, "server_ms": server_s / requests * 1000,
                    "cores": (client_s + server_s) / seconds,
                    "cpu_bound": (embedder.usage.prompt_tokens - tokens) / (client_s + server_s),
                    "same": bool(np.array_equal(vectors, reference)), "fallbacks": sum(embedder.fallbacks.values()),
                })
        ideal = args.device_rate
        print(f"\n{'configuration':<56}{'tokens/s':>10}{'of device':>10}{'client ms/req':>14}{'server ms/req':>14}"
              f"{'cores used':>11}{'tokens/CPU-s':>13}{'same vectors':>13}{'fallbacks':>10}")
        for label, runs in figures.items():
            rate = statistics.median(r["tokens_s"] for r in runs)
            print(f"{label:<56}{rate:>10,.0f}{rate / ideal:>10.0%}"
                  f"{statistics.median(r['client_ms'] for r in runs):>14.2f}"
                  f"{statistics.median(r['server_ms'] for r in runs):>14.2f}"
                  f"{statistics.median(r['cores'] for r in runs):>11.2f}"
                  f"{statistics.median(r['cpu_bound'] for r in runs):>13,.0f}"
                  f"{'yes' if all(r['same'] for r in runs) else 'NO':>13}{sum(r['fallbacks'] for r in runs):>10}")
        print(f"\nmedian of {args.repeat} alternating runs; 'same vectors': bit-identical to the first "
              "configuration's, in order; 'cores used': client and server CPU seconds over the wall time "
              "(what the shared cores gave them); 'tokens/CPU-s': tokens over those CPU seconds, the rate "
              "with a core free for each")
    finally:
        child.stdin.close()  # type: ignore[union-attr]
        child.wait(30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
