"""Turn-level recall evaluation of one recaller over a corpus with probes (``lyra-lab recall-eval``).

Every turn of a conversation goes into a ``MemoryStore`` as a raw entry
(``MemoryEntry.from_turn``) — no chunking, summarizing or rollup — and the
recaller answers each probe's question over it with the whole conversation in
memory (the probe's ``asked_at`` is not used to hide later turns).  Scores are
turn-level ``evidence_recall@k`` (share of evidence turns in the top k; on raw
turns it equals ``coverage_recall@k``), ``mrr`` (over the top k) and ``ndcg@k``,
averaged over the probes evaluated.  The metrics are those of ``_retrieval``,
with the same definitions as in experiment rows: nDCG's ideal list counts the
memory entries relevant to the probe (here the evidence turns the conversation
holds), as replay counts them.

Probes skipped, and counted in ``skipped``: those without evidence (nothing
to score), adversarial/abstention ones unless ``include_adversarial`` (their
evidence is the turn the trap was built from, not an answer), and those
outside ``categories`` when given.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lyra_lab.backends import EmbedderWrapper
from lyra_lab.corpus import Corpus
from lyra_lab.evaluate._bootstrap import BootstrapCI, cluster_bootstrap_ci
from lyra_lab.matching import expects_abstention
from lyra_lab.evaluate._retrieval import evidence_recall_at, mrr, ndcg_at, turn_groups, verbatim_flags
from lyra_lab.memory import MemoryEntry, MemoryStore


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


def _means(scores, k: int) -> dict[str, float]:
    scores = list(scores)
    mean = (lambda xs: float(np.mean(xs))) if scores else (lambda xs: float("nan"))
    return {
        "n_probes": len(scores),
        f"evidence_recall@{k}": mean([s.recall for s in scores]),
        "mrr": mean([s.mrr for s in scores]),
        f"ndcg@{k}": mean([s.ndcg for s in scores]),
    }


def recall_eval(
    corpus: Corpus,
    recaller: Any,
    *,
    k: int = 10,
    embedder: Any = None,
    categories: Collection[int | str] | None = None,
    conversations: int | Collection[str] | None = None,
    include_adversarial: bool = False,
    progress: bool = True,
) -> RecallEvalResult:
    """Run ``recaller`` for every selected probe of ``corpus``; see the module docstring.

    Args:
        corpus: conversations and probes (``lyra_lab.corpus.load``).
        recaller: a ``Recaller`` (e.g. ``RECALLERS.build("bm25")``).
        k: hits per query.
        embedder: for recallers that embed (dense, hybrid…); wrap it in a cache for re-runs.
        categories: keep only probes whose category (compared as text) is listed.
        conversations: the first N conversations, or the ids to evaluate.
        include_adversarial: also score adversarial/abstention probes.
        progress: show a tqdm bar over probes.
    """
    from tqdm.auto import tqdm

    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    convs = list(corpus.conversations)
    if isinstance(conversations, int):
        convs = convs[:conversations]
    elif conversations is not None:
        unknown = sorted(set(conversations) - {c.id for c in convs})
        if unknown:
            raise KeyError(f"no conversation(s) {unknown[:5]} in corpus {corpus.name!r}")
        convs = [c for c in convs if c.id in set(conversations)]
    wanted = None if categories is None else {str(c) for c in categories}
    skipped: Counter[str] = Counter()
    plan = []
    for conv in convs:
        selected = []
        for probe in corpus.probes_for(conv.id):
            if wanted is not None and str(probe.category) not in wanted:
                skipped["category"] += 1
            elif not include_adversarial and expects_abstention(probe):
                skipped["adversarial"] += 1
            elif not probe.evidence:
                skipped["no_evidence"] += 1
            else:
                selected.append(probe)
        plan.append((conv, selected))

    tracked = None if embedder is None else _UsedEmbedder(embedder)
    scores: list[ProbeRecall] = []
    bar = tqdm(total=sum(len(p) for _, p in plan), desc="recall-eval", unit="probe", disable=None if progress else True)
    try:
        for conv, probes in plan:
            if not probes:
                continue
            bar.set_postfix_str(conv.id)
            store = MemoryStore(MemoryEntry.from_turn(turn) for turn in conv.turns())
            covering = _covering(store.entries(conv.id))
            for probe in probes:
                start = time.perf_counter()
                hits = recaller.recall(store, probe.question, k, conversation_id=conv.id, embedder=tracked)
                latency = time.perf_counter() - start
                hits = list(hits)[:k]
                groups = turn_groups(hits)
                n_relevant = len(set().union(*(covering.get(t, ()) for t in probe.evidence)))
                scores.append(ProbeRecall(
                    probe_id=probe.id, conversation_id=conv.id,
                    category="" if probe.category is None else str(probe.category),
                    recall=evidence_recall_at(probe.evidence, groups, k, verbatim_flags(hits)),
                    mrr=mrr(probe.evidence, groups),
                    ndcg=ndcg_at(probe.evidence, groups, k, n_relevant=n_relevant),
                    retrieved=tuple(groups),
                    latency_s=latency,
                ))
                bar.update(1)
    finally:
        bar.close()
    means = _means(scores, k)
    return RecallEvalResult(
        recaller=getattr(type(recaller), "registry_name", type(recaller).__name__),
        embedder=tracked.name if tracked is not None and tracked.used else None,
        k=k,
        n_probes=len(scores),
        recall=means[f"evidence_recall@{k}"],
        mrr=means["mrr"],
        ndcg=means[f"ndcg@{k}"],
        skipped=dict(skipped),
        per_probe=tuple(scores),
    )


def _covering(entries) -> dict[str, set[str]]:
    """Turn id → ids of the memory entries covering it (nDCG's relevant entries, as replay counts them)."""
    out: dict[str, set[str]] = {}
    for entry in entries:
        for turn_id in entry.turn_ids:
            out.setdefault(turn_id, set()).add(entry.id)
    return out


class _UsedEmbedder(EmbedderWrapper):
    """Passes calls through and notes whether any were made, so results name an embedder
    only when the recaller used it (bm25 given the default embedder does not; asking its
    ``identity`` is not a use)."""

    def __init__(self, inner: Any):
        super().__init__(inner)
        self.used = False

    def embed(self, texts, kind: str = "passage"):
        self.used = True
        return self.inner.embed(texts, kind=kind)
