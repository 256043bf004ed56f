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
simulated server resumes its run on the next execution.  The registration is
also kept in the user cache folder while the registering process lives, so a
``lyra-lab run`` or a worker process it starts names the address the same way.
An address nobody registered (a server another program runs, a remote API)
passes through unchanged: its port stays part of what it is.

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
import os
import re
import threading
from pathlib import Path
from typing import Any, Callable, Mapping

from lyra_lab._atomic import write_whole
from lyra_lab._paths import cache_dir

#: a loopback origin and its port; the port must end there (``:8080`` is not ``:80``)
_ORIGIN = re.compile(r"http://(?:127\.0\.0\.1|localhost):(\d+)(?!\d)")
_LOCK = threading.Lock()
_TOKENS: dict[int, str] = {}  # port -> token, of the servers this process runs


def register(port: int, kind: str, what: Callable[[], Mapping[str, Any]]) -> None:
    """Record that this process serves ``kind`` on ``port``; ``what()`` says what (plain JSON values).

    The token is also written to ``<cache dir>/served/<port>.json`` with this process's id, so a child
    process (``lyra-lab run`` started from a notebook, a worker of the ``processes`` executor) names the
    address alike while this process lives.  What cannot be read (a GGUF removed) registers nothing.
    """
    try:
        served = dict(what())
    except OSError:
        return
    text = json.dumps({"kind": kind, "serves": served}, sort_keys=True, default=str, separators=(",", ":"))
    token = f"lyra-lab-served://{kind}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:12]}"
    with _LOCK:
        _TOKENS[int(port)] = token
    _write(_record(int(port)), {"pid": os.getpid(), "token": token})


def unregister(port: int | None) -> None:
    """Forget the server on ``port`` (it stopped); an address on it is a plain address again."""
    if port is None:
        return
    with _LOCK:
        known = _TOKENS.pop(int(port), None)
    if known is not None and _read(_record(int(port))).get("pid") == os.getpid():
        _record(int(port)).unlink(missing_ok=True)


def _record(port: int) -> Path:
    return cache_dir() / "served" / f"{port}.json"


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: Path, data: dict[str, Any]) -> None:
    try:
        write_whole(path, json.dumps(data) + "\n", make_folder=True)
    except OSError:  # a read-only cache: other processes name the address by its port
        return


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def _token(port: int) -> str | None:
    with _LOCK:
        if port in _TOKENS:
            return _TOKENS[port]
    if not (cache_dir() / "served").is_dir():
        return None
    data = _read(_record(port))  # a server another lyra-lab process runs (the one that started this one)
    token = data.get("token")
    return token if isinstance(token, str) and _alive(data.get("pid")) else None


def served_origins(value: object) -> dict[str, str]:
    """The loopback origins inside ``value``'s strings that a registered server answers: origin -> token."""
    found: dict[str, str] = {}

    def visit(item: object) -> None:
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


def stable(value: object) -> object:
    """``value`` with the addresses of servers this process started named by what they serve (see the module)."""
    return substitute(value, served_origins(value))
