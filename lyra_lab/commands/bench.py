"""lyra-lab bench: measure a backend's throughput and latency under rising load.

Sweeps closed-loop concurrency (--concurrency 1,2,4,8) and/or open-loop
offered rates (--rate 2,4) on fixed, seeded prompts (summarization prompts
from --corpus, else synthetic text), prints one row per level and writes
records.parquet, summary.csv, spec.json and sweep.png to the
result folder. --backend simulated starts a simulated cloud-like server
(lognormal ~0.4 s to first token, 60 tokens/s, 8 served at once, 5 req/s rate
limit) and labels its results simulated; --backend simulated-gpu a GPU-shaped one
(20 ms to first token, 2,000 tokens/s per stream, 256 served at once, no rate limit).

Latencies are also printed under vLLM's names and definitions (as vllm bench
serve reports them): TTFT, TPOT (first token excluded), ITL (per streamed chunk), E2EL
(to the last chunk carrying choices), the client queue (due to sent: slot waits and
retries) and E2EL including it, p50/p90/p99 in milliseconds, and with --slo
ttft=0.5,tpot=0.05 (seconds; also e2el) the goodput: requests/s that met every
target. TTFT, TPOT and ITL need --stream.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from lyra_lab.commands._checks import Subparsers

SHOWN = ("mode", "level", "requests", "ok", "errors", "mean_attempts", "throughput_rps", "completion_tps", "total_tps")
SHOWN_AS = {"mean_attempts": "attempts", "throughput_rps": "req/s", "completion_tps": "compl tok/s",
            "total_tps": "all tok/s", "goodput_rps": "goodput req/s"}
# vLLM's names (as ``vllm bench serve`` prints them), two tables of three so each line stays within 100 columns
SERVING_TABLES = ((("ttft", "TTFT"), ("tpot", "TPOT"), ("itl", "ITL")),
                  (("e2el", "E2EL"), ("client_queue_time", "client queue"),
                   ("e2el_including_client_queue", "E2EL incl. client queue")))
STREAMED_ONLY = ("ttft", "tpot", "itl")


def _numbers(kind: type):
    def parse(text: str) -> list:
        try:
            values = [kind(part) for part in text.split(",") if part.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated {kind.__name__}s, got {text!r}") from None
        if not values or any(v <= 0 for v in values):
            raise argparse.ArgumentTypeError(f"expected positive values, got {text!r}")
        return values
    return parse


def add_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Register ``lyra-lab bench`` and its options on ``subparsers``."""
    p = subparsers.add_parser("bench", help="benchmark a backend's throughput and latency vs load",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", default="simulated",
                   help="local | simulated | simulated-gpu | openai/<model> | ollama/<model> | vllm/<model> | llamacpp/<url> "
                        "(default: simulated)")
    p.add_argument("--concurrency", type=_numbers(int), default=None,
                   help="closed-loop levels, e.g. 1,2,4,8 (default 1,2,4,8 unless --rate is given)")
    p.add_argument("--rate", type=_numbers(float), default=None, help="open-loop offered rates in requests/s")
    p.add_argument("--arrivals", choices=("uniform", "poisson"), default="uniform", help="open-loop spacing")
    p.add_argument("--requests", type=int, default=24, help="requests per level (default 24)")
    p.add_argument("--time-cap", type=float, default=60.0,
                   help="seconds into a level after which no new request starts (default 60)")
    p.add_argument("--prompt-tokens", type=int, default=300, help="approximate prompt length (default 300)")
    p.add_argument("--max-tokens", type=int, default=64, help="completion cap per request (default 64)")
    p.add_argument("--corpus", default=None, help="build summarization prompts from this corpus's sessions")
    p.add_argument("--max-attempts", type=int, default=None, help="attempts per call, retries included")
    p.add_argument("--stream", action="store_true",
                   help="stream answers, for time to first token (the local preset does not stream by "
                        "default; streamed, its token counts are local estimates)")
    p.add_argument("--slo", default=None, metavar="ttft=0.5,tpot=0.05",
                   help="latency targets in seconds (ttft, tpot, e2el) for goodput: ok requests/s meeting all")
    p.add_argument("--seed", type=int, default=0, help="seeds prompt order and Poisson arrivals")
    p.add_argument("--out", default=None, help="result folder (default runs/bench/<backend>-<UTC time>)")
    p.add_argument("--no-plots", action="store_true", help="do not write sweep.png")
    p.add_argument("--quiet", action="store_true", help="no progress bars, no line per finished level")
    p.add_argument("--verbose", action="store_true", help="log every retry (they are in the records anyway)")
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``lyra-lab bench`` with the parsed ``args``; the exit code (0: done)."""
    from lyra_lab._registry import ConfigError
    from lyra_lab.bench import SweepSpec, bench_backend, cloud_like_server, gpu_like_server, parse_slo, run_sweep
    from lyra_lab.commands._checks import at_least_one

    at_least_one(args, "requests", "prompt_tokens", "max_tokens", "max_attempts")
    slo = parse_slo(args.slo) if args.slo is not None else None
    if args.time_cap <= 0:
        raise ConfigError(f"--time-cap must be > 0, got {args.time_cap}")
    concurrency = args.concurrency if args.concurrency is not None else ([] if args.rate else [1, 2, 4, 8])
    spec = SweepSpec(concurrency=tuple(concurrency), rates=tuple(args.rate or ()), requests=args.requests,
                     max_tokens=args.max_tokens, time_cap_s=args.time_cap, arrivals=args.arrivals,
                     seed=args.seed)
    prompts, source = _prompts(args)
    if not args.verbose:
        # Retries under load are the data here (attempts, status per record), not news.
        logging.getLogger("lyra_lab.backends").setLevel(logging.ERROR)
    cap = max([*spec.concurrency, *([spec.max_in_flight] if spec.rates else [])])
    fields: dict = {"max_attempts": args.max_attempts} if args.max_attempts is not None else {}
    if args.stream:
        fields["stream"] = True
    progress = False if args.quiet else None
    on_level = None if args.quiet else (lambda done: print(done.line(), flush=True))  # one line per level
    if args.backend in ("simulated", "simulated-gpu"):
        make_server = cloud_like_server if args.backend == "simulated" else gpu_like_server
        with make_server(seed=args.seed) as server:
            backend = bench_backend({"preset": f"simulated/{server.spec.model}", "base_url": server.base_url},
                                    cap, **fields)
            result = run_sweep(backend, prompts, spec, progress=progress, meta={"prompt_source": source},
                               on_level=on_level)
            chat = server.chat_log()
            result.meta["simulated_server"] = {
                **{k: v for k, v in dataclasses.asdict(server.spec).items() if k != "api_key"},
                "requests_seen": len(chat), "rate_limited": sum(r.status == 429 for r in chat),
                "max_serving": server.max_serving}
    else:
        if args.backend.startswith("simulated"):
            raise ConfigError("--backend simulated takes no model: it starts its own simulated server")
        backend = bench_backend(args.backend, cap, **fields)
        result = run_sweep(backend, prompts, spec, progress=progress, meta={"prompt_source": source},
                           on_level=on_level)
    if slo is not None:
        result.meta["slo"] = slo
    out = Path(args.out) if args.out else Path("runs") / "bench" / _folder_name(args.backend)
    paths = result.save(out, plots=not args.no_plots)
    print_summary(result.summary(), slo)
    print(f"result folder: {out}")
    for path in paths:
        print(f"  {path}")
    return 0


def print_summary(summary: pd.DataFrame, slo: dict[str, float] | None) -> None:
    """Each backend's levels: counts and rates, the call's latency, then vLLM's serving metrics; lines <= 100 columns."""
    for label, levels in summary.groupby("label", sort=False):
        print(label)
        table = levels[list(SHOWN) + (["goodput_rps"] if slo else [])].copy()
        table["level"] = table["level"].map("{:g}".format)
        print(table.rename(columns=SHOWN_AS).to_string(index=False, float_format="%.2f"))
        for _, row in levels[levels["errors"] > 0].iterrows():
            print(f"  errors at {row['mode']} {row['level']:g}: {row['errors_by_status']}")
        print(triple_table(levels, (("latency", "call latency"),), (50, 95, 99)).to_string(index=False))
        for shown in SERVING_TABLES:
            print(triple_table(levels, shown).to_string(index=False))
    print("\n".join([
        "(req/s: ok requests/s; compl tok/s, all tok/s: completion, prompt+completion tokens/s;",
        *([f" goodput: ok requests/s meeting {_slo_text(slo)};"] if slo else []),
        " call latency: from due to the call's return, p50 / p95 / p99 ms, ok requests;",
        " the rest: p50 / p90 / p99 ms as vllm bench serve defines them: TTFT to the first streamed",
        " chunk, TPOT excluding the first token, ITL per streamed chunk, E2EL from sending the request",
        " that answered to its last chunk carrying choices, client queue from due to that send (slot",
        " waits, retries); '-': not streamed)"]))


