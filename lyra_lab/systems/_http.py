"""Any HTTP memory service that speaks lyra-lab's memory protocol (``_protocol``): the ``http`` system.

A team benchmarks its in-house memory by writing three endpoints (``/open``,
``/ingest``, ``/query``; ``/contents`` and ``/close`` are optional).  Each call has its own timeout;
a refused connection, an HTTP error, a timeout or an answer that does not follow
the protocol is one ``MemorySystemError`` naming the service and the call.  A
key for the service, if it needs one, comes from the environment variable
``api_key_env`` and is sent as a bearer token (never recorded).

>>> HttpSystem(url="http://127.0.0.1:8400/memory").label()
'http:127.0.0.1:8400/memory'
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from typing import Mapping, Sequence
from urllib.parse import urlsplit

from lyra_lab._params import param
from lyra_lab._registry import ConfigError
from lyra_lab.backends import Backend, Embedder
from lyra_lab.corpus import Turn
from lyra_lab.systems._base import BaseSession, BaseSystem
from lyra_lab.systems._protocol import (PROTOCOL, ProtocolError, check_protocol, hits_from_json, report_from_json,
                                        turn_json)
from lyra_lab.systems._types import SYSTEMS, Declared, IngestReport, MemorySystemError, SystemHit


def _is_http_url(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.hostname) and not parts.username and not parts.password


@SYSTEMS.register("http")
@dataclass(frozen=True)
class HttpSystem(BaseSystem):
    """A memory service over HTTP (lyra-lab's memory protocol, version 1)."""

    url: str = param("http://127.0.0.1:8400", check=_is_http_url,
                     allowed="an http(s) URL without credentials (a key goes in api_key_env)",
                     doc="the service's base URL; the calls go to <url>/open, /ingest, /query, /contents, /close.")
    timeout_s: float = param(60.0, gt=0, doc="seconds each call may take before the session fails.")
    batch: int = param(64, ge=1, doc="the most turns sent in one /ingest call.")
    api_key_env: str | None = param(None, doc="environment variable holding a bearer token for the service.")
    turn_ids: bool = param(True, doc="the service returns its hits' source turn ids (false: turn-level "
                                     "retrieval metrics are not computed for it: it cannot trace).")

    def traces(self) -> bool:
        """Whether the service returns its hits' source turn ids (the ``turn_ids`` parameter)."""
        return self.turn_ids

    def declare(self) -> Declared:
        """The service at ``url`` receives every turn and question."""
        return Declared(urls=(self.url,))

    def label(self) -> str:
        """``http:<host:port><path>``."""
        parts = urlsplit(self.url)
        return f"http:{parts.netloc}{parts.path.rstrip('/')}"

    def open(self, conversation_id: str, backend: Backend | None, embedder: Embedder | None) -> "HttpSession":
        headers = {}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise ConfigError(f"system 'http': environment variable {self.api_key_env} is not set")
            headers["Authorization"] = f"Bearer {key}"
        return HttpSession(self, conversation_id, headers)


class HttpSession(BaseSession):
    """One memory on the service, opened with ``/open`` and closed with ``/close``."""

    def __init__(self, system: HttpSystem, conversation_id: str, headers: Mapping[str, str]):
        import httpx

        super().__init__(system.label())
        self.system = system
        self._client = httpx.Client(base_url=system.url.rstrip("/") + "/", timeout=system.timeout_s,
                                    headers=dict(headers), trust_env=False)
        try:
            answer = self.guard("open", lambda: self._post("open", {"conversation_id": conversation_id}))
            session = answer.get("session")
            if not isinstance(session, str) or not session:
                raise MemorySystemError(self.label, "open", f"answer.session: expected a string, got {session!r}")
            self.session = session
        except BaseException:
            self._client.close()
            self.closed = True
            raise

    def _post(self, call: str, body: Mapping[str, object], missing_ok: bool = False) -> Mapping[str, object]:
        """POST ``body`` (with the protocol version) to ``<url>/<call>``; the answer's JSON object.

        ``missing_ok``: a 404 or 405 answers ``{}`` (an optional call the service does not offer).

        Raises:
            MemorySystemError: no answer in time, an HTTP error, or an answer that is not a JSON object.
        """
        import httpx

        try:
            response = self._client.post(call, json={"protocol": PROTOCOL, **body})
        except httpx.TimeoutException:
            raise MemorySystemError(self.label, call, f"no answer within {self.system.timeout_s:g} s") from None
        except httpx.HTTPError as exc:
            raise MemorySystemError(self.label, call, f"{type(exc).__name__}: {exc}") from None
        if missing_ok and response.status_code in (404, 405):
            return {}
        if response.status_code >= 400:
            raise MemorySystemError(self.label, call, f"HTTP {response.status_code}: {response.text[:300]}")
        try:
            answer = response.json()
        except ValueError:
            raise MemorySystemError(self.label, call, f"the answer is not JSON: {response.text[:200]!r}") from None
        if not isinstance(answer, dict):
            raise MemorySystemError(self.label, call, f"the answer is not a JSON object: {response.text[:200]!r}")
        if call == "open":
            try:
                check_protocol(answer, "answer")
            except ProtocolError as exc:
                raise MemorySystemError(self.label, call, str(exc)) from None
        return answer

    def _ingest(self, turns: list[Turn], final: bool) -> IngestReport:
        report = IngestReport()
        size = self.system.batch
        batches = [turns[i:i + size] for i in range(0, len(turns), size)] or [[]]
        for i, batch in enumerate(batches):
            answer = self._post("ingest", {"session": self.session, "turns": [turn_json(t) for t in batch],
                                           "final": final and i == len(batches) - 1})
            try:
                report = report + report_from_json(answer)
            except ProtocolError as exc:
                raise MemorySystemError(self.label, "ingest", str(exc)) from None
        return report

    def _query(self, question: str, k: int, now: datetime | None) -> Sequence[SystemHit]:
        answer = self._post("query", {"session": self.session, "query": question, "k": k,
                                      "now": now.isoformat() if now else None})
        try:
            return hits_from_json(answer)
        except ProtocolError as exc:
            raise MemorySystemError(self.label, "query", str(exc)) from None

    def _contents(self) -> Sequence[SystemHit] | None:
        answer = self._post("contents", {"session": self.session}, missing_ok=True)
        if not answer:  # 404/405: the service cannot list its memory
            return None
        try:
            return hits_from_json(answer)
        except ProtocolError as exc:
            raise MemorySystemError(self.label, "contents", str(exc)) from None

    def _close(self) -> None:
        try:
            self._post("close", {"session": self.session}, missing_ok=True)
        finally:
            self._client.close()
