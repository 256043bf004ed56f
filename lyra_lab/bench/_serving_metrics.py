"""Serving metrics under vLLM's names and definitions: TTFT, TPOT, ITL, E2EL, client queue, goodput under SLOs.

The definitions follow ``vllm bench serve`` (``vllm/benchmarks/serve.py``:
``calculate_metrics`` and ``benchmark``'s ``limited_request_func``; the chat request
function ``async_request_openai_chat_completions`` in
``vllm/benchmarks/lib/endpoint_request_func.py``; the commits read are in
docs/performance.md), so lyra-lab's figures can sit beside vLLM's:

- **TTFT** (time to first token): from sending the request to the first streamed
  chunk that carries ``choices``;
- **ITL** (inter-token latency): the gaps between successive chunks that carry
  ``choices``, pooled over all requests of a level (a chunk holding several
  tokens is one gap, as in vLLM);
- **E2EL** (end-to-end latency, vLLM's request ``latency``): from sending the
  request that answered to its last chunk carrying ``choices`` (``e2el_s``); the
  usage chunk, ``[DONE]`` and the end of the body after it are not counted, nor
  anything before the request was sent. Not streamed: to the body's last byte;
- **TPOT** (time per output token, first token excluded):
  ``(e2el - ttft) / (output_tokens - 1)`` for requests with more than one output token;
- **client_queue_time**: from when a request was due (``start_s``) to when the request
  that answered was sent (``client_queue_time_s``): vLLM's wait for its client's
  concurrency semaphore; in lyra-lab also an open loop's wait for a thread, the
  backend's own concurrency slot, and failed attempts with their backoff (vLLM
  does not retry); **e2el_including_client_queue** is ``client_queue_time + e2el``;
- **goodput**: successful requests that meet *every* SLO given, per second of
  the level (``ttft``, ``tpot``, ``e2el`` as above; a request meets one when its
  value is ``<=`` the target; for goodput a request with one output token has TPOT 0).

Percentiles use numpy's default (linear interpolation), as vLLM does. A series with
no value (no ok request; TTFT, TPOT and ITL of requests not streamed) reports 0, as
vLLM's ``np.mean(values or 0)`` does; the summary's ``streamed`` column says whether
there was anything to time. Goodput whose SLO names TTFT or TPOT over requests not
streamed is NaN (vLLM always streams).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import pandas as pd

from lyra_lab._registry import ConfigError

SLO_METRICS = ("ttft", "tpot", "e2el")
PERCENTILES = (50, 90, 99)


def parse_slo(text: str) -> dict[str, float]:
    """``"ttft=0.5,tpot=0.05"`` → ``{"ttft": 0.5, "tpot": 0.05}`` (seconds).

    Raises:
        ConfigError: an unknown metric, a value that is not a positive number, or nothing given.
    """
    slo: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, value = part.partition("=")
        name = name.strip().lower()
        if not sep or name not in SLO_METRICS:
            raise ConfigError(f"--slo: expected NAME=SECONDS with NAME one of {', '.join(SLO_METRICS)}, "
                              f"got {part!r}")
        try:
            seconds = float(value)
        except ValueError:
            raise ConfigError(f"--slo: {name} needs a number of seconds, got {value.strip()!r}") from None
        if not seconds > 0 or math.isinf(seconds):
            raise ConfigError(f"--slo: {name} must be a positive number of seconds, got {value.strip()!r}")
        slo[name] = seconds
    if not slo:
        raise ConfigError(f"--slo: no target given in {text!r}")
    return slo


def tpot(latency_to_last_chunk_s: float, ttft_s: float | None, output_tokens: int) -> float:
    """The TPOT of one request as vLLM computes it: ``(latency - ttft) / (output_tokens - 1)``; NaN without TTFT or with <= 1 token."""
    if ttft_s is None or output_tokens is None or output_tokens <= 1 or not ttft_s == ttft_s:
        return float("nan")
    return (latency_to_last_chunk_s - ttft_s) / (output_tokens - 1)


def chunk_metrics(chunk_times: list[float] | tuple[float, ...], output_tokens: int,
                  latency_s: float = float("nan")) -> dict[str, Any]:
    """TTFT, ITL gaps, TPOT and E2EL of one request from its choice-chunk times (seconds since it was sent).

    ``latency_s``: the request's time from sending to its body's last byte, its E2EL when
    nothing was streamed (no chunk times).
    """
    if not chunk_times:
        return {"ttft_s": None, "itl_s": [], "tpot_s": float("nan"), "e2el_s": latency_s}
    gaps = [b - a for a, b in zip(chunk_times, chunk_times[1:])]
    return {"ttft_s": chunk_times[0], "itl_s": gaps, "tpot_s": tpot(chunk_times[-1], chunk_times[0], output_tokens),
            "e2el_s": chunk_times[-1]}


SERIES = ("ttft", "tpot", "itl", "e2el", "client_queue_time", "e2el_including_client_queue")


def _series(ok: pd.DataFrame) -> dict[str, np.ndarray]:
    """Each of ``SERIES``' values over a level's ok records (missing values dropped; ITL gaps pooled)."""
    def clean(values: pd.Series) -> np.ndarray:
        return pd.to_numeric(values, errors="coerce").dropna().to_numpy(dtype=float)

    itl = np.array([g for gaps in ok["itl_s"] for g in (gaps if gaps is not None else ())], dtype=float)
    queue = pd.to_numeric(ok["client_queue_time_s"], errors="coerce")
    return {"ttft": clean(ok["ttft_s"]), "tpot": clean(ok["tpot_s"]), "itl": itl, "e2el": clean(ok["e2el_s"]),
            "client_queue_time": clean(queue),
            "e2el_including_client_queue": clean(queue + pd.to_numeric(ok["e2el_s"], errors="coerce"))}


def serving_metrics(ok: pd.DataFrame, duration_s: float,
                    slo: Mapping[str, float] | None = None) -> dict[str, float]:
    """A level's ``SERIES`` percentiles and means, token throughput and goodput from its ok records.

    An empty series reports 0, as vLLM does. ``goodput_rps`` is NaN without an SLO, or when a
    metric the SLO names is missing for some request (TTFT and TPOT need streamed answers).
    """
    out: dict[str, float] = {}
    for name, values in _series(ok).items():
        values = values if values.size else np.zeros(1)  # vLLM: np.percentile(values or 0, q)
        for q in PERCENTILES:
            out[f"{name}_p{q}_s"] = float(np.percentile(values, q))
        out[f"{name}_mean_s"] = float(values.mean())
    tokens = float(ok["prompt_tokens"].sum() + ok["completion_tokens"].sum())
    out["total_tps"] = tokens / duration_s if duration_s > 0 else float("nan")
    out["goodput_rps"] = goodput(ok, duration_s, slo) if slo else float("nan")
    return out


def goodput(ok: pd.DataFrame, duration_s: float, slo: Mapping[str, float]) -> float:
    """Requests meeting every target of ``slo`` per second of ``duration_s`` (vLLM's ``request_goodput``).

    E2EL is ``e2el_s``: to the last chunk carrying choices, the client queue not included, as in vLLM.
    """
    if not duration_s > 0:
        return float("nan")
    good = pd.Series(True, index=ok.index)
    for name, target in slo.items():
        if name == "tpot":  # vLLM: a request with <= 1 output token has TPOT 0 for goodput
            values = pd.to_numeric(ok["tpot_s"], errors="coerce").where(ok["completion_tokens"] > 1, 0.0)
        else:
            values = pd.to_numeric(ok["ttft_s" if name == "ttft" else "e2el_s"], errors="coerce")
        if values.isna().any():
            return float("nan")
        good &= values <= target
    return float(good.sum()) / duration_s
