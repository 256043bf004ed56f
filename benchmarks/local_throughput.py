"""Local LLM throughput: lyra-lab's ``local`` backend (server + HTTP) vs raw in-process llama_cpp.

Both paths run the same GGUF with the same load settings (n_ctx, threads,
batch) and the same generation params (temperature 0, repeat_penalty 1.3,
max_tokens 64) on the same 8 summarization prompts (~300 tokens each), one
request at a time, rounds alternating which path goes first. The figure is
completion tokens per second of wall time (prompt processing included), and the
ratio backend / raw (goal >= 0.95: the harness must not cost throughput).

    .venv/bin/python benchmarks/local_throughput.py [--rounds 2] [--threads N] [--max-tokens 64]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass, field

from lyra_lab.backends import ensure_local_server
from lyra_lab.backends._presets import make_backend

PEOPLE = ["Maya", "Tom", "Priya", "Lukas", "Aiko", "Diego", "Sara", "Omar"]
TOPICS = [
    ("moving to a new flat in Porto", "the landlord wants a deposit of two months", "the lease starts in March"),
    ("training for a half marathon", "the knee hurts after long runs", "the race is on the 14th of May"),
    ("learning to bake sourdough", "the starter died twice", "rye flour worked better"),
    ("planning a trip to Kyoto", "the ryokan is fully booked in April", "they switch to early May"),
    ("adopting a rescue dog", "the dog is scared of bikes", "the trainer comes on Saturdays"),
    ("writing a thesis on soil bacteria", "the supervisor wants a new chapter", "the deadline is in June"),
    ("switching jobs to a startup", "the salary is lower but equity is offered", "notice period is six weeks"),
    ("renovating the kitchen", "the tiles arrived broken", "the plumber can only come next month"),
]


def prompts() -> list[list[dict[str, str]]]:
    """8 summarization requests of about 300 tokens each (instruction + transcript in one message)."""
    out = []
    for i, (topic, problem, plan) in enumerate(TOPICS):
        user, friend = PEOPLE[i], PEOPLE[(i + 3) % len(PEOPLE)]
        lines = [
            f"{user}: Hey {friend}, I wanted to tell you that I am {topic}.",
            f"{friend}: That sounds exciting! How is it going so far?",
            f"{user}: Mostly good, but {problem}, which is stressing me out a bit.",
            f"{friend}: I can imagine. Have you talked to anyone about it?",
            f"{user}: Yes, I asked around and the current plan is that {plan}.",
            f"{friend}: That seems reasonable. What do you need from me?",
            f"{user}: Maybe just check in with me next week and remind me to keep notes.",
            f"{friend}: Deal. I will also send you the article I read about {topic.split()[-1]}.",
            f"{user}: Thanks, that helps. I also need to sort out my budget for the next months.",
            f"{friend}: Let's sit down on Sunday and go through the numbers together.",
            f"{user}: Perfect. I will bring my laptop and the receipts from last month.",
            f"{friend}: Great, and don't forget that {problem} might change the plan.",
        ]
        text = ("Summarize the following conversation in two or three sentences. Keep names, "
                "dates and decisions.\n\n" + "\n".join(lines))
        out.append([{"role": "user", "content": text}])
    return out


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    texts: list[str] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)

    def add(self, latency: float, prompt: int, completion: int, text: str) -> None:
        self.latencies.append(latency)
        self.tokens.append(completion)
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.texts.append(text)

    @property
    def rate(self) -> float:
        return self.completion_tokens / sum(self.latencies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--n-ctx", type=int, default=2048)
    args = parser.parse_args()
    from llama_cpp import Llama

    params = {"max_tokens": args.max_tokens, "temperature": 0.0, "repeat_penalty": 1.3}
    work = prompts()
    # a fresh server with these settings; make_backend("local") then uses this very one
    server = ensure_local_server(n_ctx=args.n_ctx, n_threads=args.threads, reuse=False)
    try:
        backend = make_backend("local")
        threads = server.n_threads
        raw = Llama(model_path=str(server.model_path), n_ctx=args.n_ctx, n_threads=threads,
                    n_threads_batch=threads, n_batch=512, n_ubatch=512, logits_all=False, verbose=False)

        def via_backend(messages):
            c = backend.complete(messages, **params)
            return c.latency_s, c.usage.prompt_tokens, c.usage.completion_tokens, c.text

        def via_raw(messages):
            started = time.perf_counter()
            r = raw.create_chat_completion(messages=messages, **params)
            latency = time.perf_counter() - started
            return latency, r["usage"]["prompt_tokens"], r["usage"]["completion_tokens"], r["choices"][0]["message"]["content"]

        paths = {"lyra-lab local backend (HTTP)": via_backend, "raw llama_cpp.Llama in process": via_raw}
        for call in paths.values():  # warm-up: page in the weights, fill caches
            call(work[0])
        tallies = {name: Tally() for name in paths}
        for round_no in range(args.rounds):
            order = list(paths) if round_no % 2 == 0 else list(reversed(paths))
            for messages in work:
                for name in order:
                    tallies[name].add(*paths[name](messages))
                    print(f"  round {round_no + 1} {name[:14]}: {tallies[name].latencies[-1]:.2f}s",
                          file=sys.stderr, flush=True)
    finally:
        server.stop()
    print_report(tallies, args, threads, server.model)


def print_report(tallies: dict[str, Tally], args: argparse.Namespace, threads: int, model: str) -> None:
    print(f"\nmodel {model} | n_ctx {args.n_ctx} | threads {threads} | max_tokens {args.max_tokens} | "
          f"temperature 0 | repeat_penalty 1.3 | {args.rounds} rounds x {len(TOPICS)} prompts | "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    header = f"{'path':<32} {'calls':>5} {'prompt tok/call':>15} {'compl tok':>9} {'wall s':>7} " \
             f"{'median s':>8} {'compl tok/s':>11}"
    print(header)
    print("-" * len(header))
    for name, t in tallies.items():
        print(f"{name:<32} {len(t.latencies):>5} {t.prompt_tokens / len(t.latencies):>15.0f} "
              f"{t.completion_tokens:>9} {sum(t.latencies):>7.2f} {statistics.median(t.latencies):>8.3f} "
              f"{t.rate:>11.1f}")
    backend, raw = tallies.values()
    same = sum(a == b for a, b in zip(backend.texts, raw.texts))
    print(f"\nratio backend / raw (completion tok/s): {backend.rate / raw.rate:.3f}  (goal >= 0.95)")
    # Each prompt ran on both paths back to back, so a per-pair ratio cancels slow drifts in machine load.
    pairs = sorted((b_tok / b_s) / (r_tok / r_s) for b_tok, b_s, r_tok, r_s in zip(
        backend.tokens, backend.latencies, raw.tokens, raw.latencies) if b_tok and r_tok)
    q1, median, q3 = statistics.quantiles(pairs, n=4) if len(pairs) > 1 else (pairs[0],) * 3
    print(f"per-prompt paired ratio: median {median:.3f} (quartiles {q1:.3f}-{q3:.3f}, {len(pairs)} pairs)")
    print(f"identical outputs: {same}/{len(raw.texts)} (same model, params and greedy decoding)")


if __name__ == "__main__":
    main()
