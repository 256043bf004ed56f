"""Judge-free summary retention: is a probe's answer still somewhere in memory?

Summarizing and rolling up lose facts.  Retention measures that loss without
an LLM: for each probe, whether its gold answer survives in

* ``retention``: the whole memory of the conversation at the probe's moment
  (``ProbeOutcome.memory_text``) — what any recaller could still find, and
* ``context_retention``: the rendered context the recaller served for it
  (``ProbeOutcome.context``) — what the answering model actually saw.

Rule (after SQuAD normalization of both texts, see ``normalize_answer``): the
answer is retained when its normalized form occurs in the text as a whole-word
phrase, OR when the share of its distinct tokens present in the text (token
recall) is at least ``threshold`` (default 0.8).  The second clause accepts
reorderings such as "7 May 2023" vs "May 7, 2023" and paraphrased lists; it
can also accept scattered common words, so it is a ceiling on true retention,
most accurate for the short factual answers benchmarks use.

Per probe the value is 1.0 or 0.0, so its mean over probes is the share
retained.  Probes expecting abstention (adversarial) and probes with an empty
gold answer have no retention.
"""

from __future__ import annotations

from typing import Any

from lyra_lab.evaluate._qa import expects_abstention, normalize_answer

DEFAULT_RETENTION_THRESHOLD = 0.8


def answer_retained(answer: Any, text: str, threshold: float = DEFAULT_RETENTION_THRESHOLD) -> bool:
    """Whether ``answer`` survives in ``text`` by the rule in the module docstring."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    gold = normalize_answer(answer)
    if not gold:
        raise ValueError("answer is empty after normalization; retention is undefined")
    haystack = normalize_answer(text)
    if f" {gold} " in f" {haystack} ":
        return True
    gold_tokens = set(gold.split())
    present = gold_tokens & set(haystack.split())
    return len(present) / len(gold_tokens) >= threshold


def retention_scores(outcome: Any, threshold: float = DEFAULT_RETENTION_THRESHOLD) -> dict[str, float]:
    """``{"retention", "context_retention"}`` of one ``ProbeOutcome`` (empty when undefined).

    ``retention`` is omitted when the outcome recorded no memory at all
    (``memory_text == ""`` and ``memory_entries == 0``): replay did not report it.
    """
    probe = outcome.probe
    if expects_abstention(probe) or not normalize_answer(probe.answer):
        return {}
    scores = {"context_retention": float(answer_retained(probe.answer, outcome.context, threshold))}
    if outcome.memory_text or outcome.memory_entries:
        scores["retention"] = float(answer_retained(probe.answer, outcome.memory_text, threshold))
    return scores