def triple_table(summary: pd.DataFrame, shown: tuple[tuple[str, str], ...],
                 percentiles: tuple[int, int, int] = (50, 90, 99)) -> pd.DataFrame:
    """The ``shown`` metrics of each level as three percentiles in ms; ``-`` where nothing was streamed."""
    import pandas as pd

    table = pd.DataFrame({"mode": summary["mode"], "level": summary["level"].map("{:g}".format)})
    for metric, title in shown:
        triples = [" / ".join(f"{1000 * row[f'{metric}_p{q}_s']:.1f}" for q in percentiles)
                   if metric not in STREAMED_ONLY or row["streamed"] > 0 else "-" for _, row in summary.iterrows()]
        table[f"{title} ms"] = triples
    return table


def _slo_text(slo: dict[str, float]) -> str:
    return " and ".join(f"{name} <= {seconds:g} s" for name, seconds in slo.items())


def _prompts(args: argparse.Namespace):
    from lyra_lab.bench import corpus_prompts, synthetic_prompts

    if args.corpus:
        from lyra_lab.commands._checks import input_file
        from lyra_lab.corpus import load

        input_file(args.corpus, "corpus file")
        corpus = load(args.corpus)
        prompts = corpus_prompts(corpus, args.requests, prompt_tokens=args.prompt_tokens, seed=args.seed)
        return prompts, {"kind": "corpus", "path": str(args.corpus), "name": corpus.name}
    prompts = synthetic_prompts(args.requests, prompt_tokens=args.prompt_tokens, seed=args.seed)
    return prompts, {"kind": "synthetic", "prompt_tokens": args.prompt_tokens, "seed": args.seed}


def _folder_name(backend: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{re.sub(r'[^A-Za-z0-9._-]+', '_', backend).strip('_')}-{stamp}"
