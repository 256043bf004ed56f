"""Memory systems lyra-lab does not build, behind one small contract, and lyra-lab's pipelines served.

A memory system opens a fresh memory per conversation (``MemorySystem.open``),
ingests turns in replay order and answers a question with ``k`` results
(``MemorySession``).  Registered systems (``SYSTEMS``):

- ``mem0``: the mem0 library, offline: its LLM and embeddings through lyra-lab's
  OpenAI-compatible endpoint on 127.0.0.1, its vectors in a local qdrant folder.
- ``mcp``: any MCP memory server started by its command line (stdio), its tools
  mapped by templates; by default the reference knowledge-graph server
  ``@modelcontextprotocol/server-memory`` through ``npx``.
- ``http``: any service speaking lyra-lab's memory protocol (docs/memory-systems.md).
- ``pipeline``: one of lyra-lab's own pipelines, built live (``replay.PipelineMemory``).
- ``served``: one of lyra-lab's pipelines served by ``lyra-lab serve-memory`` in a process of its
  own, reached over MCP or HTTP (what another harness would see of it).

``run_system`` runs one system over one conversation on the replay clock
(``SystemReplay`` yields each probe while the session is open, for scoring then);
``as_recall_hits`` / ``as_memory_entries`` turn its results into lyra-lab's
``recall.Hit``s and memory entries so lyra-lab's metrics apply unchanged.  ``MemoryHttpServer`` and ``memory_mcp_server`` serve any system
(``lyra-lab serve-memory``).
"""

from lyra_lab.systems._base import BaseSession, BaseSystem
from lyra_lab.systems._http import HttpSession, HttpSystem
from lyra_lab.systems._endpoint import OpenAIEndpoint
from lyra_lab.systems._hits import as_memory_entries, as_memory_entry, as_recall_hits
from lyra_lab.systems._mem0 import Mem0Session, Mem0System
from lyra_lab.systems._mcp import McpLaunch, McpSession, McpSystem, served_pipeline_mcp
from lyra_lab.systems._pipeline import PipelineRecaller, PipelineSession, PipelineSystem
from lyra_lab.systems._protocol import PROTOCOL, ProtocolError
from lyra_lab.systems._run import SystemProbe, SystemReplay, SystemRun, SystemRunOptions, run_system
from lyra_lab.systems._served import ServedSession, ServedSystem
from lyra_lab.systems._serve_config import ServeConfig, load_serve_config, read_toml, serve_config
from lyra_lab.systems._serve_http import MemoryHttpServer
from lyra_lab.systems._serve_mcp import RememberedTurn, ServedMemory, memory_mcp_server, run_mcp_stdio
from lyra_lab.systems._types import (HIT_KINDS, SYSTEMS, Declared, IngestReport, MemorySession, MemorySystem,
                                     MemorySystemError, Needs, SystemHit)

__all__ = [
    "HIT_KINDS",
    "PROTOCOL",
    "SYSTEMS",
    "BaseSession",
    "BaseSystem",
    "Declared",
    "HttpSession",
    "HttpSystem",
    "IngestReport",
    "McpLaunch",
    "McpSession",
    "Mem0Session",
    "Mem0System",
    "McpSystem",
    "MemoryHttpServer",
    "MemorySession",
    "MemorySystem",
    "MemorySystemError",
    "Needs",
    "OpenAIEndpoint",
    "PipelineRecaller",
    "PipelineSession",
    "PipelineSystem",
    "ProtocolError",
    "RememberedTurn",
    "ServeConfig",
    "ServedMemory",
    "ServedSession",
    "ServedSystem",
    "SystemHit",
    "SystemProbe",
    "SystemReplay",
    "SystemRun",
    "SystemRunOptions",
    "as_memory_entries",
    "as_memory_entry",
    "as_recall_hits",
    "load_serve_config",
    "memory_mcp_server",
    "read_toml",
    "run_mcp_stdio",
    "run_system",
    "serve_config",
    "served_pipeline_mcp",
]
