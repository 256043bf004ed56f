"""The simulated server's ``/v1/embeddings``: hashed vectors, in JSON floats or base64, at a GPU's pace.

Vectors are ``hashed_vectors`` of the inputs (deterministic, unit length).
``encoding_format="base64"`` answers each vector as OpenAI does: the base64 of
its little-endian float32 bytes, so a client decodes it with
``numpy.frombuffer(base64.b64decode(s), "<f4")`` into the very floats the JSON
form prints (each text's vector is computed once and kept). The service time is GPU-shaped (``SimulatedSpec.embedding_tokens_per_s``):
one device embeds the requests one after another, on a timeline kept here, so
the endpoint's throughput is that rate however many requests wait.
"""

from __future__ import annotations

import asyncio
import base64
import time
from typing import Any

import numpy as np

from lyra_lab.backends.simulated._behaviour import SimulatedSpec, count_pieces, error_body, hashed_vectors
from lyra_lab.backends.simulated._serving import RequestRecord

_FORMATS = ("float", "base64")


class EmbeddingsRoute:
    """Answers ``/v1/embeddings`` bodies for one server (its spec, its device timeline).

    A text's vector is computed once and kept (up to ``MEMO`` texts): the device's time is
    simulated, and this keeps the simulation's own CPU (hashing words, ~40 us a text) from
    standing in for it on a client's cores when the same texts are sent again.
    """

    MEMO = 200_000

    def __init__(self, spec: SimulatedSpec):
        self.spec = spec
        self._free_at = 0.0  # when the simulated device finishes the batches given to it so far
        self._memo: dict[str, tuple[np.ndarray, str]] = {}  # text -> its vector and that vector in base64

    async def answer(self, body: Any, rec: RequestRecord) -> tuple[int, dict[str, Any]]:
        """``(status, JSON body)`` for a request body; fills ``rec``."""
        spec = self.spec
        if not isinstance(body, dict):
            return self._fail(rec, 400, "invalid request: the body must be a JSON object")
        raw = body.get("input")
        texts = [raw] if isinstance(raw, str) else raw
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return self._fail(rec, 400, "invalid request: input must be a string or a list of strings")
        rec.model, rec.params = body.get("model"), {k: v for k, v in body.items() if k != "input"}
        fmt = body.get("encoding_format") or "float"
        if fmt not in _FORMATS or (fmt == "base64" and not spec.embedding_base64):
            offered = "float, base64" if spec.embedding_base64 else "float"
            return self._fail(rec, 400, f"encoding_format {fmt!r} is not supported (supported: {offered})")
        if spec.embedding_max_batch is not None and len(texts) > spec.embedding_max_batch:
            return self._fail(rec, 413, f"batch size {len(texts)} > maximum allowed batch size "
                                        f"{spec.embedding_max_batch}")
        rec.prompt_tokens = count_pieces([{"content": t} for t in texts])
        rec.started = time.monotonic()
        due = self._schedule(rec.started, rec.prompt_tokens)
        data = self._vectors(texts, fmt)
        wait = due - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        rec.finished = time.monotonic()
        return 200, {"object": "list", "model": body.get("model", spec.model),
                     "data": [{"object": "embedding", "index": i, "embedding": e} for i, e in enumerate(data)],
                     "usage": {"prompt_tokens": rec.prompt_tokens, "total_tokens": rec.prompt_tokens}}

    def _vectors(self, texts: list[str], fmt: str) -> list[Any]:
        """Each text's vector in ``fmt``: a base64 string or a list of floats."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if missing:
            if len(self._memo) + len(missing) > self.MEMO:
                self._memo.clear()
            for text, row in zip(missing, hashed_vectors(missing, self.spec.embedding_dim)):
                self._memo[text] = (row, base64.b64encode(row.astype("<f4").tobytes()).decode("ascii"))
        if fmt == "base64":
            return [self._memo[t][1] for t in texts]
        return [self._memo[t][0].tolist() for t in texts]

    def _schedule(self, now: float, tokens: int) -> float:
        """When a request arriving ``now`` with ``tokens`` is done: after its latency, behind the device's queue."""
        ready = now + self.spec.embedding_latency_s
        if self.spec.embedding_tokens_per_s is None:
            return ready
        # one event loop runs every request, so the timeline needs no lock
        self._free_at = max(ready, self._free_at) + tokens / self.spec.embedding_tokens_per_s
        return self._free_at

    @staticmethod
    def _fail(rec: RequestRecord, status: int, message: str) -> tuple[int, dict[str, Any]]:
        rec.status, rec.outcome, rec.finished = status, str(status), time.monotonic()
        return status, error_body(status, message)
