"""Per-level statistics of a sweep's records: throughput, latency percentiles, errors, retries.

Definitions (so figures from two runs mean the same thing):

- a level's ``duration_s`` runs from its first request's start to its last
  request's end;
- ``throughput_rps`` counts successful requests per second of that duration,
  ``completion_tps`` their completion tokens per second;
- latency percentiles (``latency_p50_s``…) are over successful requests, from
  when each was due to when the backend's call returned (the caller's view), with
  numpy's default (linear interpolation between order statistics);
- ``errors_by_status`` counts failed requests by final HTTP status
  (``no-status`` for timeouts and connection errors); ``retried`` counts
  requests that needed more than one attempt, failed or not;
- TTFT, TPOT, ITL, E2EL, client queue time and E2EL including it (p50/p90/p99,
  mean), ``total_tps`` and ``goodput_rps`` under latency targets are vLLM's
  (``_serving_metrics``: an empty series is 0, as vLLM reports it);
  ``streamed`` counts the successful requests answered as a stream (0: TTFT,
  TPOT and ITL were not measured, whatever their 0 says).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from lyra_lab.bench._serving_metrics import SERIES, serving_metrics

KEYS = ["label", "backend", "model", "simulated", "mode", "level"]
SUMMARY_COLUMNS = KEYS + ["requests", "ok", "errors", "error_rate", "errors_by_status", "retried",
                          "mean_attempts", "duration_s", "throughput_rps", "completion_tps",
                          "mean_completion_tokens", "tokens_estimated", "latency_p50_s", "latency_p95_s",
                          "latency_p99_s", "streamed", "ttft_p50_s"]
SERVING_COLUMNS = [f"{m}_{s}_s" for m in SERIES for s in ("p50", "p90", "p99", "mean")
                   if f"{m}_{s}_s" not in SUMMARY_COLUMNS]  # ttft_p50_s is there already
SUMMARY_COLUMNS += SERVING_COLUMNS + ["total_tps", "goodput_rps"]


def percentile(values: pd.Series, q: float) -> float:
    """The ``q``-th percentile (0-100) of the non-missing values, NaN if there are none."""
    clean = pd.to_numeric(values, errors="coerce").dropna().to_numpy(dtype=float)
    return float(np.percentile(clean, q)) if clean.size else float("nan")


def _level(group: pd.DataFrame, slo: Mapping[str, float] | None) -> dict[str, object]:
    ok = group[group["ok"]]
    failed = group[~group["ok"]]
    duration = float(group["end_s"].max() - group["start_s"].min()) if len(group) else float("nan")
    per_s = (lambda x: x / duration) if duration > 0 else (lambda x: float("nan"))
    by_status = failed["status"].value_counts().sort_index()
    return {
        "requests": len(group),
        "ok": len(ok),
        "errors": len(failed),
        "error_rate": len(failed) / len(group) if len(group) else float("nan"),
        "errors_by_status": " ".join(f"{s}:{n}" for s, n in by_status.items()),
        "retried": int((group["attempts"] > 1).sum()),
        "mean_attempts": float(group["attempts"].mean()) if len(group) else float("nan"),
        "duration_s": duration,
        "throughput_rps": per_s(len(ok)),
        "completion_tps": per_s(float(ok["completion_tokens"].sum())),
        "mean_completion_tokens": float(ok["completion_tokens"].mean()) if len(ok) else float("nan"),
        "tokens_estimated": bool(ok["tokens_estimated"].any()),  # counted locally: no server usage
        "latency_p50_s": percentile(ok["latency_s"], 50),
        "latency_p95_s": percentile(ok["latency_s"], 95),
        "latency_p99_s": percentile(ok["latency_s"], 99),
        "streamed": int(ok["ttft_s"].notna().sum()),
        **serving_metrics(ok, duration, slo),
    }


def summarize(records: pd.DataFrame, slo: Mapping[str, float] | None = None) -> pd.DataFrame:
    """One row per (backend label, mode, level), in ``SUMMARY_COLUMNS`` order.

    ``slo``: latency targets in seconds (``{"ttft": 0.5, "tpot": 0.05}``, see
    ``parse_slo``) for ``goodput_rps``; without them it is NaN.
    Sorted by label, then mode (closed loop before open loop), then level.
    """
    rows = [{**dict(zip(KEYS, key)), **_level(group, slo)}
            for key, group in records.groupby(KEYS, sort=False, dropna=False)]
    out = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    if len(out):
        out = out.sort_values(["label", "mode", "level"]).reset_index(drop=True)
    return out


def error_counts(records: pd.DataFrame) -> pd.DataFrame:
    """Failed requests counted by final status: one row per (label, mode, level, status)."""
    failed = records[~records["ok"]]
    return (failed.groupby(["label", "mode", "level", "status"]).size().rename("count").reset_index())

