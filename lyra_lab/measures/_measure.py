"""Measures as values: a metric name parsed once into what it measures, at what cutoff, under whose rule.

A row's ``metric`` column holds a measure's name: ``evidence_recall@10`` (at the top 10
hits), ``answer_in_context@512tok`` (in a rendered context of 512 tokens), ``mrr``,
``summarize.cost_usd`` (a phase's figure), ``judge[gpt-4o]`` (one judge's verdicts).
``Measure.parse(name)`` turns the name into a value (base, cutoff, unit, qualifier) whose
``info`` says what the measure is, its level (probe or conversation), which way is better and
which published rule it follows; ``str(measure)`` gives the name back.  Reports select,
order and group measures through these values, never by re-parsing names with regular
expressions.

>>> m = Measure.parse("answer_in_context@512tok")
>>> (m.base, m.cutoff, m.unit, str(m))
('answer_in_context', 512, 'tok', 'answer_in_context@512tok')
>>> Measure.parse("session_ndcg_any@10").info.benchmark
'LongMemEval'
>>> Measure.parse("judge[gpt-4o]").qualifier
'gpt-4o'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Unit = Literal["", "k", "tok"]
Level = Literal["probe", "conversation"]

_NAME = re.compile(r"^(?P<base>[A-Za-z_][\w.]*)(?:\[(?P<qual>[^\]]*)\])?(?:@(?P<cut>\d+)(?P<tok>tok)?)?$")


@dataclass(frozen=True)
class MeasureInfo:
    """What a family of measures is: its rule in words, and the benchmark whose published rule it follows.

    Attributes:
        base: the family's name (``evidence_recall``).
        doc: one sentence on what it measures.
        units: the cutoffs it takes: ``("k",)`` hits, ``("tok",)`` rendered-context tokens, ``()`` none.
        level: ``probe`` (one value per probe) or ``conversation`` (one per replay).
        higher_is_better: False for costs and latencies.
        benchmark: the benchmark whose published scoring rule this follows exactly, if any.
        rule: the rule's name in that benchmark's code, or lyra-lab's own.
        fair: means the same for a memory of raw turns and one of digests (reports lead with these).
    """

    base: str
    doc: str
    units: tuple[Unit, ...] = ()
    level: Level = "probe"
    higher_is_better: bool = True
    benchmark: str | None = None
    rule: str = "lyra-lab"
    fair: bool = False


def _info(base: str, doc: str, units: tuple[Unit, ...] = (), **kw: object) -> tuple[str, MeasureInfo]:
    return base, MeasureInfo(base, doc, units, **kw)  # type: ignore[arg-type]


#: Every measure family lyra-lab writes, in the order reports show them (fair ones first).
MEASURES: dict[str, MeasureInfo] = dict([
    _info("answer_in_context", "the gold answer, by the retention rule, is in the context recall fills with B "
          "rendered tokens", ("tok",), fair=True),
    _info("evidence_recall", "share of evidence turns retrieved verbatim in the top K", ("k", "tok"), fair=True),
    _info("coverage_recall", "share of evidence turns covered by the top K (a digest covers every turn it folds)",
          ("k", "tok")),
    _info("recall_all", "1 if the top K cover every evidence turn", ("k",), benchmark="LongMemEval",
          rule="evaluate_retrieval recall_all (turn level)"),
    _info("recall_any", "1 if some top-K hit covers an evidence turn", ("k",), benchmark="LongMemEval",
          rule="evaluate_retrieval recall_any (turn level)"),
    _info("mrr", "reciprocal rank of the first hit covering an evidence turn"),
    _info("ndcg", "binary-relevance nDCG@K, ideal list = relevant memory entries", ("k",)),
    _info("ndcg_any", "nDCG@K with LongMemEval's discount (1 at rank 1, 1/log2(i) below)", ("k",),
          benchmark="LongMemEval", rule="evaluate_retrieval ndcg (turn level)"),
    _info("session_recall", "share of evidence sessions among the sessions of the top K hits", ("k",)),
    _info("session_recall_any", "1 if an evidence session is among the hits up to K distinct sessions", ("k",),
          benchmark="LongMemEval", rule="evaluate_retrieval_turn2session recall_any"),
    _info("session_recall_all", "1 if every evidence session is among the hits up to K distinct sessions", ("k",),
          benchmark="LongMemEval", rule="evaluate_retrieval_turn2session recall_all"),
    _info("session_ndcg_any", "nDCG of the hits up to K distinct sessions, each hit relevant when its session "
          "is an evidence session, against every memory entry of an evidence session", ("k",),
          benchmark="LongMemEval", rule="evaluate_retrieval_turn2session ndcg"),
    _info("distinct_session_ndcg_any", "nDCG@K over the distinct sessions of the hits in rank order, against the "
          "evidence sessions (lyra-lab's variant of LongMemEval's session nDCG)", ("k",)),
    _info("qa_em", "exact match of the answer under the run's QA scorer"),
    _info("qa_f1", "token F1 of the answer under the run's QA scorer"),
    _info("judge", "an LLM judge's verdict on the answer (1 correct, 0 wrong)"),
    _info("judge_tpr", "a judge's verdict on a control known correct (the gold itself): its mean is the judge's "
          "true-positive rate"),
    _info("judge_fpr", "a judge's verdict on a control known wrong (built from the conversation): its mean is the "
          "judge's false-positive rate", higher_is_better=False),
    _info("retention", "the gold answer is still anywhere in memory (retention rule)"),
    _info("context_retention", "the gold answer is in the rendered context of the top K hits"),
    _info("evidence_in_context", "1 if every evidence turn was held verbatim by a hit shown whole in the context "
          "the answerer was given (answered probes; what splits QA into retrieval and answering)"),
    _info("context_tokens", "tokens of the rendered context", ("tok",), higher_is_better=False),
    _info("recall_latency_s", "wall time of the timed top-K recall call", higher_is_better=False),
    _info("answer_latency_s", "latency of the answering call", higher_is_better=False),
    _info("answer_cost_usd", "dollars of the answering call", higher_is_better=False),
    _info("memory_entries", "memory entries at the end of the replay", level="conversation",
          higher_is_better=False),
    _info("memory_tokens", "tokens of the whole rendered memory at the end of the replay", level="conversation",
          higher_is_better=False),
    _info("cached_calls", "LLM calls served from the response cache", level="conversation"),
    _info("flushes", "trigger flushes of the replay", level="conversation"),
])

#: Per-phase figures (``<phase>.<figure>``, e.g. ``summarize.cost_usd``): conversation-level costs.
PHASE_FIGURES: dict[str, str] = {
    "latency_s": "sum of per-call latencies as first paid", "calls": "calls made",
    "prompt_tokens": "prompt tokens", "completion_tokens": "completion tokens", "cost_usd": "dollars as first paid",
    "paid_latency_s": "wall time this run spent", "paid_cost_usd": "dollars this run paid",
    "cached_calls": "calls served from the response cache", "latency_p50_s": "median call latency",
    "latency_p95_s": "95th-percentile call latency",
}


@dataclass(frozen=True, order=True)
class Measure:
    """One measure: a family (``base``), an optional cutoff and an optional qualifier.

    The cutoff is in hits (``@10``) or tokens (``@512tok``); the qualifier says which judge
    (``judge[gpt-4o]``).
    """

    base: str
    cutoff: int | None = None
    unit: Unit = ""
    qualifier: str | None = None

    def __post_init__(self) -> None:
        if (self.cutoff is None) != (self.unit == ""):
            raise ValueError(f"measure {self.base!r}: a cutoff needs a unit ('k' or 'tok') and a unit a cutoff")
        if self.cutoff is not None and self.cutoff < 1:
            raise ValueError(f"measure {self.base!r}: the cutoff must be >= 1, got {self.cutoff}")

    @classmethod
    def parse(cls, name: str) -> "Measure":
        """The measure a metric name stands for (``ValueError`` for a name no measure has)."""
        m = _NAME.match(name)
        if m is None:
            raise ValueError(f"not a measure name: {name!r}")
        cut = m["cut"]
        return cls(m["base"], int(cut) if cut else None, ("tok" if m["tok"] else "k") if cut else "", m["qual"])

    @classmethod
    def at(cls, base: str, k: int) -> "Measure":
        """``base@k``: at the top ``k`` hits."""
        return cls(base, int(k), "k")

    @classmethod
    def at_tokens(cls, base: str, budget: int) -> "Measure":
        """``base@<budget>tok``: in a rendered context of ``budget`` tokens."""
        return cls(base, int(budget), "tok")

    def __str__(self) -> str:
        name = self.base if self.qualifier is None else f"{self.base}[{self.qualifier}]"
        if self.cutoff is None:
            return name
        return f"{name}@{self.cutoff}{'tok' if self.unit == 'tok' else ''}"

    @property
    def phase(self) -> str | None:
        """The phase of a per-phase figure (``summarize`` of ``summarize.cost_usd``), else None."""
        return self.base.split(".", 1)[0] if "." in self.base else None

    @property
    def info(self) -> MeasureInfo | None:
        """What this measure is (None for a name lyra-lab does not define, e.g. from an older run)."""
        if self.phase is not None:
            figure = self.base.split(".", 1)[1]
            doc = PHASE_FIGURES.get(figure)
            if doc is None:
                return None
            better = figure == "cached_calls"
            return MeasureInfo(self.base, f"{self.phase}: {doc}", level="conversation", higher_is_better=better)
        return MEASURES.get(self.base)


def measure_names(names: object) -> dict[str, Measure]:
    """``name -> Measure`` for each parseable name of ``names`` (an iterable of metric names)."""
    out: dict[str, Measure] = {}
    for name in names:  # type: ignore[attr-defined]
        try:
            out[str(name)] = Measure.parse(str(name))
        except ValueError:
            continue
    return out
