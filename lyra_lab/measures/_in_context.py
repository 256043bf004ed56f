r"""``evidence_in_context``: was the gold evidence in the context the answerer was given?

What splits a QA score into retrieval and answering (``reports._split``): a probe is answered
either with its evidence in front of the answerer or without it.  The rule:

* the context is the block rendered from the hits in rank order within the pipeline's context
  budget (``ProbeOutcome.context``); a hit is *in* it when its whole line is (the one line cut
  to fit the budget, if any, is not);
* ``evidence_in_context`` is 1.0 when every evidence turn of the probe is held verbatim
  (``VERBATIM_KINDS``: a turn or a chunk) by a hit in the context, else 0.0 — all of it, as
  LongMemEval's ``recall_all``: a multi-hop question missing one hop lacks its evidence.  A digest
  covering a turn does not count: whether its text kept the fact is what the split asks.
* it is written for answered probes with evidence that do not expect abstention (the rows the
  split conditions QA on), and not for a memory system whose hits name no turns.

>>> from lyra_lab.memory import MemoryEntry
>>> from lyra_lab.recall import Hit
>>> hits = [Hit(MemoryEntry(id=i, conversation_id="c", kind="turn", text=t, turn_ids=(i,)), 1.0, n)
...         for n, (i, t) in enumerate([("D1:1", "I paint"), ("D1:2", "sunflowers, mostly")])]
>>> shown_hits(hits, "[undated] I paint\n[undated] sunflowers, …")
1
>>> evidence_held(("D1:1",), hits[:1]), evidence_held(("D1:1", "D1:2"), hits[:1])
(True, False)
"""

from __future__ import annotations

from typing import Iterable, Sequence

from lyra_lab.matching import expects_abstention
from lyra_lab.memory import VERBATIM_KINDS, hit_line
from lyra_lab.measures._inputs import Recalled
from lyra_lab.recall import Hit

EVIDENCE_IN_CONTEXT = "evidence_in_context"


def shown_hits(hits: Sequence[Hit], context: str) -> int:
    """How many of ``hits``, from the first, the rendered ``context`` holds whole (its lines in rank order)."""
    shown, pos = 0, 0
    for hit in hits:
        piece = ("\n" if shown else "") + hit_line(hit.entry)
        end = pos + len(piece)
        if not (context.startswith(piece, pos) and (end == len(context) or context[end] == "\n")):
            break
        shown, pos = shown + 1, end
    return shown


def evidence_held(evidence: Iterable[str], hits: Iterable[Hit]) -> bool:
    """Whether every evidence turn is held verbatim by one of ``hits`` (False for no evidence)."""
    wanted = set(evidence)
    held = {t for hit in hits if hit.entry.kind in VERBATIM_KINDS for t in hit.entry.turn_ids}
    return bool(wanted) and wanted <= held


def evidence_in_context(outcome: Recalled) -> dict[str, float]:
    """``{"evidence_in_context": 1.0 or 0.0}`` for a probe with evidence; empty when undefined (see the module)."""
    probe = outcome.probe
    if not probe.evidence or expects_abstention(probe):
        return {}
    hits = list(outcome.hits)
    return {EVIDENCE_IN_CONTEXT: float(evidence_held(probe.evidence, hits[:shown_hits(hits, outcome.context)]))}
