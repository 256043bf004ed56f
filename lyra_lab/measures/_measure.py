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
from dataclasses import dataclass, replace
from typing import Literal, Sequence, TypedDict, Unpack

Unit = Literal["", "k", "tok"]
Level = Literal["probe", "conversation"]
#: What a measure is: ``quality`` (how well memory serves a question: reported with CIs), ``cost`` (what memory
#: costs: tokens, calls, entries, failures), ``timing`` (time measured on this machine), ``bookkeeping`` (where an
#: answer came from in this run: the cache, what was paid now).  Timings and bookkeeping are not results: a rescore
#: compares rows without them.
Kind = Literal["quality", "cost", "timing", "bookkeeping"]
KINDS: tuple[Kind, ...] = ("quality", "cost", "timing", "bookkeeping")

_NAME = re.compile(r"^(?P<base>[A-Za-z_][\w.]*)(?:\[(?P<qual>[^\]]*)\])?(?:@(?P<cut>\d+)(?P<tok>tok)?)?$")


@dataclass(frozen=True)
class Shown:
    """Where a measure appears, as name patterns.

    ``""`` is the bare name, ``"@K"`` every cutoff in hits, ``"@Kmax"`` the largest, ``"@Btok"`` every
    context budget, ``"@5"``/``"@512tok"`` one cutoff.

    Attributes:
        summary: its figures in ``summary.csv`` (quality with 95% CIs, the rest as means).
        markdown: its columns in ``summary.md``'s table and ``report.html``.
        compact: its columns in ``lyra-lab run --compact``'s table.
    """

    summary: tuple[str, ...] = ()
    markdown: tuple[str, ...] = ()
    compact: tuple[str, ...] = ()


@dataclass(frozen=True)
class MeasureInfo:
    """What a family of measures is: its rule in words, its kind, and where reports show it.

    Attributes:
        base: the family's name (``evidence_recall``).
        doc: one sentence on what it measures.
        units: the cutoffs it takes: ``("k",)`` hits, ``("tok",)`` rendered-context tokens, ``()`` none.
        level: ``probe`` (one value per probe) or ``conversation`` (one per replay).
        higher_is_better: False for costs and latencies.
        benchmark: the benchmark whose published scoring rule this follows exactly, if any.
        rule: the rule's name in that benchmark's code, or lyra-lab's own.
        fair: means the same for a memory of raw turns and one of digests (reports lead with these).
        kind: ``quality``, ``cost``, ``timing`` or ``bookkeeping`` (``Kind``).
        traced: needs hits traced to turns (a memory system that cannot trace them shows "cannot trace").
        shown: where reports show it (``Shown``).
    """

    base: str
    doc: str
    units: tuple[Unit, ...] = ()
    level: Level = "probe"
    higher_is_better: bool = True
    benchmark: str | None = None
    rule: str = "lyra-lab"
    fair: bool = False
    kind: Kind = "quality"
    traced: bool = False
    shown: Shown = Shown()

    @property
    def result(self) -> bool:
        """Whether its rows are a result (quality, cost), not time measured here or bookkeeping of this run."""
        return self.kind in ("quality", "cost")


def _every_cutoff(units: tuple[Unit, ...]) -> tuple[str, ...]:
    return ("",) + (("@K",) if "k" in units else ()) + (("@Btok",) if "tok" in units else ())


class _Options(TypedDict, total=False):
    """``MeasureInfo`` fields a registry entry sets (see ``_info``); ``summary`` false keeps it out of summary.csv."""

    level: Level
    higher_is_better: bool
    benchmark: str | None
    rule: str
    fair: bool
    kind: Kind
    traced: bool
    summary: bool
    markdown: tuple[str, ...]
    compact: tuple[str, ...]


def _info(base: str, doc: str, units: tuple[Unit, ...] = (), **kw: Unpack[_Options]) -> tuple[str, MeasureInfo]:
    kind = kw.get("kind", "quality")
    shown = Shown(_every_cutoff(units) if kw.get("summary", True) else (), kw.get("markdown", ()),
                  kw.get("compact", ()))
    return base, MeasureInfo(base, doc, units, kw.get("level", "probe"), kw.get("higher_is_better", kind == "quality"),
                             kw.get("benchmark"), kw.get("rule", "lyra-lab"), kw.get("fair", False), kind,
                             kw.get("traced", False), shown)


_LME = "LongMemEval"

