"""A sweep's requests as records (when due, sent, answered; what came back or why not) and an open loop's schedule.

Timings are as vLLM names them. Shared by the thread loads (``_sweep``) and the event-loop loads (``_on_loop``), so both
schedule and record a level alike. A record's ``latency_s`` runs from when the request was due to when the backend's
call returned (as the caller felt it); vLLM's E2EL (``e2el_s``) from sending the request that answered to its last chunk
carrying choices, and ``client_queue_time_s`` from due to that send (``_serving_metrics``).
"""

from __future__ import annotations

import random
from typing import Any, NamedTuple

from lyra_lab.backends import BackendError, Completion
from lyra_lab.bench._prompts import BenchPrompt
from lyra_lab.bench._serving_metrics import chunk_metrics


def failure_record(prompt: BenchPrompt, exc: BackendError) -> dict[str, Any]:
    """The record of a request that failed for good."""
    return {"prompt_id": prompt.id, "ok": False, "status": str(exc.status) if exc.status else "no-status",
            "error": str(exc)[:300], "attempts": exc.attempts}


def answer_record(prompt: BenchPrompt, c: Completion) -> dict[str, Any]:
    """The record of an answered request (``timed_record`` completes it)."""
    meta = c.meta or {}
    # TTFT, ITL, TPOT and E2EL as vLLM times them, from the chunks carrying choices (not streamed: E2EL is
    # the answering attempt's latency, to its body's last byte).
    timed = chunk_metrics(meta.get("chunk_times_s") or (), c.usage.completion_tokens, c.latency_s)
    return {"prompt_id": prompt.id, "ok": True, "status": "ok", "error": "",
            "attempts": int(meta.get("attempts", 1)), "service_s": c.latency_s, "e2el_s": timed["e2el_s"],
            "ttft_s": c.ttft_s if timed["ttft_s"] is None else timed["ttft_s"],
            "tpot_s": timed["tpot_s"], "itl_s": timed["itl_s"],
            "queue_s": meta.get("queue_s"), "retry_s": meta.get("retry_s"), _SENT_AT: meta.get("sent_at"),
            "prompt_tokens": c.usage.prompt_tokens, "completion_tokens": c.usage.completion_tokens,
            "tokens_estimated": c.usage.estimated, "finish_reason": c.finish_reason,
            "simulated": c.simulated, "cached": c.cached}


_SENT_AT = "_sent_at"  # the answering request's send (a perf_counter instant), turned into the client queue


class Times(NamedTuple):
    """When one request was due, sent and answered (seconds into its level), and when the level began.

    Attributes:
        due_s: when it was due (a closed loop's worker took it; an open loop's arrival).
        sent_s: when the load handed it to the backend.
        end_s: when the backend's call returned.
        t0: the level's start, a ``time.perf_counter()`` instant.
    """

    due_s: float
    sent_s: float
    end_s: float
    t0: float


def timed_record(seq: int, times: Times, row: dict[str, Any]) -> dict[str, Any]:
    """Request ``seq``'s record: due (``start_s``), sent and answered, seconds into its level.

    ``latency_s`` runs from due to the call's return; ``client_queue_time_s`` (answered requests) from due to
    sending the request that answered: the backend's ``sent_at`` when it says (slot waits and retries inside
    the backend included), else the load's own send plus the backend's ``queue_s`` and ``retry_s``.
    """
    row = dict(row)
    sent_at = row.pop(_SENT_AT, None)
    queue = float("nan")
    if row.get("ok"):
        if isinstance(sent_at, float):
            queue = sent_at - times.t0 - times.due_s
        else:
            queue = times.sent_s - times.due_s + float(row.get("queue_s") or 0.0) + float(row.get("retry_s") or 0.0)
    return {"seq": seq, "start_s": times.due_s, "sent_s": times.sent_s, "end_s": times.end_s,
            "latency_s": times.end_s - times.due_s, "client_queue_time_s": queue, **row}


def arrival_times(requests: int, rate: float, arrivals: str, seed: int) -> list[float]:
    """When each of an open loop's ``requests`` is due (seconds): Poisson at ``rate`` per second, else evenly spaced."""
    rng = random.Random(seed)
    times, t = [], 0.0
    for _ in range(requests):
        times.append(t)
        t += rng.expovariate(rate) if arrivals == "poisson" else 1.0 / rate
    return times
