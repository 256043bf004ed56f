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
from typing import TYPE_CHECKING, Callable, Mapping, NamedTuple

from lyra_lab.backends import Backend, Embedder
from lyra_lab.corpus import Role, Turn
from lyra_lab.systems._protocol import HitsJson, ProtocolError, ReportJson, hit_json, parse_when, report_json
from lyra_lab.systems._types import MemorySession, MemorySystem, MemorySystemError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

INSTRUCTIONS = ("A long-term memory of one conversation. Call remember for each turn as it is said, recall "
                "to find what was said about a question, and finish when the conversation is over.")


class RememberedTurn(NamedTuple):
    """One turn as the ``remember`` tool receives it: strings, a timestamp in ISO 8601 or ``""``.

    Attributes:
        turn_id: the turn's id (what hits trace back to).
        text: what was said.
        speaker: who said it (``""``: the role).
        role: ``assistant`` or anything else (a user).
        session_id: the chat session it belongs to.
        timestamp: when it was said (``""``: undated).
    """

    turn_id: str
    text: str
    speaker: str = ""
    role: str = "user"
    session_id: str = ""
    timestamp: str = ""

    def turn(self, conversation_id: str) -> Turn:
        """The ``Turn`` of ``conversation_id`` this stands for.

        Raises:
            ProtocolError: the timestamp is not ISO 8601.
        """
        role: Role = "assistant" if self.role == "assistant" else "user"
        return Turn(id=self.turn_id, conversation_id=conversation_id, session_id=self.session_id, role=role,
                    text=self.text, timestamp=parse_when(self.timestamp or None, "timestamp"),
                    speaker=self.speaker or None)


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
        """The open session (opened now on first use)."""
        if self._session is None:
            self._session = self.system.open(self.conversation_id, self.backend, self.embedder)
        return self._session

    def remember(self, turn: RememberedTurn) -> ReportJson:
        """Ingest one turn; the protocol's ingest report."""
        ingested = turn.turn(self.conversation_id)
        with self.lock:
            return report_json(self.session().ingest([ingested]))

    def recall(self, query: str, k: int = 10, now: str = "") -> HitsJson:
        """The ``k`` best hits for ``query`` as of ``now`` (ISO 8601; ``""``: no time)."""
        when: datetime | None = parse_when(now or None, "now")
        with self.lock:
            return {"hits": [hit_json(h) for h in self.session().query(query, k, now=when)]}

    def contents(self) -> HitsJson:
        """Everything the memory holds.

        Raises:
            ValueError: the served system cannot list its memory.
        """
        with self.lock:
            items = self.session().contents()
        if items is None:
            raise ValueError(f"{self.system.label()} cannot list its memory")
        return {"hits": [hit_json(h) for h in items]}

    def finish(self) -> ReportJson:
        """The conversation ended: a last, empty ingest with ``final=True`` (a pipeline flushes)."""
        with self.lock:
            return report_json(self.session().ingest([], final=True))

    def close(self) -> None:
        """Close the session, if one was opened."""
        with self.lock:
            if self._session is not None:
                self._session.close()
                self._session = None


def memory_mcp_server(memory: ServedMemory) -> MCPServer:
    """An ``mcp`` SDK server whose tools serve ``memory``.

    A failure is a tool error carrying its one line (the SDK would hand a client only
    "Error executing tool ...").  The tools are declared to answer ``dict[str, object]``: the SDK
    reads a tool's annotations for its schemas, and a JSON object of any fields is what they have
    always declared.
    """
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("lyra-lab-memory", instructions=INSTRUCTIONS)

    def answer(fn: Callable[[], Mapping[str, object]]) -> dict[str, object]:
        try:
            return dict(fn())
        except (MemorySystemError, ProtocolError, ValueError) as exc:
            raise ToolError(str(exc)) from exc

    @server.tool(description="Store one turn of the conversation (timestamp: ISO 8601).")
    def remember(turn_id: str, text: str, speaker: str = "", role: str = "user",  # noqa: PLR0913
                 session_id: str = "", timestamp: str = "") -> dict[str, object]:
        # one parameter per field of the tool's input: the SDK builds the tool's JSON schema from this
        # signature, and clients (lyra-lab's `served_pipeline_mcp`, agents) call it with these names
        return answer(lambda: memory.remember(RememberedTurn(turn_id, text, speaker, role, session_id, timestamp)))

    @server.tool(description="The k memories best matching the query, best first (now: ISO 8601, optional).")
    def recall(query: str, k: int = 10, now: str = "") -> dict[str, object]:
        return answer(lambda: memory.recall(query, k, now))

    @server.tool(description="Everything the memory holds now, in no particular order.")
    def contents() -> dict[str, object]:
        return answer(memory.contents)

    @server.tool(description="The conversation is over: write what is still pending.")
    def finish() -> dict[str, object]:
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
