"""``evidence_in_context``: every evidence turn held verbatim by a hit shown whole in the answerer's context."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from lyra_lab.backends import token_counter
from lyra_lab.corpus import Probe
from lyra_lab.memory import MemoryEntry, fit_context
from lyra_lab.measures import evidence_in_context
from lyra_lab.recall import Hit


@dataclass
class Asked:
    """A probe's recall as the measure reads it (a fake ``Recalled``: probe, hits, context)."""

    probe: Probe
    hits: Sequence[Hit]
    context: str


def hit(i: int, kind: str, turns: tuple[str, ...], text: str) -> Hit:
    return Hit(MemoryEntry(id=f"e{i}", conversation_id="c", kind=kind, text=text, turn_ids=turns), 1.0, i)


def asked(evidence: tuple[str, ...], budget: int, **probe: object) -> Asked:
    hits = [hit(0, "turn", ("D1:1",), "I paint sunflowers"), hit(1, "digest", ("D1:2", "D1:3"), "she likes lakes"),
            hit(2, "turn", ("D1:4",), "we went kayaking on the lake last summer with the kids")]
    context = fit_context([h.entry for h in hits], budget, token_counter()).text
    return Asked(Probe("p", "c", "q?", "sunflowers", evidence, **probe), hits, context)  # type: ignore[arg-type]


def test_evidence_in_context_by_hand():
    assert evidence_in_context(asked(("D1:1",), 1000)) == {"evidence_in_context": 1.0}
    assert evidence_in_context(asked(("D1:1", "D1:4"), 1000)) == {"evidence_in_context": 1.0}
    assert evidence_in_context(asked(("D1:2",), 1000)) == {"evidence_in_context": 0.0}  # a digest is not the turn
    assert evidence_in_context(asked(("D1:1", "D1:9"), 1000)) == {"evidence_in_context": 0.0}  # every turn, or not
    cut = asked(("D1:4",), 24)
    assert cut.context.endswith(" …")  # the last hit only partly fits the budget: its evidence is not in context
    assert evidence_in_context(cut) == {"evidence_in_context": 0.0}


def test_undefined_without_evidence_or_for_an_abstention():
    assert evidence_in_context(asked((), 1000)) == {}
    assert evidence_in_context(asked(("D1:1",), 1000, adversarial=True)) == {}
