"""The ``local`` preset's backend: an OpenAI-protocol backend that starts its server on first need, then outlives it.

Built, it starts nothing: its identity (what keys the response cache) is the GGUF's content, the
alias the server gives the model and the preset's settings, all known from the file, so a run or
a rescore whose answers are all cached never starts llama.cpp. The first call the cache does not
answer starts the shared server (or attaches to a live one, ``ensure_local_server``) and points the
backend at it; until then its address is ``NOT_STARTED`` and its description says
``"started": False``.

A run attaches to a local server another process may own (``lyra-lab
serve-local``, a parallel run, a notebook). When that process stops its server
mid-run, every call fails to connect and a long grid would fail every cell
after it. Instead, a call that cannot connect checks the shared server: if it
is gone, one is started (or a live one attached) and the call is tried once
more on the new address. Failures with an HTTP status are the server's
answers and pass through unchanged.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
from typing import Any, Callable, Sequence

from lyra_lab.backends._backend_config import BackendConfig
from lyra_lab.backends._openai import OpenAIBackend
from lyra_lab.backends._types import BackendError, Completion, Message

log = logging.getLogger(__name__)

#: The address of a local backend whose server has not started yet (port 0: nothing can be sent there).
NOT_STARTED = "http://127.0.0.1:0/v1"


class LocalBackend(OpenAIBackend):
    """``OpenAIBackend`` on the shared local server, started by its first call, reconnecting if the server went away.

    Args:
        config: the backend config: its ``base_url`` is the server's, or ``NOT_STARTED`` (the first
            call starts the server, see the module docstring).
        counter: token counter for servers that report no usage (default, once it starts: the
            server's own tokenizer).
        model_path: the GGUF the server runs (None: the bundled SmolLM2).
    """

    def __init__(self, config: BackendConfig, counter: Callable[[str], int] | None = None,
                 model_path: str | None = None):
        super().__init__(config, counter)
        self.model_path = model_path
        self.restarts = 0
        self._starting = threading.Lock()

    @property
    def started(self) -> bool:
        """Whether the backend has a server's address (started by a call, or given)."""
        return self.config.base_url != NOT_STARTED

    def describe(self) -> dict[str, Any]:
        """The config's description and whether the server started (no address before it has one)."""
        out = {**super().describe(), "started": self.started}
        if not out["started"]:
            out["base_url"] = None
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.config, None, self.model_path))

    def identity(self) -> dict[str, Any]:
        """The served GGUF's content instead of the endpoint: the local server's port changes with each start.

        ``model_sha256`` is the GGUF's sha256 (``gguf_sha256``: hashed once, then
        read from the user cache), so two different models saved under one file
        name never share cache entries, while restarts (new ports) keep theirs.
        ``model`` stays: it is the server's alias (the file's stem), which an
        answer carries and a cache hit replays. All of it is known without the
        server (the same before and after it starts): the response cache is
        asked before anything starts.
        """
        from lyra_lab.backends._gguf_identity import gguf_sha256
        from lyra_lab.backends._local_process import local_gguf

        identity = {k: v for k, v in self.config.identity().items() if k != "endpoint"}
        identity["endpoint"] = "local-gguf"
        identity["model_sha256"] = gguf_sha256(local_gguf(self.model_path))
        return identity

    def start(self) -> None:
        """Start (or attach to) the shared server and point at it, unless the backend has one already."""
        from lyra_lab.backends._local_server import ensure_local_server

        with self._starting:
            if self.started:
                return
            server = ensure_local_server(self.model_path)
            if self._counter is None:
                self._counter = server.token_counter()
            with self._lock:
                self.config = dataclasses.replace(self.config, base_url=server.base_url)

    async def acomplete(self, messages: Sequence[Message], *, deadline: float | None = None,
                        **params: object) -> Completion:
        if not self.started:
            await asyncio.to_thread(self.start)  # loading the model must not stall the event loop
        return await super().acomplete(messages, deadline=deadline, **params)

    def complete(self, messages: Sequence[Message], *, deadline: float | None = None,
                 **params: object) -> Completion:
        self.start()
        try:
            return super().complete(messages, deadline=deadline, **params)
        except BackendError as exc:
            if exc.status is not None or exc.gave_up == "deadline" or not self._moved_to_a_live_server():
                raise
        return super().complete(messages, deadline=deadline, **params)

    def _moved_to_a_live_server(self) -> bool:
        """Point at a live server if ours is gone; false when there is nothing new to try."""
        from lyra_lab.backends._local_server import ensure_local_server

        server = ensure_local_server(self.model_path)  # starts one if the shared one died
        if server.base_url == self.config.base_url:
            return False  # the server lives: the failure was something else
        log.warning("local server at %s went away; continuing on %s", self.config.base_url, server.base_url)
        self.close()
        with self._lock:
            self.config = dataclasses.replace(self.config, base_url=server.base_url)
        self.restarts += 1
        return True
