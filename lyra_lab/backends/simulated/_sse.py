"""Server-sent events for the simulated server: one chunk per token, then usage and ``[DONE]``.

Each chunk goes out at its deadline (``Pace``), not after a sleep of its own.

A "cut" stream stops half way with no finish reason and no ``[DONE]``; a
"malformed" one sends a chunk of broken JSON. Both are what flaky providers
really do, and what ``OpenAIBackend`` must retry.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import TYPE_CHECKING, Any, AsyncIterator, Mapping

from lyra_lab.backends.simulated._behaviour import SIMULATED_FINGERPRINT
from lyra_lab.backends.simulated._serving import RequestRecord, Serving

if TYPE_CHECKING:
    from starlette.responses import StreamingResponse


def stream_response(serving: Serving, rec: RequestRecord, messages: list[dict[str, Any]],
                    body: Mapping[str, Any]) -> StreamingResponse:
    """A starlette ``StreamingResponse`` that takes a serving slot and releases it when it ends."""
    from starlette.responses import StreamingResponse

    asked = bool((body.get("stream_options") or {}).get("include_usage"))
    include_usage = asked and serving.spec.include_usage
    return StreamingResponse(_events(serving, rec, messages, include_usage), media_type="text/event-stream")


async def _events(serving: Serving, rec: RequestRecord, messages: list[dict[str, Any]],
                  include_usage: bool) -> AsyncIterator[bytes]:
    cid, created = f"chatcmpl-{uuid.uuid4().hex[:12]}", int(time.time())

    def chunk(delta: dict[str, Any] | None, finish_reason: str | None = None,
              usage: dict | None = None) -> bytes:
        payload = {"id": cid, "object": "chat.completion.chunk", "created": created,
                   "model": serving.spec.model, "system_fingerprint": SIMULATED_FINGERPRINT,
                   "choices": [] if delta is None else
                   [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
        if usage is not None:
            payload["usage"] = usage
        return f"data: {json.dumps(payload)}\n\n".encode()

    await serving.enter(rec)
    try:
        pace = serving.pace(rec)
        await pace.until(0, exact=True)  # the time to first token, to the tick
        pieces, finish = serving.reply(rec, messages)
        yield chunk({"role": "assistant", "content": ""})
        for i, piece in enumerate(pieces):
            if rec.outcome == "cut" and i >= len(pieces) // 2:
                return  # the connection ends cleanly, but the answer never finished
            if rec.outcome == "malformed" and i == len(pieces) // 2:
                yield b'data: {"id": "' + cid.encode() + b'", "choices": [{"delta": {"content": "br\n\n'
                return
            await pace.until(i + 1, exact=i == len(pieces) - 1)  # piece i is out once i + 1 tokens are generated
            yield chunk({"content": piece if i == 0 else " " + piece})
        yield chunk({}, finish)
        if include_usage:
            yield chunk(None, usage=serving.usage(rec))
        yield b"data: [DONE]\n\n"
    finally:
        serving.leave(rec)
