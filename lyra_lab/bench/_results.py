"""A sweep's result: the per-request records plus what was run, saved to and loaded from a folder.

A result folder holds ``records.parquet`` (one row per request),
``summary.csv`` (one row per level, see ``summarize``), ``spec.json`` (the
backend's safe ``describe()``, the sweep, the prompts' hash, the environment)
and, optionally, the plots. Nothing secret is written: backend descriptions
hold no key, and ``save`` refuses to write a file that contains the value of
an environment variable that looks like a credential.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from lyra_lab._run_records import BENCH_RESULT

if TYPE_CHECKING:
    from lyra_lab.backends import Backend

COLUMNS = ("label", "backend", "model", "simulated", "mode", "level", "seq", "prompt_id", "start_s",
           "sent_s", "end_s", "latency_s", "service_s", "e2el_s", "client_queue_time_s", "ttft_s", "tpot_s", "itl_s",
           "queue_s", "retry_s",
           "prompt_tokens", "completion_tokens", "tokens_estimated", "ok", "status", "error", "attempts",
           "finish_reason", "cached")
_FLOATS = ("level", "start_s", "sent_s", "end_s", "latency_s", "service_s", "e2el_s", "client_queue_time_s", "ttft_s",
           "tpot_s", "queue_s", "retry_s")
_INTS = ("seq", "prompt_tokens", "completion_tokens", "attempts")
_BOOLS = ("simulated", "tokens_estimated", "ok", "cached")
_STRS = ("label", "backend", "model", "mode", "prompt_id", "status", "error", "finish_reason")
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)


def records_frame(rows: Sequence[Mapping[str, Any]], backend: Backend, label: str) -> pd.DataFrame:
    """The records frame in ``COLUMNS`` order, fixed dtypes (failed calls: 0 tokens, NaN times)."""
    simulated = backend.capabilities.simulated or any(r.get("simulated") for r in rows)
    if simulated and "(simulated)" not in label:
        label += " (simulated)"  # a server that marks its answers stays labelled
    base = {"label": label, "backend": backend.name, "model": backend.model}
    frame = pd.DataFrame([{**base, **r, "simulated": simulated} for r in rows], columns=list(COLUMNS))
    return coerce(frame)


def coerce(frame: pd.DataFrame) -> pd.DataFrame:
    """Fix the dtypes of a records frame (missing numbers → NaN or 0, missing text → "", missing ITLs → []).

    Columns a frame lacks (a result saved before they existed) are added empty.
    """
    out = frame.copy()
    for col in COLUMNS:
        if col not in out.columns:
            out[col] = None
    out["itl_s"] = out["itl_s"].map(_gaps).astype(object)
    for col in _FLOATS:
        out[col] = pd.to_numeric(out[col], errors="coerce").astype(float)
    for col in _INTS:
        out[col] = pd.to_numeric(out[col], errors="coerce").fillna(0).astype(np.int64)
    for col in _BOOLS:
        out[col] = out[col].map(lambda v: bool(v) if v is not None and v == v else False).astype(bool)
    for col in _STRS:
        out[col] = out[col].map(lambda v: "" if v is None or v != v else str(v)).astype(object)
    return out[list(COLUMNS)].reset_index(drop=True)


def _gaps(value: Any) -> list[float]:
    """A record's inter-token gaps as a list of floats (None or NaN: none)."""
    if value is None or (isinstance(value, float) and value != value):
        return []
    return [float(v) for v in value]


@dataclass
class BenchResult:
    """Per-request ``records`` of a sweep and the ``meta`` describing it (backend, sweep, prompts, env)."""

    records: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)

    def summary(self, slo: Mapping[str, float] | None = None) -> pd.DataFrame:
        """One row per level (see ``summarize``); goodput under ``slo``, else under ``meta["slo"]`` if set."""
        from lyra_lab.bench._stats import summarize

        return summarize(self.records, slo if slo is not None else self.meta.get("slo"))

    def save(self, folder: str | os.PathLike[str], *, plots: bool = True) -> list[Path]:
        """Write the result folder; returns the paths written.

        Raises:
            ValueError: a file would contain a credential from the environment.
        """
        from lyra_lab.runs import environment

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        meta = {**self.meta, "environment": self.meta.get("environment") or environment()}
        spec_text = json.dumps(BENCH_RESULT.wrap(meta), indent=2, sort_keys=True, default=str)
        summary = self.summary()
        _refuse_secrets({"spec.json": spec_text, "records": self.records.to_csv(index=False)})
        paths = [folder / "records.parquet", folder / "summary.csv", folder / "spec.json"]
        self.records.to_parquet(paths[0], index=False)
        summary.to_csv(paths[1], index=False)
        paths[2].write_text(spec_text + "\n", encoding="utf-8")
        if plots and len(summary):
            from lyra_lab.bench._plots import plot_sweep

            fig = plot_sweep(summary, self.meta.get("slo"))
            paths.append(folder / "sweep.png")
            fig.savefig(paths[-1], dpi=120, bbox_inches="tight")
        return paths


def load_result(folder: str | os.PathLike[str]) -> BenchResult:
    """Reload a folder written by ``BenchResult.save``.

    Raises:
        FileNotFoundError: naming the missing file.
    """
    folder = Path(folder)
    for name in ("records.parquet", "spec.json"):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{folder / name}: not a bench result folder (no {name})")
    records = coerce(pd.read_parquet(folder / "records.parquet"))
    meta = BENCH_RESULT.unwrap(json.loads((folder / "spec.json").read_text(encoding="utf-8")), folder / "spec.json")
    return BenchResult(records, meta)


def combine(results: Iterable[BenchResult]) -> pd.DataFrame:
    """The records of several results in one frame (``summarize`` it to compare backends)."""
    frames = [r.records for r in results]
    if not frames:
        return coerce(pd.DataFrame(columns=list(COLUMNS)))
    return coerce(pd.concat(frames, ignore_index=True))


def _refuse_secrets(texts: Mapping[str, str]) -> None:
    # Belt and braces: describe() never holds a key, but an error message or a
    # hand-edited meta might; a key found in the text stops the write.
    for name, value in os.environ.items():
        if len(value) >= 8 and _SECRET_NAME.search(name):
            for where, text in texts.items():
                if value in text:
                    raise ValueError(f"refusing to save: {where} contains the value of ${name}")