#: Every measure family lyra-lab writes, in the order reports show them (fair ones first): the one list every
#: report, table, ``compare``, ``rescore`` and the docs read.
MEASURES: dict[str, MeasureInfo] = dict([
    _info("answer_in_context", "the gold answer, by the retention rule, is in the context recall fills with B "
          "rendered tokens", ("tok",), fair=True, markdown=("@Btok",), compact=("@512tok",)),
    _info("evidence_recall", "share of evidence turns retrieved verbatim in the top K", ("k", "tok"), fair=True,
          traced=True, markdown=("@K",), compact=("@5",)),
    _info("coverage_recall", "share of evidence turns covered by the top K (a digest covers every turn it folds)",
          ("k", "tok"), traced=True, markdown=("@Kmax",), compact=("@5",)),
    _info("recall_all", "1 if the top K cover every evidence turn", ("k",), benchmark=_LME,
          rule="evaluate_retrieval recall_all (turn level)", traced=True),
    _info("recall_any", "1 if some top-K hit covers an evidence turn", ("k",), benchmark=_LME,
          rule="evaluate_retrieval recall_any (turn level)", traced=True),
    _info("mrr", "reciprocal rank of the first hit covering an evidence turn", traced=True, markdown=("",),
          compact=("",)),
    _info("ndcg", "binary-relevance nDCG@K, ideal list = relevant memory entries", ("k",), traced=True,
          markdown=("@Kmax",)),
    _info("ndcg_any", "nDCG@K with LongMemEval's discount (1 at rank 1, 1/log2(i) below)", ("k",),
          benchmark=_LME, rule="evaluate_retrieval ndcg (turn level)", traced=True),
    _info("session_recall", "share of evidence sessions among the sessions of the top K hits", ("k",),
          traced=True, summary=False),
    _info("session_recall_any", "1 if an evidence session is among the hits up to K distinct sessions", ("k",),
          benchmark=_LME, rule="evaluate_retrieval_turn2session recall_any", traced=True, summary=False),
    _info("session_recall_all", "1 if every evidence session is among the hits up to K distinct sessions", ("k",),
          benchmark=_LME, rule="evaluate_retrieval_turn2session recall_all", traced=True),
    _info("session_ndcg_any", "nDCG of the hits up to K distinct sessions, each hit relevant when its session "
          "is an evidence session, against every memory entry of an evidence session", ("k",),
          benchmark=_LME, rule="evaluate_retrieval_turn2session ndcg", traced=True),
    _info("distinct_session_ndcg_any", "nDCG@K over the distinct sessions of the hits in rank order, against the "
          "evidence sessions (lyra-lab's variant of LongMemEval's session nDCG)", ("k",), traced=True,
          summary=False),
    _info("recall", "coverage recall under its name before the rename (runs written before it)", ("k",),
          traced=True, markdown=("@K",)),
    _info("qa_em", "exact match of the answer under the run's QA scorer"),
    _info("qa_f1", "token F1 of the answer under the run's QA scorer", markdown=("",), compact=("",)),
    _info("judge", "an LLM judge's verdict on the answer (1 correct, 0 wrong)", markdown=("",)),
    _info("judge_tpr", "a judge's verdict on a control known correct (the gold itself): its mean is the judge's "
          "true-positive rate", summary=False),
    _info("judge_fpr", "a judge's verdict on a control known wrong (built from the conversation): its mean is the "
          "judge's false-positive rate", higher_is_better=False, summary=False),
    _info("retention", "the gold answer is still anywhere in memory (retention rule)", markdown=("",),
          compact=("",)),
    _info("context_retention", "the gold answer is in the rendered context of the top K hits"),
    _info("evidence_in_context", "1 if every evidence turn was held verbatim by a hit shown whole in the context "
          "the answerer was given (answered probes; what splits QA into retrieval and answering)"),
    _info("context_tokens", "tokens of the rendered context", ("tok",), kind="cost", markdown=("",),
          compact=("",)),
    _info("answer_room", "the context budget of a recaller given the whole memory (full_context): the tokens "
          "the answerer's window leaves beside its prompt, question and answer (others: [grid] context_tokens)",
          kind="cost", summary=False),
    _info("recall_latency_s", "wall time of the timed top-K recall call", kind="timing"),
    _info("recall_latency_p50_s", "median of a pipeline's recall latencies over all its probes", kind="timing",
          summary=False, markdown=("",)),
    _info("recall_latency_p95_s", "95th percentile of a pipeline's recall latencies over all its probes",
          kind="timing", summary=False, markdown=("",)),
    _info("answer_latency_s", "latency of the answering call", kind="timing", summary=False),
    _info("answer_cost_usd", "dollars of the answering call", kind="cost"),
    _info("memory_entries", "memory entries at the end of the replay", level="conversation", kind="cost",
          summary=False),
    _info("memory_tokens", "tokens of the whole rendered memory at the end of the replay", level="conversation",
          kind="cost", compact=("",)),
    _info("cached_calls", "LLM calls served from the response cache", level="conversation", kind="bookkeeping",
          higher_is_better=True, summary=False),
    _info("flushes", "trigger flushes of the replay", level="conversation", kind="cost", higher_is_better=True,
          summary=False),
    _info("open_s", "seconds a memory system took to open a fresh memory", level="conversation", kind="timing"),
    _info("close_s", "seconds a memory system took to close its memory", level="conversation", kind="timing",
          summary=False),
])

