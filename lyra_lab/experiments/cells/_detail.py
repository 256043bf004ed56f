"""The ``probe_detail`` run-log event a cell writes for every probe × recaller (read back by ``lyra_lab.runs``)."""

from __future__ import annotations

from typing import Sequence

from lyra_lab.experiments.cells._answer import Answered
from lyra_lab.memory import EntryKind
from lyra_lab.measures import Recalled
from lyra_lab.runs import MAX_TURN_IDS, snip


def probe_record(outcome: Recalled, recaller: str, answers: Answered | Sequence[Answered] | None = None
                 ) -> dict[str, object]:
    """The ``probe_detail`` event of one probe × recaller (what ``inspect_probe`` and report.html read back).

    Args:
        outcome: the probe's recall (hits, rendered context): a replay's, or a memory system's.
        recaller: the recaller's label in the grid.
        answers: the answer and the judges' verdicts, if the probe was answered; several
            (``[qa] prompts``/``repeats``): the first is ``answer``, all are in ``answers``.
    """
    many = (answers,) if isinstance(answers, Answered) else tuple(answers or ())
    answered = many[0] if many else None
    probe = outcome.probe
    hits: list[dict[str, object]] = []
    for h in outcome.hits:
        e = h.entry
        hit: dict[str, object] = {"id": e.id, "kind": e.kind, "score": round(float(h.score), 6)}
        if e.kind != EntryKind.TURN or e.id != f"turn:{e.turn_ids[0] if e.turn_ids else ''}":
            # a raw turn is its id's turn, its text in the corpus and the context (a system's turn is not)
            hit.update(turn_ids=list(e.turn_ids[:MAX_TURN_IDS]), n_turns=len(e.turn_ids), text=snip(e.text))
        hits.append(hit)
    verdicts = answered.verdicts if answered is not None else ()
    return {
        "probe_id": probe.id, "recaller": recaller, "question": probe.question, "gold": str(probe.answer),
        "evidence": list(probe.evidence), "hits": hits, "context": outcome.context,
        "context_tokens": int(outcome.context_tokens),
        "answer": None if answered is None or answered.answer is None else answered.answer.text,
        "judges": [{"judge": label, "score": int(v.score), "parsed": bool(v.parsed), "raw": str(v.raw)[:200]}
                   for label, v in verdicts],
        **({"answers": [{"answer_prompt": a.prompt, "repeat": a.repeat,
                         "text": None if a.answer is None else a.answer.text} for a in many]} if len(many) > 1 else {}),
    }
