"""Cells of an experiment, the one protocol every kind of cell answers (``CellKind``), and their tidy rows.

A cell is one memory pipeline × backend × embedder × seed × conversation: one
replay, whose memory serves every recaller (or one memory system's run over the
conversation, ``_system_cell``).  What reasons about a run (the plan, consent, the
runner, resume) asks the cell's ``kind`` (``_kinds``), never its type.  Its id hashes everything that
determines its rows (corpus hash, conversation, selected probes, the resolved
pipeline and recallers, backend, embedder, seed, ks, QA and judge settings),
so a changed spec never reuses a stale cell.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Literal, Mapping, Protocol

import numpy as np

from lyra_lab._served import stable
from lyra_lab.backends import BackendSpec, EmbedderSpec
from lyra_lab.corpus import Probe
from lyra_lab.measures import ControlVerdict, JudgeResult
from lyra_lab.recall import Recaller
from lyra_lab.experiments.grid import SystemPipeline, spec_label
from lyra_lab.replay import PhaseCost, Pipeline, flatten_params, strategy_spec
from lyra_lab.runs import CellRows

__all__ = ["PHASE_METRICS", "Cell", "CellKind", "CellNeeds", "add_conversation_rows", "add_probe_rows", "base_columns",
           "cell_id", "phase_metrics", "probe_columns", "probe_origin"]

if TYPE_CHECKING:
    from lyra_lab.corpus import Corpus
    from lyra_lab.experiments.cells._setup import CellSetup
    from lyra_lab.experiments.grid import Resources
    from lyra_lab.replay import EventLog


PHASE_METRICS = ("latency_s", "calls", "prompt_tokens", "completion_tokens", "cost_usd", "paid_latency_s",
                 "paid_cost_usd", "cached_calls")


@dataclass(frozen=True)
class CellNeeds:
    """What a cell needs and every place its conversation's text can reach.

    Attributes:
        backends: the backends its calls go to (its own, the answering model's, the judges').
        embedders: the embedders it embeds with.
        urls: services outside lyra-lab that receive the text (an ``http`` system).
        processes: command lines it starts that receive the text (an MCP server, ``serve-memory``).
    """

    backends: tuple[BackendSpec, ...] = ()
    embedders: tuple[EmbedderSpec, ...] = ()
    urls: tuple[str, ...] = ()
    processes: tuple[str, ...] = ()


class CellKind(Protocol):
    """A kind of cell (lyra-lab's pipelines, memory systems): how to run, forecast and describe its cells.

    Four questions rather than STYLE's one method: they are what consent, the runner, the plan's
    dry run and a failed cell's rows must each ask of any cell, and each kind answers them together.
    """

    def needs(self, cell: Cell, setup: CellSetup) -> CellNeeds:
        """The backends and embedders it uses, the services and processes its text reaches."""
        ...

    def run(self, setup: CellSetup, cell: Cell, corpus: Corpus, res: Resources, log: EventLog) -> CellRows:
        """The cell's rows (it may raise ``BackendError`` or ``MemorySystemError``)."""
        ...

    def dry(self, cell: Cell, reply: Literal["low", "high"]) -> Cell:
        """The cell the plan's dry run may execute in its place: one that sends nothing out of this process."""
        ...

    def columns(self, setup: CellSetup, cell: Cell) -> list[dict[str, object]]:
        """The identifying columns of each of its groups of conversation rows (one per recaller, or one)."""
        ...


@dataclass(frozen=True)
class Cell:
    """One replay of a grid: a memory pipeline on a backend and embedder, with a seed, over one conversation.

    Attributes:
        cell_id: ``<conversation slug>-<12 hex>`` (``cell_id``): the hash of everything its rows depend on.
        pipeline: the memory pipeline, or a memory system as a pipeline of the grid (``SystemPipeline``).
        label: the pipeline's label in rows (``token_budget+map_reduce+none``, ``mem0:raw``).
        backend: the LLM backend's spec.
        embedder: the embedder's spec (``"none"``: no embedder).
        seed: passed to every LLM call.
        conversation_id: the conversation replayed.
        kind: how the cell runs, is forecast and what it reaches (``CellKind``).
    """

    cell_id: str
    pipeline: Pipeline | SystemPipeline
    label: str
    backend: BackendSpec
    embedder: EmbedderSpec
    seed: int
    conversation_id: str
    kind: CellKind

    @property
    def backend_label(self) -> str:
        """The backend's short name (the ``backend`` column)."""
        return spec_label(self.backend)

    @property
    def embedder_label(self) -> str:
        """The embedder's short name (the ``embedder`` column)."""
        return spec_label(self.embedder)


def cell_id(payload: Mapping[str, object], conversation_id: str) -> str:
    """``<conversation slug>-<12 hex>``: readable and filesystem-safe, unique per payload.

    A server this process started is named by what it serves, not its port (``lyra_lab._served``).
    """
    plain = stable(json.loads(json.dumps(payload, default=str)))
    digest = hashlib.sha256(json.dumps(plain, sort_keys=True, default=str).encode("utf-8")).hexdigest()
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", conversation_id)[:40].strip("._") or "conv"
    return f"{slug}-{digest[:12]}"


def base_columns(run: str, cell: Cell, recaller_label: str, recaller: Recaller, corpus: str) -> dict[str, object]:
    """The identifying columns of every row of one cell × recaller."""
    if not isinstance(cell.pipeline, Pipeline):
        raise TypeError(f"cell {cell.cell_id} runs a memory system: its columns are _system_cell.system_columns")
    names = cell.pipeline.kind_names()
    row = {
        "run": run, "cell_id": cell.cell_id, "pipeline": f"{cell.label}|{recaller_label}",
        "chunker": names["chunker"], "summarizer": names["summarizer"], "rollup": names["rollup"],
        "trigger": names["trigger"], "recaller": strategy_spec(recaller)["name"],
        "backend": cell.backend_label, "embedder": cell.embedder_label, "seed": cell.seed,
        "corpus": corpus, "conversation_id": cell.conversation_id, "simulated": False,
    }
    row.update(cell.pipeline.params())
    row.update(flatten_params("recaller", recaller))
    return row


def probe_origin(probe: Probe) -> str:
    """Where a probe came from.

    ``planted`` (``plant_probes``), ``drafted`` (``lyra-lab probes draft``) or ``source`` (the
    dataset's own, e.g. LoCoMo's QA).
    """
    meta = probe.meta or {}
    return "planted" if meta.get("planted") else "drafted" if meta.get("drafted") else "source"


def probe_columns(base: Mapping[str, object], probe: Probe) -> dict[str, object]:
    """The columns of every row of one probe × recaller (all but ``metric`` and ``value``)."""
    category = "" if probe.category is None else str(probe.category)
    return {**base, "probe_id": probe.id, "category": category, "probe_origin": probe_origin(probe)}


def add_probe_rows(rows: CellRows, base: Mapping[str, object], probe: Probe, metrics: Mapping[str, float],
                   verdicts: Iterable[tuple[str, JudgeResult]] = ()) -> None:
    """A probe's rows: one per metric, then one ``judge`` row per judge's verdict.

    ``verdicts`` are ``(label, JudgeResult)`` pairs; each judge is named in column ``judge`` (its
    prompt in ``judge_prompt``).
    """
    columns = probe_columns(base, probe)
    rows.add(columns, metrics)
    for label, verdict in verdicts:
        rows.add({**columns, "judge": label, "judge_prompt": verdict.prompt}, {"judge": verdict.score})


def add_control_rows(rows: CellRows, base: Mapping[str, object], probe: Probe,
                     controls: Iterable[ControlVerdict]) -> None:
    """A probe's judge-control rows: each judge's verdicts on answers of known truth.

    Under metrics of their own, so they never mix into ``judge``: ``judge_tpr`` (the control was
    correct; the mean is the true-positive rate) and ``judge_fpr`` (it was wrong; the mean is the
    false-positive rate); the judge in column ``judge``, the control's kind in ``judge_control``,
    and ``judge.corrected`` when the judge asked for a corrected accuracy.
    """
    columns = probe_columns(base, probe)
    for c in controls:
        extra = {"judge.corrected": True} if c.corrected else {}
        rows.add({**columns, "judge": c.judge, "judge_prompt": c.result.prompt, "judge_control": c.control.kind,
                  **extra}, {"judge_tpr" if c.control.truth else "judge_fpr": c.result.score})


def phase_metrics(phases: Mapping[str, PhaseCost]) -> dict[str, float]:
    """The conversation-level metrics of each phase (columns ``<phase>.<name>``).

    As measured when the calls were paid (a response-cache hit keeps its original
    figures, so a re-run from the cache reports what a fresh run reports):

    * ``latency_s`` — sum of per-call latencies (wall time when the phase made no
      calls); it exceeds the wall time when calls ran concurrently;
    * ``calls``, ``prompt_tokens``, ``completion_tokens``, ``cost_usd``;
    * ``latency_p50_s``, ``latency_p95_s`` — per-call latency percentiles.

    Paid this run:

    * ``paid_latency_s`` — wall time this run spent in the phase (≈0 when all
      calls were cache hits);
    * ``paid_cost_usd`` — dollars of the calls not served from the cache;
    * ``cached_calls`` — how many calls the cache served.
    """
    out: dict[str, float] = {}
    for name, cost in phases.items():
        out[f"{name}.latency_s"] = float(sum(cost.latencies_s)) if cost.latencies_s else float(cost.latency_s)
        out[f"{name}.calls"] = float(cost.usage.calls)
        out[f"{name}.prompt_tokens"] = float(cost.usage.prompt_tokens)
        out[f"{name}.completion_tokens"] = float(cost.usage.completion_tokens)
        out[f"{name}.cost_usd"] = float(cost.usage.cost_usd)
        out[f"{name}.paid_latency_s"] = float(cost.latency_s)
        out[f"{name}.paid_cost_usd"] = float(cost.paid.cost_usd)
        out[f"{name}.cached_calls"] = float(cost.usage.cached_calls)
        if cost.latencies_s:
            out[f"{name}.latency_p50_s"] = float(np.percentile(cost.latencies_s, 50))
            out[f"{name}.latency_p95_s"] = float(np.percentile(cost.latencies_s, 95))
    return out


def add_conversation_rows(rows: CellRows, base: Mapping[str, object], metrics: Mapping[str, float]) -> None:
    """A recaller's conversation-level rows (``probe_id`` and ``category`` empty), one per metric."""
    rows.add({**base, "probe_id": "", "category": ""}, metrics)
