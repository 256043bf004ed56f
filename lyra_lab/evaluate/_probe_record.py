"""The ``probe_detail`` run-log event: per probe × recaller, what the inspector (``_inspect``) shows.

Written by the cell runner for every probe and recaller: the ranked hits (id, kind, score; for
entries other than raw turns also the covered turn ids and a text snippet — a raw turn's text is
in the corpus and the context), the rendered context, the answer and each judge's verdict.
"""

from __future__ import annotations

from typing import Any, Iterable

DETAIL_EVENT = "probe_detail"
TEXT_CHARS = 300  # per-hit text snippet stored in the log
MAX_TURN_IDS = 50  # covered turn ids stored per hit (a month digest may cover hundreds)


def probe_record(outcome: Any, recaller: str, answer: Any = None,
                 verdicts: Iterable[tuple[str, Any]] = ()) -> dict[str, Any]:
    """The ``probe_detail`` log event of one probe × recaller (what ``inspect_probe`` reads back).

    Args:
        outcome: the ``ProbeOutcome`` (hits, rendered context).
        recaller: the recaller's label in the grid.
        answer: the QA answer (a ``Completion`` or text), if QA ran.
        verdicts: ``(judge label, JudgeResult)`` for each judge that graded the answer.
    """
    probe = outcome.probe
    hits = []
    for h in outcome.hits:
        e = h.entry
        hit = {"id": e.id, "kind": e.kind, "score": round(float(h.score), 6)}
        if e.kind != "turn":  # a raw turn is its id's turn, its text in the corpus and the context
            hit.update(turn_ids=list(e.turn_ids[:MAX_TURN_IDS]), n_turns=len(e.turn_ids), text=snip(e.text))
        hits.append(hit)
    return {
        "probe_id": probe.id, "recaller": recaller, "question": probe.question, "gold": str(probe.answer),
        "evidence": list(probe.evidence), "hits": hits, "context": outcome.context,
        "context_tokens": int(outcome.context_tokens),
        "answer": None if answer is None else str(getattr(answer, "text", answer)),
        "judges": [{"judge": label, "score": int(v.score), "parsed": bool(v.parsed), "raw": str(v.raw)[:200]}
                   for label, v in verdicts],
    }


def snip(text: str, n: int = TEXT_CHARS) -> str:
    """``text`` cut to ``n`` characters (an ellipsis marks the cut)."""
    return text if len(text) <= n else text[: n - 1] + "…"
