"""Servers lyra-lab starts on 127.0.0.1, known by what they serve rather than by their port.

A server lyra-lab starts in this process (the simulated cloud, a llama.cpp
server for a GGUF) listens on a port that changes with each start, yet its
answers depend on what it serves (the simulated server's spec; the GGUF's
content and the server's options), not on the port.  While it runs, the server
is ``register``-ed under its port with a function that says what it serves;
``stable(value)`` gives a plain value (a spec, a backend identity, a cell's id
payload) with every such address inside its strings replaced by a token named
for what is served (``http://127.0.0.1:41234/v1`` becomes
``lyra-lab-served://simulated-3eb3ea353dcd/v1``).  A spec's fingerprint, the
cell ids and the cache keys hash that, so a notebook that starts its own
simulated server resumes its run on the next execution.  An address nobody
registered in this process (a server another program runs, a remote API) passes
through unchanged: its port stays part of what it is.

>>> register(41234, "simulated", lambda: {"model": "m", "latency_s": 0.5})
>>> stable({"base_url": "http://127.0.0.1:41234/v1"})
{'base_url': 'lyra-lab-served://simulated-3eb3ea353dcd/v1'}
>>> unregister(41234)
>>> stable({"base_url": "http://127.0.0.1:41234/v1"})
{'base_url': 'http://127.0.0.1:41234/v1'}
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from typing import Any, Callable, Mapping

#: a loopback origin and its port; the port must end there (``:8080`` is not ``:80``)
_ORIGIN = re.compile(r"http://(?:127\.0\.0\.1|localhost):(\d+)(?!\d)")
_LOCK = threading.Lock()
_SERVED: dict[int, tuple[str, Callable[[], Mapping[str, Any]]]] = {}
_TOKENS: dict[int, str] = {}  # port -> token, computed on first need (what a GGUF serves costs a hash)


def register(port: int, kind: str, what: Callable[[], Mapping[str, Any]]) -> None:
    """Record that this process serves ``kind`` on ``port``; ``what()`` says what (plain JSON values).

    ``what`` is called at most once, when an address on the port is first made ``stable``.
    """
    with _LOCK:
        _SERVED[int(port)] = (kind, what)
        _TOKENS.pop(int(port), None)


def unregister(port: int | None) -> None:
    """Forget the server on ``port`` (it stopped); an address on it is a plain address again."""
    if port is None:
        return
    with _LOCK:
        _SERVED.pop(int(port), None)
        _TOKENS.pop(int(port), None)


def _token(port: int) -> str | None:
    with _LOCK:
        if port in _TOKENS:
            return _TOKENS[port]
        entry = _SERVED.get(port)
    if entry is None:
        return None
    kind, what = entry
    try:
        served = dict(what())
    except OSError:  # what it serves cannot be read (a GGUF removed): the address stays as it is
        return None
    text = json.dumps({"kind": kind, "serves": served}, sort_keys=True, default=str, separators=(",", ":"))
    token = f"lyra-lab-served://{kind}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:12]}"
    with _LOCK:
        if _SERVED.get(port) is entry:
            _TOKENS[port] = token
    return token


def served_origins(value: Any) -> dict[str, str]:
    """The loopback origins inside ``value``'s strings that a registered server answers: origin -> token."""
    found: dict[str, str] = {}

    def visit(item: Any) -> None:
        if isinstance(item, str):
            for match in _ORIGIN.finditer(item):
                token = _token(int(match.group(1)))
                if token is not None:
                    found[match.group(0)] = token
        elif isinstance(item, Mapping):
            for key, sub in item.items():
                visit(key)
                visit(sub)
        elif isinstance(item, (list, tuple)):
            for sub in item:
                visit(sub)

    visit(value)
    return found


def substitute(value: Any, origins: Mapping[str, str]) -> Any:
    """A copy of ``value`` (plain JSON-like) with each origin of ``origins`` in its strings replaced by its token."""
    if not origins:
        return value
    if isinstance(value, str):
        return _ORIGIN.sub(lambda m: origins.get(m.group(0), m.group(0)), value)
    if isinstance(value, Mapping):
        return {substitute(k, origins) if isinstance(k, str) else k: substitute(v, origins) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [substitute(v, origins) for v in value]
    return value


def stable(value: Any) -> Any:
    """``value`` with the addresses of servers this process started named by what they serve (see the module)."""
    return substitute(value, served_origins(value))
