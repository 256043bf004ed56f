"""What ``lyra-lab recall-eval`` reports: per-probe turn-level recall of one recaller, and its means.

Memory holds the conversation's raw turns (``MemoryEntry.from_turn``), nothing
else (``raw_turn_pipeline``).  recall-eval is a one-cell experiment run by the
runner (``_recall_eval``): each probe is asked at its ``asked_at`` on the replay
clock, and its figures are the rows' ``evidence_recall@k`` (on raw turns equal to
``coverage_recall@k``), ``mrr`` and ``ndcg@k``, averaged over the probes evaluated.

Probes skipped, and counted in ``skipped``: those outside ``categories`` when
given, adversarial/abstention ones unless ``include_adversarial`` (their
evidence is the turn the trap was built from, not an answer), and those
without evidence (nothing to score).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from lyra_lab._params import name_class
from lyra_lab.chunking import Chunk
from lyra_lab.corpus import Probe, Turn
from lyra_lab.stats import BootstrapCI, cluster_bootstrap_ci
from lyra_lab.matching import expects_abstention
from lyra_lab.replay import Pipeline


@dataclass(frozen=True)
class ProbeRecall:
    """Turn-level scores of one probe and the turn ids recall returned (best first)."""

    probe_id: str
    conversation_id: str
    category: str
    recall: float
    mrr: float
    ndcg: float
    retrieved: tuple[tuple[str, ...], ...] = ()
    latency_s: float = 0.0


@dataclass(frozen=True)
class RecallEvalResult:
    """Means over the evaluated probes, what was skipped, and the per-probe scores."""

    recaller: str
    embedder: str | None
    k: int
    n_probes: int
    recall: float
    mrr: float
    ndcg: float
    skipped: Mapping[str, int] = field(default_factory=dict)
    per_probe: tuple[ProbeRecall, ...] = ()

    @classmethod
    def of(cls, recaller: str, embedder: str | None, k: int, per_probe: Sequence[ProbeRecall],
           skipped: Mapping[str, int] | None = None) -> "RecallEvalResult":
        """The result of these per-probe scores: the means computed here, in ``per_probe``'s order."""
        means = _means(per_probe, k)
        return cls(recaller=recaller, embedder=embedder, k=k, n_probes=len(per_probe),
                   recall=means[f"evidence_recall@{k}"], mrr=means["mrr"], ndcg=means[f"ndcg@{k}"],
                   skipped=dict(skipped or {}), per_probe=tuple(per_probe))

    def by_category(self) -> dict[str, dict[str, float]]:
        """``{category: {"n_probes", "evidence_recall@k", "mrr", "ndcg@k"}}`` over the evaluated probes."""
        out: dict[str, dict[str, float]] = {}
        for category in sorted({p.category for p in self.per_probe}):
            out[category] = _means([p for p in self.per_probe if p.category == category], self.k)
        return out

    def cis(self, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0,
            category: str | None = None) -> dict[str, BootstrapCI]:
        """Bootstrap CIs of ``evidence_recall@k``, ``mrr`` and ``ndcg@k``, resampling whole conversations.

        Probes of one conversation share its memory, so they are not independent:
        the cluster bootstrap (``cluster_bootstrap_ci``) gives honest intervals.
        ``category`` restricts to the probes of one category.
        """
        scores = [p for p in self.per_probe if category is None or p.category == category]
        clusters = [p.conversation_id for p in scores]
        return {name: cluster_bootstrap_ci([getattr(p, attr) for p in scores], clusters, n_resamples,
                                           confidence, seed)
                for name, attr in ((f"evidence_recall@{self.k}", "recall"), ("mrr", "mrr"), (f"ndcg@{self.k}", "ndcg"))}

    def probe_rows(self) -> list[dict[str, Any]]:
        """One plain dict per evaluated probe: ids, category, scores and the turn ids retrieved (best first)."""
        return [{"probe_id": p.probe_id, "conversation_id": p.conversation_id, "category": p.category,
                 f"evidence_recall@{self.k}": p.recall, "mrr": p.mrr, f"ndcg@{self.k}": p.ndcg,
                 "retrieved": [list(group) for group in p.retrieved], "latency_s": p.latency_s}
                for p in self.per_probe]

    def to_dict(self) -> dict[str, Any]:
        """The headline figures first (``n_probes``, ``evidence_recall@k``, ``mrr``, ``ndcg@k``), then details.

        ``recall_latency_p50_s``/``_p95_s`` are per recall call; the first query of a
        conversation also builds its index (embeds every turn unless cached).
        """
        latencies = [p.latency_s for p in self.per_probe]
        p50, p95 = np.percentile(latencies, [50, 95]) if latencies else (float("nan"),) * 2
        return {
            **_means(self.per_probe, self.k),
            "recall_latency_p50_s": float(p50),
            "recall_latency_p95_s": float(p95),
            "recaller": self.recaller,
            "embedder": self.embedder,
            "k": self.k,
            "skipped": dict(self.skipped),
            "by_category": self.by_category(),
        }


def _means(scores: Iterable[ProbeRecall], k: int) -> dict[str, float]:
    scores = list(scores)

    def mean(values: list[float]) -> float:
        return float(np.mean(values)) if scores else float("nan")

    return {
        "n_probes": len(scores),
        f"evidence_recall@{k}": mean([s.recall for s in scores]),
        "mrr": mean([s.mrr for s in scores]),
        f"ndcg@{k}": mean([s.ndcg for s in scores]),
    }


def probe_recall(probe: Probe, conversation_id: str, metrics: Mapping[str, float], k: int,
                 retrieved: Sequence[Sequence[str]] = ()) -> ProbeRecall:
    """One probe's ``ProbeRecall`` from its scored metrics (``score_outcome``'s names, or experiment rows).

    ``metrics`` holds ``evidence_recall@k``, ``mrr``, ``ndcg@k`` and, when measured, ``recall_latency_s``.
    """
    return ProbeRecall(
        probe_id=probe.id, conversation_id=conversation_id,
        category="" if probe.category is None else str(probe.category),
        recall=float(metrics[f"evidence_recall@{k}"]), mrr=float(metrics["mrr"]), ndcg=float(metrics[f"ndcg@{k}"]),
        retrieved=tuple(tuple(group) for group in retrieved),
        latency_s=float(metrics.get("recall_latency_s", 0.0)))


def skip_reason(probe: Probe, categories: Collection[str] | None, include_adversarial: bool) -> str | None:
    """Why recall-eval does not score ``probe`` (``category``, ``adversarial``, ``no_evidence``), or None."""
    if categories is not None and str(probe.category) not in categories:
        return "category"
    if not include_adversarial and expects_abstention(probe):
        return "adversarial"
    if not probe.evidence:
        return "no_evidence"
    return None


@dataclass(frozen=True)
class _NoChunks:
    """The "chunker" of a memory of raw turns only: a flush adds nothing (keep_raw put each turn in)."""

    def chunk(self, turns: Sequence[Turn] | str) -> list[Chunk]:
        """No chunks: the turns are in memory already."""
        return []


name_class(_NoChunks, "chunker", "raw_turns")  # its label in rows and spec.json; no registry builds it


def raw_turn_pipeline(tokenizer: str = "o200k_base") -> Pipeline:
    """The memory recall-eval scores: every turn a raw entry as it arrives, no chunk, summary or rollup.

    Its chunker is labelled ``raw_turns`` in rows and ``spec.json``; it is no registered chunker
    (it makes no chunks), so experiment files cannot name it.
    """
    return Pipeline(chunker=_NoChunks(), summarizer=None, rollup=None, keep_raw=True, tokenizer=tokenizer)
