"""An opt-in response cache: re-running an experiment replays answers instead of paying again.

The key is the sha256 of what determines an answer: the backend's identity
(name, endpoint, model, default generation params), the messages and the
call's generation params. The endpoint is in because two servers may both
call their model "default"; it enters without credentials (no user:password,
no key-like query params, see ``endpoint_url``). Never the API key, a
timeout or a deadline. Only successful completions are stored.

Threads: the cache holds ONE SQLite connection (``check_same_thread=False``)
and a lock around every use of it, so the threads of a run can share it. Processes (parallel cells, Ray workers) each open their own: WAL, a long
busy timeout and retried short transactions (``_sqlite``). Each write commits
at once (a crash loses at most calls in flight).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import threading
import time
from typing import Any, Mapping, Sequence

from lyra_lab._run_records import RESPONSE_CACHE
from lyra_lab._served import stable
from lyra_lab.backends._sqlite import check_version, connect, retry_busy, write
from lyra_lab.backends._types import Backend, BackendError, Capabilities, Completion, Message, Usage

_SCHEMA = """CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY, backend TEXT NOT NULL, model TEXT NOT NULL,
    completion TEXT NOT NULL, created REAL NOT NULL)"""
_KEY_VERSION = 2  # 2: the identity holds the endpoint
_NOT_GENERATION = frozenset({"timeout"})  # call options that do not change the answer


class ResponseCache:
    """Completions in an SQLite file, keyed by ``cache_key``; counts hits and misses."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        self._conn = connect(self.path, _SCHEMA)
        check_version(self._conn, RESPONSE_CACHE, self.path)
        self.hits = 0
        self.misses = 0

    def __enter__(self) -> "ResponseCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def get(self, key: str) -> Completion | None:
        """The stored completion for ``key`` (marked cached), or None; counts a hit or a miss."""
        with self._lock:
            row = retry_busy(lambda: self._conn.execute(
                "SELECT completion FROM responses WHERE key = ?", (key,)).fetchone())
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        return _from_json(row[0])

    def put(self, key: str, completion: Completion) -> None:
        row = (key, completion.backend, completion.model, _to_json(completion), time.time())
        with self._lock:
            write(self._conn, "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?)", [row])

    def __len__(self) -> int:
        with self._lock:
            return retry_busy(lambda: self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def stats(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "entries": len(self)}


def cache_key(identity: Mapping[str, Any], messages: Sequence[Message], params: Mapping[str, Any]) -> str:
    """sha256 of the backend identity, messages and generation params (canonical JSON).

    A server this process started is named by what it serves, not its port (``lyra_lab._served``).
    """
    payload = {
        "v": _KEY_VERSION,
        "identity": stable(dict(identity)),
        "messages": [dict(m) for m in messages],
        "params": {k: v for k, v in params.items() if k not in _NOT_GENERATION},
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CachedBackend:
    """A ``Backend`` that answers from a ``ResponseCache`` when it can, else asks ``backend``.

    A hit makes no request and returns the original text, usage (tokens and
    cost as first paid), latency and time to first token, with ``cached=True``,
    ``usage.cached_calls=1`` and ``attempts=0``. Threads asking the same
    uncached question at once make one request (the others wait for it, each
    no longer than its own ``deadline``). Its capabilities are the wrapped
    backend's, its description marked ``response_cache``.
    """

    def __init__(self, backend: Backend, cache: ResponseCache):
        self.backend = backend
        self.cache = cache
        self.name = backend.name
        self.model = backend.model
        self._guard = threading.Lock()
        self._inflight: dict[str, list[Any]] = {}  # key → [lock, waiters]
        self._caps: tuple[Capabilities, Capabilities] | None = None

    def __repr__(self) -> str:
        return f"CachedBackend({self.backend!r}, {self.cache.path!r})"

    @property
    def capabilities(self) -> Capabilities:
        inner = self.backend.capabilities
        if self._caps is None or self._caps[0] is not inner:
            described = {**inner.description, "response_cache": True}
            self._caps = (inner, dataclasses.replace(inner, description=described))
        return self._caps[1]

    def complete(self, messages: Sequence[Message], *, deadline: float | None = None,
                 **params: object) -> Completion:
        key = cache_key(self.backend.capabilities.identity, messages, params)
        # Single flight: threads asking the same question at once wait for the
        # first one's answer instead of each paying for it.
        with self._guard:
            entry = self._inflight.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        try:
            wait = -1.0 if deadline is None else max(0.0, deadline - time.monotonic())
            if not entry[0].acquire(timeout=wait):
                raise BackendError(self.name, "the call's deadline passed while the same request, made by another "
                                   "thread, was still in flight; no request was sent", attempts=0,
                                   gave_up="deadline")
            try:
                hit = self.cache.get(key)
                if hit is not None:
                    return hit
                completion = self.backend.complete(messages, deadline=deadline, **params)
                self.cache.put(key, completion)
                return completion
            finally:
                entry[0].release()
        finally:
            with self._guard:
                entry[1] -= 1
                if entry[1] == 0:
                    del self._inflight[key]


def _to_json(c: Completion) -> str:
    u = c.usage
    return json.dumps({
        "text": c.text, "prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens,
        "cost_usd": u.cost_usd, "estimated": u.estimated, "latency_s": c.latency_s, "ttft_s": c.ttft_s,
        "backend": c.backend, "model": c.model, "simulated": c.simulated, "finish_reason": c.finish_reason,
        # timings of no use in a cache (sent_at: an instant of the process that sent it)
        "meta": {k: v for k, v in c.meta.items() if k not in ("chunk_times_s", "sent_at")},
    }, default=str)


def _from_json(text: str) -> Completion:
    d = json.loads(text)
    usage = Usage(d["prompt_tokens"], d["completion_tokens"], d["cost_usd"], calls=1, cached_calls=1,
                  estimated=d["estimated"])
    return Completion(text=d["text"], usage=usage, latency_s=d["latency_s"], backend=d["backend"],
                      model=d["model"], ttft_s=d["ttft_s"], cached=True, simulated=d["simulated"],
                      finish_reason=d["finish_reason"], meta={**d["meta"], "cache": "hit"}, attempts=0)
