"""What sizes the ``full_context`` ceiling on the bundled model: its tokens per o200k token, and prefill speed.

1. ``--ratio``: SmolLM2-135M's GGUF tokenizer (``llama_cpp.Llama(vocab_only=True)``, no weights) against
   o200k (bpe-openai, what lyra-lab counts contexts with) on ``short_v1`` over each LoCoMo conversation's
   whole rendered history, and the chat template's own tokens (``measures.AnswerRoom``'s SAFETY and
   CHAT_TOKENS).
2. ``--prefill``: one local server (its default threads), one chat call per prompt size with 8 answer
   tokens, each over another conversation's turns (no prompt-cache reuse): the server's prompt tokens,
   wall time and tokens/s, with the load average.  It loads the machine: run it alone.

    python benchmarks/answer_window.py --ratio
    python benchmarks/answer_window.py --prefill
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from lyra_lab import datasets
from lyra_lab.backends import LocalServer, bundled_model_path, token_counter
from lyra_lab.corpus import load
from lyra_lab.measures import ANSWER_PROMPTS
from lyra_lab.memory import MemoryEntry, fit_context

SMOLLM_WRAP = ("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
               "<|im_start|>user\n<|im_end|>\n<|im_start|>assistant\n")  # its chat template around one message


def ratio() -> None:
    """SmolLM2's tokens per o200k token on each LoCoMo conversation's whole history, and the template's."""
    import llama_cpp

    model = llama_cpp.Llama(model_path=str(bundled_model_path()), vocab_only=True, verbose=False)
    count = token_counter()
    corpus = load(datasets.find("locomo") or "dataset:locomo", format="locomo")
    ratios, total = [], [0, 0]
    for conv in corpus.conversations:
        text = fit_context([MemoryEntry.from_turn(t) for t in conv.turns()][::-1], 10**7, count).text
        prompt = ANSWER_PROMPTS["short_v1"].render(corpus.probes_for(conv.id)[0], text)
        o200k, smollm = count(prompt), len(model.tokenize(prompt.encode(), add_bos=False))
        ratios.append(smollm / o200k)
        total[0], total[1] = total[0] + o200k, total[1] + smollm
        print(f"{conv.id}: o200k {o200k:,} smollm {smollm:,} ratio {smollm / o200k:.3f}")
    print(f"all: {total[1] / total[0]:.3f} ({min(ratios):.3f}-{max(ratios):.3f} by conversation); chat template "
          f"{len(model.tokenize(SMOLLM_WRAP.encode(), add_bos=False, special=True))} tokens")


def prefill() -> None:
    """Prompt tokens/s of the local server at several prompt sizes (see the module docstring)."""
    import httpx

    count = token_counter()
    corpus = load(datasets.find("locomo") or "dataset:locomo", format="locomo")
    print(f"load before {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as state, LocalServer(reuse=False, state_dir=state) as server:
        print(f"threads {server.n_threads}, n_ctx {server.n_ctx}")
        http = httpx.Client(timeout=300)
        for i, budget in enumerate([250, 1000, 2000, 3000, 4500, 250, 1000, 2000, 3000]):
            turns = [MemoryEntry.from_turn(t) for t in corpus.conversations[i].turns()]
            text = fit_context(turns, budget, count).text
            messages = [{"role": "user", "content": text + "\n\nQuestion: who spoke first?\nAnswer:"}]
            start = time.perf_counter()
            reply = http.post(server.base_url + "/chat/completions", json={
                "model": server.model, "messages": messages, "max_tokens": 8, "temperature": 0})
            took = time.perf_counter() - start
            usage = reply.json()["usage"]
            print(f"o200k {budget:5d} prompt {usage['prompt_tokens']:5d} {took:6.2f}s "
                  f"{usage['prompt_tokens'] / took:6.0f} tok/s  load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ratio", action="store_true", help="tokenizer ratio and chat template tokens")
    parser.add_argument("--prefill", action="store_true", help="the local server's prompt tokens/s")
    args = parser.parse_args()
    if args.ratio or not args.prefill:
        ratio()
    if args.prefill:
        prefill()
