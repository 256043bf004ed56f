"""Serving metrics under vLLM's names and definitions: TTFT, TPOT, ITL, E2EL, goodput under SLOs.

The definitions follow ``vllm bench serve`` (``vllm/benchmarks/serve.py``,
``calculate_metrics``, and the chat request function in
``vllm/benchmarks/lib/endpoint_request_func.py``), so lyra-lab's figures can sit
beside vLLM's:

- **TTFT** (time to first token): from sending the request to the first streamed
  chunk that carries ``choices``;
- **ITL** (inter-token latency): the gaps between successive chunks that carry
  ``choices``, pooled over all requests of a level (a chunk holding several
  tokens is one gap, as in vLLM);
- **TPOT** (time per output token, first token excluded):
  ``(latency - ttft) / (output_tokens - 1)`` for requests with more than one
  output token, ``latency`` running to the last chunk carrying ``choices``;
- **E2EL** (end-to-end latency): a request's latency as the client saw it
  (lyra-lab's ``latency_s``: the wait for a client slot and retries included;
  vLLM has neither, so on a healthy run the two agree);
- **goodput**: successful requests that meet *every* SLO given, per second of
  the level (``ttft``, ``tpot``, ``e2el``; a request meets one when its value is
  ``<=`` the target; for goodput a request with one output token has TPOT 0).

Percentiles use numpy's default (linear interpolation), as vLLM does.
Non-streamed requests have no TTFT, ITL or TPOT (NaN / empty).
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


def chunk_metrics(chunk_times: list[float] | tuple[float, ...], output_tokens: int) -> dict[str, Any]:
    """TTFT, ITL gaps and TPOT of one streamed request from its choice-chunk times (seconds since it was sent)."""
    if not chunk_times:
        return {"ttft_s": None, "itl_s": [], "tpot_s": float("nan")}
    gaps = [b - a for a, b in zip(chunk_times, chunk_times[1:])]
    return {"ttft_s": chunk_times[0], "itl_s": gaps, "tpot_s": tpot(chunk_times[-1], chunk_times[0], output_tokens)}


def _pct(values: np.ndarray, q: float) -> float:
    return float(np.percentile(values, q)) if values.size else float("nan")


def serving_metrics(ok: pd.DataFrame, duration_s: float,
                    slo: Mapping[str, float] | None = None) -> dict[str, float]:
    """A level's TTFT/TPOT/ITL/E2EL percentiles, token throughput and goodput from its ok records.

    ``goodput_rps`` is NaN without an SLO, or when a metric the SLO names is
    missing for some request (TTFT and TPOT need streamed answers).
    """
    def clean(col: str) -> np.ndarray:
        return pd.to_numeric(ok[col], errors="coerce").dropna().to_numpy(dtype=float)

    itl = np.array([g for gaps in ok["itl_s"] for g in (gaps if gaps is not None else ())], dtype=float)
    series = {"ttft": clean("ttft_s"), "tpot": clean("tpot_s"), "itl": itl, "e2el": clean("latency_s")}
    out: dict[str, float] = {}
    for name, values in series.items():
        for q in PERCENTILES:
            out[f"{name}_p{q}_s"] = _pct(values, q)
        out[f"{name}_mean_s"] = float(values.mean()) if values.size else float("nan")
    tokens = float(ok["prompt_tokens"].sum() + ok["completion_tokens"].sum())
    out["total_tps"] = tokens / duration_s if duration_s > 0 else float("nan")
    out["goodput_rps"] = goodput(ok, duration_s, slo) if slo else float("nan")
    return out


def goodput(ok: pd.DataFrame, duration_s: float, slo: Mapping[str, float]) -> float:
    """Requests meeting every target of ``slo`` per second of ``duration_s`` (vLLM's ``request_goodput``)."""
    if not duration_s > 0:
        return float("nan")
    good = pd.Series(True, index=ok.index)
    for name, target in slo.items():
        if name == "tpot":  # vLLM: a request with <= 1 output token has TPOT 0 for goodput
            values = pd.to_numeric(ok["tpot_s"], errors="coerce").where(ok["completion_tokens"] > 1, 0.0)
        else:
            values = pd.to_numeric(ok["ttft_s" if name == "ttft" else "latency_s"], errors="coerce")
        if values.isna().any():
            return float("nan")
        good &= values <= target
    return float(good.sum()) / duration_s