#: Per-phase figures (``<phase>.<figure>``, e.g. ``summarize.cost_usd``): conversation-level, by figure.
PHASE_FIGURES: dict[str, MeasureInfo] = {base: info for base, info in [
    _info("cost_usd", "dollars as first paid", kind="cost", summary=False),
    _info("latency_s", "sum of per-call latencies as first paid", kind="timing", summary=False),
    _info("latency_p50_s", "median call latency", kind="timing", summary=False),
    _info("latency_p95_s", "95th-percentile call latency", kind="timing", summary=False),
    _info("paid_cost_usd", "dollars this run paid", kind="bookkeeping", summary=False),
    _info("paid_latency_s", "wall time this run spent", kind="bookkeeping", summary=False),
    _info("cached_calls", "calls served from the response cache", kind="bookkeeping", higher_is_better=True,
          summary=False),
    _info("calls", "calls made", kind="cost", summary=False),
    _info("prompt_tokens", "prompt tokens", kind="cost", summary=False),
    _info("completion_tokens", "completion tokens", kind="cost", summary=False),
    _info("s_per_turn", "seconds a memory system took to ingest one turn", kind="timing", summary=False),
    _info("items", "items a memory system holds after ingesting", kind="cost", summary=False),
    _info("failed_calls", "ingest calls that failed", kind="cost", summary=False),
    _info("bad_outputs", "ingest outputs the system could not use", kind="cost", summary=False),
]}

_BOTH = Shown(("",), ("",))
#: Where each phase's figures are shown (``<phase>.<figure>`` → ``Shown``), in the order reports show them;
#: a phase figure not listed is in ``metrics.csv`` only.
PHASE_SHOWN: dict[str, Shown] = {
    "ingest.s_per_turn": _BOTH, "ingest.latency_s": Shown(("",)), "ingest.calls": Shown(("",)),
    "ingest.prompt_tokens": Shown(("",)), "ingest.completion_tokens": Shown(("",)), "ingest.cost_usd": _BOTH,
    "ingest.items": _BOTH, "ingest.failed_calls": _BOTH, "ingest.bad_outputs": Shown(("",)),
    "summarize.cost_usd": _BOTH, "summarize.latency_s": _BOTH, "summarize.latency_p50_s": Shown(("",), (), ("",)),
    "summarize.latency_p95_s": _BOTH, "summarize.paid_cost_usd": Shown(("",)), "summarize.paid_latency_s": _BOTH,
    "summarize.cached_calls": _BOTH,
    "rollup.cost_usd": _BOTH, "rollup.latency_s": _BOTH, "rollup.latency_p50_s": Shown(("",)),
    "rollup.latency_p95_s": Shown(("",)), "rollup.paid_cost_usd": Shown(("",)), "rollup.paid_latency_s": _BOTH,
    "rollup.cached_calls": Shown(("",)),
}


def measure_info(base: str) -> MeasureInfo | None:
    """What the family ``base`` is (``evidence_recall``, ``summarize.cost_usd``); None for a name lyra-lab lacks."""
    if "." in base:
        phase, _, figure = base.partition(".")
        info = PHASE_FIGURES.get(figure)
        if info is None:
            return None
        return replace(info, base=base, doc=f"{phase}: {info.doc}", level="conversation",
                       shown=PHASE_SHOWN.get(base, Shown()))
    return MEASURES.get(base)


def shown_in(where: Literal["summary", "markdown", "compact"], kinds: Sequence[Kind] = KINDS) -> tuple[str, ...]:
    """The name patterns of every measure of ``kinds`` shown ``where``, in the registry's order (measures, then phases).

    >>> shown_in("compact")[:3]
    ('answer_in_context@512tok', 'evidence_recall@5', 'coverage_recall@5')
    """
    infos = [*MEASURES.values(), *(i for i in map(measure_info, PHASE_SHOWN) if i is not None)]
    return tuple(info.base + suffix for info in infos if info.kind in kinds
                 for suffix in {"summary": info.shown.summary, "markdown": info.shown.markdown,
                                "compact": info.shown.compact}[where])


def is_result(name: str) -> bool:
    """Whether rows of the metric ``name`` are a result (``MeasureInfo.result``).

    A name lyra-lab does not define (``degraded.answer.failed``, a newer run's measure) counts as a result:
    rows are compared unless the registry says they are time or bookkeeping.
    """
    try:
        info = Measure.parse(name).info
    except ValueError:
        return True
    return info is None or info.result


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
        return measure_info(self.base)


def measure_names(names: object) -> dict[str, Measure]:
    """``name -> Measure`` for each parseable name of ``names`` (an iterable of metric names)."""
    out: dict[str, Measure] = {}
    for name in names:  # type: ignore[attr-defined]
        try:
            out[str(name)] = Measure.parse(str(name))
        except ValueError:
            continue
    return out
