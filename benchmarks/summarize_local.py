"""Each summarizer once on the bundled local model: wall time, tokens, and the summary itself.

Starts the SmolLM2-135M llama.cpp server (stopped at the end), takes the first
N turns of a LoCoMo conversation (default 8), cuts them into 2 turn-window
chunks and runs single_pass, map_reduce (concurrency 1: the local server
takes one request at a time) and refine with the default prompts and a focus.

    .venv/bin/python benchmarks/summarize_local.py [N_TURNS]
"""

from __future__ import annotations

import sys
import tempfile
import time

from lyra_lab import datasets
from lyra_lab.backends import ensure_local_server
from lyra_lab.backends._presets import make_backend
from lyra_lab.chunking import TurnWindowChunker
from lyra_lab.corpus import load
from lyra_lab.summarize import SUMMARIZERS

LOCOMO = datasets.find("locomo") or datasets.installed_path("locomo")  # `lyra-lab datasets get locomo` installs it
SPECS = [
    {"name": "single_pass", "timeout_s": 900},
    {"name": "map_reduce", "max_concurrency": 1, "chunk_timeout_s": 900, "merge_timeout_s": 900},
    {"name": "refine", "step_timeout_s": 900},
]


def main(n_turns: int) -> int:
    turns = list(load(LOCOMO).conversations[0].turns())[:n_turns]
    chunks = TurnWindowChunker(max_turns=max(1, (n_turns + 1) // 2)).chunk(turns)
    server = ensure_local_server(state_dir=tempfile.mkdtemp(prefix="lyra-bench-"), reuse=False)
    try:
        backend = make_backend("local")
        print(f"{n_turns} LoCoMo turns, {len(chunks)} chunks, model {server.model}, max_tokens 80")
        for spec in SPECS:
            started = time.perf_counter()
            summary = SUMMARIZERS.build({**spec, "max_tokens": 80}).summarize(
                chunks, backend, focus="what Caroline plans")
            wall = time.perf_counter() - started
            u = summary.usage
            print(f"\n{spec['name']}: {wall:.1f} s wall, {u.calls} calls, {u.prompt_tokens} prompt + "
                  f"{u.completion_tokens} completion tokens (server-reported), "
                  f"{u.completion_tokens / max(wall, 1e-9):.1f} completion tok/s, partial={summary.partial}")
            print("  " + summary.text.replace("\n", "\n  "))
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 8))
