"""Any memory system served as an MCP server over stdio: one fresh memory per server process.

Tools (their answers are JSON objects, also as structured content):

- ``remember(turn_id, text, speaker, role, session_id, timestamp)`` stores one turn
  → the protocol's ingest report (``stored``, ``usage``, …);
- ``recall(query, k, now)`` → ``{"hits": [{text, score, turn_ids, when, until, kind, id}]}``;
- ``contents()`` → ``{"hits": [...]}``: everything the memory holds (a tool error when the served
  system cannot list it);
- ``finish()``: the conversation ended (a lyra-lab pipeline flushes what is pending).

An agent uses ``remember`` and ``recall``; lyra-lab's ``mcp`` system maps them with
``served_pipeline_mcp``.  Tool calls run one at a time (a memory is owner-thread state).
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Any, Callable

from lyra_lab.backends import Backend, Embedder
from lyra_lab.corpus import Role, Turn
from lyra_lab.systems._protocol import ProtocolError, hit_json, parse_when, report_json
from lyra_lab.systems._types import MemorySession, MemorySystem, MemorySystemError

INSTRUCTIONS = ("A long-term memory of one conversation. Call remember for each turn as it is said, recall "
                "to find what was said about a question, and finish when the conversation is over.")


class ServedMemory:
    """The session behind a served MCP memory, opened on first use and closed by ``close``."""

    def __init__(self, system: MemorySystem, backend: Backend | None, embedder: Embedder | None,
                 conversation_id: str):
        self.system = system
        self.backend = backend
        self.embedder = embedder
        self.conversation_id = conversation_id
        self.lock = threading.Lock()
        self._session: MemorySession | None = None

    def session(self) -> MemorySession:
        if self._session is None:
            self._session = self.system.open(self.conversation_id, self.backend, self.embedder)
        return self._session

    def remember(self, turn_id: str, text: str, speaker: str = "", role: str = "user", session_id: str = "",
                 timestamp: str = "") -> dict[str, Any]:
        kind: Role = "assistant" if role == "assistant" else "user"
        turn = Turn(id=turn_id, conversation_id=self.conversation_id, session_id=session_id, role=kind, text=text,
                    timestamp=parse_when(timestamp or None, "timestamp"), speaker=speaker or None)
        with self.lock:
            return report_json(self.session().ingest([turn]))

    def recall(self, query: str, k: int = 10, now: str = "") -> dict[str, Any]:
        when: datetime | None = parse_when(now or None, "now")
        with self.lock:
            return {"hits": [hit_json(h) for h in self.session().query(query, k, now=when)]}

    def contents(self) -> dict[str, Any]:
        with self.lock:
            items = self.session().contents()
        if items is None:
            raise ValueError(f"{self.system.label()} cannot list its memory")
        return {"hits": [hit_json(h) for h in items]}

    def finish(self) -> dict[str, Any]:
        with self.lock:
            return report_json(self.session().ingest([], final=True))

    def close(self) -> None:
        with self.lock:
            if self._session is not None:
                self._session.close()
                self._session = None


def memory_mcp_server(memory: ServedMemory) -> Any:
    """An ``mcp`` SDK server (``MCPServer``) whose tools serve ``memory``; a failure is a tool error
    carrying its one line (the SDK would hand a client only "Error executing tool ...")."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("lyra-lab-memory", instructions=INSTRUCTIONS)

    def answer(fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            return fn()
        except (MemorySystemError, ProtocolError, ValueError) as exc:
            raise ToolError(str(exc)) from exc

    @server.tool(description="Store one turn of the conversation (timestamp: ISO 8601).")
    def remember(turn_id: str, text: str, speaker: str = "", role: str = "user", session_id: str = "",
                 timestamp: str = "") -> dict[str, Any]:
        return answer(lambda: memory.remember(turn_id, text, speaker, role, session_id, timestamp))

    @server.tool(description="The k memories best matching the query, best first (now: ISO 8601, optional).")
    def recall(query: str, k: int = 10, now: str = "") -> dict[str, Any]:
        return answer(lambda: memory.recall(query, k, now))

    @server.tool(description="Everything the memory holds now, in no particular order.")
    def contents() -> dict[str, Any]:
        return answer(memory.contents)

    @server.tool(description="The conversation is over: write what is still pending.")
    def finish() -> dict[str, Any]:
        return answer(memory.finish)

    return server


def run_mcp_stdio(system: MemorySystem, backend: Backend | None, embedder: Embedder | None,
                  conversation_id: str = "default") -> None:
    """Serve ``system`` over stdio until the client closes stdin; the memory is closed on the way out."""
    memory = ServedMemory(system, backend, embedder, conversation_id)
    try:
        memory_mcp_server(memory).run("stdio")
    finally:
        memory.close()
