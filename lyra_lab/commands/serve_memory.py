"""lyra-lab serve-memory: serve a configured pipeline (or any memory system) over MCP or HTTP.

Usage: lyra-lab serve-memory [CONFIG.toml] (--mcp | --http [--port N]) [--backend B] [--embedder E] [--recaller R]

``--mcp`` speaks MCP on stdin/stdout (an agent or harness starts this command as
its MCP server; one fresh memory per process); ``--http`` serves lyra-lab's
memory protocol on 127.0.0.1 (one memory per ``/open``) until Ctrl-C or
SIGTERM.  The config file names the pipeline and the recaller
(docs/memory-systems.md); without one: raw turns in windows of 8, BM25.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from lyra_lab.commands._checks import input_file
from lyra_lab.commands._foreground import serve_until_stopped
from lyra_lab.systems import MemoryHttpServer, read_toml, run_mcp_stdio, serve_config

if TYPE_CHECKING:
    from lyra_lab.backends import Backend, Embedder
    from lyra_lab.commands._checks import Subparsers
    from lyra_lab.systems import MemorySystem


def add_parser(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Register ``lyra-lab serve-memory`` and its options on ``subparsers``."""
    parser = subparsers.add_parser(
        "serve-memory", help="serve a memory pipeline over MCP (stdio) or lyra-lab's HTTP memory protocol",
        description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", metavar="CONFIG", help="a serve-memory TOML file (pipeline, recaller, "
                        "backend, embedder; or a [system] table)")
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--mcp", action="store_true", help="speak MCP on stdin/stdout")
    how.add_argument("--http", action="store_true", help="serve the HTTP memory protocol on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0, metavar="N", help="HTTP port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--backend", metavar="B", help="backend preset for summaries and rollups (overrides the file)")
    parser.add_argument("--embedder", metavar="E", help="embedder for dense recall (overrides the file)")
    parser.add_argument("--recaller", metavar="R", help="recaller name (overrides the file)")
    parser.set_defaults(_raw_stdout=True)  # with --mcp, standard output is the protocol: never wrapped
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``lyra-lab serve-memory`` with the parsed ``args``; the exit code (0: done)."""
    data: dict[str, Any] = {}
    if args.config:
        input_file(args.config, "serve-memory config")
        data = read_toml(args.config)
    overrides = {key: getattr(args, key) for key in ("backend", "embedder", "recaller") if getattr(args, key)}
    config = serve_config({**data, **overrides}, args.config or "serve-memory")
    if args.mcp:
        from lyra_lab._extras import require

        require("serve:mcp")  # before any model is built
    backend, embedder = config.resources()
    if args.mcp:
        # stdout is the MCP channel: everything else goes to stderr
        print(f"lyra-lab serve-memory: {config.system.label()} over MCP (stdio)", file=sys.stderr, flush=True)
        run_mcp_stdio(config.system, backend, embedder, config.conversation_id)
        return 0
    return _serve_http(config.system, backend, embedder, args.port)


def _serve_http(system: MemorySystem, backend: Backend | None, embedder: Embedder | None, port: int) -> int:
    server = MemoryHttpServer(system, backend, embedder, port=port)

    def announce() -> None:
        print(f"lyra-lab serve-memory: {system.label()} on {server.url}", flush=True)
        print("  POST /open, /ingest, /query, /close (protocol 1); Ctrl-C to stop", flush=True)

    return serve_until_stopped(server, announce)
