"""The ``local`` preset's backend: an OpenAI-protocol backend that outlives its server.

A run attaches to a local server another process may own (``lyra-lab
serve-local``, a parallel run, a notebook). When that process stops its server
mid-run, every call fails to connect and a long grid would fail every cell
after it. Instead, a call that cannot connect checks the shared server: if it
is gone, one is started (or a live one attached) and the call is tried once
more on the new address. Failures with an HTTP status are the server's
answers and pass through unchanged.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Callable, Sequence

from lyra_lab.backends._backend_config import BackendConfig
from lyra_lab.backends._openai import OpenAIBackend
from lyra_lab.backends._types import BackendError, Completion, Message

log = logging.getLogger(__name__)


class LocalBackend(OpenAIBackend):
    """``OpenAIBackend`` on the shared local server, reconnecting if the server went away.

    Args:
        config: the backend config (its ``base_url`` is the server's).
        counter: token counter for servers that report no usage.
        model_path: the GGUF the server runs (None: the bundled SmolLM2).
    """

    def __init__(self, config: BackendConfig, counter: Callable[[str], int] | None = None,
                 model_path: str | None = None):
        super().__init__(config, counter)
        self.model_path = model_path
        self.restarts = 0

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.config, None, self.model_path))

    def identity(self) -> dict[str, Any]:
        """The served GGUF's content instead of the endpoint: the local server's port changes with each start.

        ``model_sha256`` is the GGUF's sha256 (``gguf_sha256``: hashed once, then
        read from the user cache), so two different models saved under one file
        name never share cache entries, while restarts (new ports) keep theirs.
        ``model`` stays: it is the server's alias (the file's stem), which an
        answer carries and a cache hit replays.
        """
        from lyra_lab.backends._gguf_identity import gguf_sha256
        from lyra_lab.backends._local_process import bundled_model_path

        identity = {k: v for k, v in self.config.identity().items() if k != "endpoint"}
        identity["endpoint"] = "local-gguf"
        identity["model_sha256"] = gguf_sha256(self.model_path or bundled_model_path())
        return identity

    def complete(self, messages: Sequence[Message], *, deadline: float | None = None,
                 **params: object) -> Completion:
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
