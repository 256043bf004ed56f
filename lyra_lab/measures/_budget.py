"""Equal-budget scores: what each recaller puts into a context of B tokens, whatever its memory holds.

Scoring at the same k favours long entries: a digest is 5–20× a raw turn, so
ten digests carry far more text than ten turns.  At a budget of ``B`` rendered
tokens every pipeline gets the same room.  For a probe and a budget ``B``
(``[run] score_at_tokens``), from the recaller's ranking (``ProbeOutcome.ranking``,
a deeper list than the k hits) and the pipeline's token counter:

* **fits(B)**: the longest prefix of the ranking whose rendered block — one
  ``[date] text`` line per entry, joined by newlines, exactly as
  ``lyra_lab.recall.render`` builds it — counts at most ``B`` tokens.  Entries
  are taken whole, in rank order; the first that does not fit ends the prefix.
  So a first entry longer than ``B`` leaves fits(B) empty.
* ``evidence_recall@Btok`` / ``coverage_recall@Btok``: ``evidence_recall_at`` /
  ``coverage_recall_at`` (see ``_retrieval``) over fits(B).  An entry cut to fit
  counts for nothing: which of its turns survived the cut is unknown.
* ``answer_in_context@Btok``: 1.0 if the gold answer is in ``render(ranking, B)``
  by the retention rule (``answer_retained``: after SQuAD normalization, the
  answer occurs as a whole-word phrase or ≥ 80% of its distinct tokens occur,
  which accepts "May 7, 2023" for "7 May 2023") — fits(B) plus, as render
  does, the head of the next entry cut to the budget and marked ``…``: exactly
  the text a chat model given B tokens would read.  So it is
  ``context_retention`` at budget B, and never above ``retention`` (the whole
  memory).  Judge-free and fair across memory kinds: a digest scores only if
  its text kept the answer.
* ``context_tokens@Btok``: the tokens of that block (≤ B; below B when the
  ranking ran out or the next entry's date label did not fit).

Retrieval scores at B follow the @K rules (only probes with evidence that do
not expect abstention); ``answer_in_context@Btok`` needs a non-empty answer and
no expected abstention, but no evidence.

Metric names carry the budget as ``@<B>tok`` (``answer_in_context@512tok``, a
``Measure`` with unit ``tok``) so they never collide with the @K names and every
``groupby("metric")`` keeps budgets apart; ``lyra_lab.reports.budget_frame`` splits
them into a ``metric_base`` and a numeric ``budget_tokens`` column.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any, Callable, Iterable, Sequence

from lyra_lab.matching import DEFAULT_RETENTION_THRESHOLD, RetainedAnswer, expects_abstention, normalize_answer
from lyra_lab.measures._measure import Measure
from lyra_lab.measures._retrieval import RankedEvidence, entry_flags, entry_groups
from lyra_lab.memory import hit_line

def budget_metric(base: str, budget: int) -> str:
    """``answer_in_context`` and 512 → ``answer_in_context@512tok``."""
    return str(Measure.at_tokens(base, budget))


def check_budgets(budgets: Iterable[int]) -> tuple[int, ...]:
    """``budgets`` as a sorted tuple of distinct positive ints; raises ``ValueError`` otherwise."""
    budgets = tuple(budgets)
    if any(isinstance(b, bool) or not isinstance(b, int) or b < 1 for b in budgets):
        raise ValueError(f"context budgets must be positive integers (tokens), got {list(budgets)!r}")
    return tuple(sorted(set(budgets)))


def fit_count(hits: Sequence[Any], budget: int, count: Callable[[str], int]) -> int:
    """How many of ``hits``, whole and in order, fit in ``budget`` tokens as ``render`` joins them."""
    from lyra_lab.memory import fit_context

    return fit_context([hit.entry for hit in hits], budget, count).whole if budget > 0 else 0


def budget_scores(outcome: Any, budgets: Iterable[int], count: Callable[[str], int] | None = None, *,
                  retrieval: bool | None = None,
                  threshold: float = DEFAULT_RETENTION_THRESHOLD) -> dict[str, float]:
    """The ``@Btok`` metrics of one ``ProbeOutcome`` for every budget (see the module docstring).

    Args:
        outcome: a ``lyra_lab.replay.ProbeOutcome``; its ``ranking`` (else ``hits``) is ranked.
        budgets: token budgets B.
        count: the token counter; default ``outcome.count`` (the pipeline's tokenizer).
        retrieval: also score evidence/coverage recall; None: by the @K rule (evidence, no
            expected abstention).  Never without evidence.
        threshold: token-recall threshold of the retention rule.
    """
    from lyra_lab.memory import fit_contexts

    budgets = check_budgets(budgets)
    if not budgets:
        return {}
    count = count or getattr(outcome, "count", None)
    if count is None:
        raise ValueError("equal-budget scores need a token counter: pass count= or an outcome from replay")
    probe = outcome.probe
    ranking = getattr(outcome, "ranking", ()) or outcome.hits
    # The entries, not the hits: a replay ranking (``RankedHits``) then builds none of its hits.
    entries = list(getattr(ranking, "entries", None) or [hit.entry for hit in ranking])
    retained = RetainedAnswer(probe.answer, threshold) \
        if not expects_abstention(probe) and normalize_answer(probe.answer) else None
    if retrieval is None:
        retrieval = not expects_abstention(probe)
    retrieval = retrieval and bool(probe.evidence)
    scores: dict[str, float] = {}
    contexts = fit_contexts(entries, budgets, count)  # render(ranking, B, count) at each B
    if retrieval:  # over each budget's whole entries: a prefix of the ranking
        whole = entries[:max(fit.whole for fit in contexts)]
        ranked = RankedEvidence(probe.evidence, entry_groups(whole), entry_flags(whole))
    in_context = _in_contexts(retained, entries, contexts) if retained is not None else []
    for i, (budget, fit) in enumerate(zip(budgets, contexts)):
        scores[budget_metric("context_tokens", budget)] = float(fit.tokens)
        if in_context:
            scores[budget_metric("answer_in_context", budget)] = float(in_context[i])
        if retrieval:
            scores[budget_metric("evidence_recall", budget)] = ranked.recall(fit.whole)
            scores[budget_metric("coverage_recall", budget)] = ranked.coverage(fit.whole)
    return scores


def _in_contexts(retained: RetainedAnswer, entries: Sequence[Any], contexts: Sequence[Any]) -> list[bool]:
    """``retained(fit.text)`` for each of ``contexts`` (fits of ``entries``, budgets increasing), each entry's
    line read once: every block is the first ``fit.whole`` entries' lines joined by newlines, then at most
    one more line, the next entry's cut (an entry's line may hold newlines of its own)."""
    lines = [_line(entry) for entry in entries[:contexts[-1].whole]]
    firsts = retained.firsts(lines)
    ends = list(accumulate((len(line) + 1 for line in lines), initial=0))  # where each line's successor starts
    out = []
    for fit in contexts:
        cut = fit.text[ends[fit.whole]:] if len(fit.text) > max(ends[fit.whole] - 1, 0) else None
        out.append(retained.in_block(firsts, fit.whole, cut, _line(entries[fit.whole]) if cut is not None else ""))
    return out


def context_retained(retained: RetainedAnswer, outcome: Any) -> bool:
    """``retained(outcome.context)``, the context read as its hits' lines (each read once per entry, see
    ``_in_contexts``) followed by whatever else it holds (the cut line ``render`` closes it with)."""
    text, entries = outcome.context, [hit.entry for hit in outcome.hits]
    lines: list[str] = []
    start = 0  # where the next line starts
    for entry in entries:
        line = _line(entry)
        end = start + len(line)
        if not text.startswith(line, start) or (end < len(text) and text[end] != "\n"):
            break
        lines.append(line)
        start = end + 1
    cut = text[start:] if start < len(text) else None
    full = _line(entries[len(lines)]) if cut is not None and len(lines) < len(entries) else ""
    return retained.in_block(retained.firsts(lines), len(lines), cut, full)


# entry id -> (entry, hit_line(entry)): rankings repeat the memory's entries probe after probe, and a line
# kept is one string, whose hash the per-line token memo then reads for free.
_LINES: dict[str, tuple[Any, str]] = {}


def _line(entry: Any) -> str:
    """``hit_line(entry)``, remembered for the entry (checked by identity; the memo is bounded)."""
    got = _LINES.get(entry.id)
    if got is None or got[0] is not entry:
        if len(_LINES) >= 1 << 17:
            _LINES.clear()
        got = _LINES[entry.id] = (entry, hit_line(entry))
    return got[1]
