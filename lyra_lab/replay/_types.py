"""What replay hands to evaluation: per probe, what recall served and what it cost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from lyra_lab.backends import Usage
from lyra_lab.corpus import Probe
from lyra_lab.recall import Hit


@dataclass(frozen=True, slots=True)
class PhaseCost:
    """Calls, tokens, dollars and wall time spent in one phase (summarize, rollup, embed, recall, answer).

    ``usage`` and ``latencies_s`` count every call as first paid (a response-cache
    hit carries its original tokens, dollars and latency); ``latency_s`` is the
    wall time of this run and ``paid`` the usage of the calls this run paid for.
    """

    phase: str
    usage: Usage = Usage()
    latency_s: float = 0.0
    latencies_s: tuple[float, ...] = ()
    paid: Usage = Usage()


@dataclass(frozen=True, slots=True)
class ProbeOutcome:
    """Recall for one probe at its ``asked_at`` on the replay clock.

    Attributes:
        probe: the probe asked.
        hits: what the recaller returned, best first.
        context: the rendered context block a chat model would get (within budget).
        context_tokens: its token count.
        recall_latency_s: wall time of the recall call.
        memory_text: the whole rendered memory of the conversation at that moment
            (for judge-free retention: is the answer still anywhere in memory?).
        memory_entries, memory_tokens: size of the memory at that moment.
        memory_answer_recall: share of the probe's normalized answer tokens found
            anywhere in that memory (``matching.answer_token_recall``), from
            replay's per-entry index; None when replay did not compute it.
        n_relevant: memory entries at that moment covering an evidence turn
            (nDCG's ideal list, ``measures.relevant_count``); None when not computed.
        ranking: the recaller's deeper ranking of the same query (best first, at
            least ``hits``' length when the memory has the entries), from which
            equal-budget scores take what fits in B tokens; empty: use ``hits``.
            A tuple, or from replay a ``recall.RankedHits`` (equal to the tuple of its
            hits, which it builds only as they are read).
        count: the token counter ``context`` was rendered with (the pipeline's
            tokenizer), for rendering at other budgets; None when not recorded.
    """

    probe: Probe
    hits: tuple[Hit, ...]
    context: str
    context_tokens: int
    recall_latency_s: float
    memory_text: str = ""
    memory_entries: int = 0
    memory_tokens: int = 0
    meta: Mapping[str, Any] = field(default_factory=dict, hash=False)
    memory_answer_recall: float | None = None
    n_relevant: int | None = None
    ranking: Sequence[Hit] = field(default=(), repr=False)
    count: Callable[[str], int] | None = field(default=None, compare=False, hash=False, repr=False)
