"""One request of a sweep as a record: what it answered (tokens, timings as vLLM names them) or why it failed."""

from __future__ import annotations

from typing import Any

from lyra_lab.backends import BackendError, Completion
from lyra_lab.bench._prompts import BenchPrompt
from lyra_lab.bench._serving_metrics import chunk_metrics


def failure_record(prompt: BenchPrompt, exc: BackendError) -> dict[str, Any]:
    """The record of a request that failed for good."""
    return {"prompt_id": prompt.id, "ok": False, "status": str(exc.status) if exc.status else "no-status",
            "error": str(exc)[:300], "attempts": exc.attempts}


def answer_record(prompt: BenchPrompt, c: Completion) -> dict[str, Any]:
    """The record of an answered request."""
    meta = c.meta or {}
    # Streamed: TTFT, ITL and TPOT as vLLM times them, from the chunks carrying choices.
    timed = chunk_metrics(meta.get("chunk_times_s") or (), c.usage.completion_tokens)
    return {"prompt_id": prompt.id, "ok": True, "status": "ok", "error": "",
            "attempts": int(meta.get("attempts", 1)), "service_s": c.latency_s,
            "ttft_s": c.ttft_s if timed["ttft_s"] is None else timed["ttft_s"],
            "tpot_s": timed["tpot_s"], "itl_s": timed["itl_s"],
            "queue_s": meta.get("queue_s"), "retry_s": meta.get("retry_s"),
            "prompt_tokens": c.usage.prompt_tokens, "completion_tokens": c.usage.completion_tokens,
            "tokens_estimated": c.usage.estimated, "finish_reason": c.finish_reason,
            "simulated": c.simulated, "cached": c.cached}
