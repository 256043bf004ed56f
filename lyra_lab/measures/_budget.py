"""Equal-budget scores: what each recaller puts into a context of B tokens, whatever its memory holds.

Scoring at the same k favours long entries: a digest is 5–20× a raw turn, so
ten digests carry far more text than ten turns.  At a budget of ``B`` rendered
tokens every pipeline gets the same room.  For a probe and a budget ``B``
(``[run] score_at_tokens``), from the recaller's ranking (``Recalled.ranking``,
read as deep as the budgets need) and the pipeline's token counter:

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
from typing import Iterable, Sequence

from lyra_lab.matching import DEFAULT_RETENTION_THRESHOLD, RetainedAnswer, expects_abstention, normalize_answer
from lyra_lab.measures._inputs import Recalled
from lyra_lab.measures._measure import Measure
from lyra_lab.measures._retrieval import RankedEvidence, entry_flags, entry_groups
from lyra_lab.memory import ContextFit, MemoryEntry, fit_contexts, hit_line

#: Entries read of the ranking before the first fill (replay's first deeper fetch); read deeper (doubling)
#: while the fill takes them all.
FIRST_DEPTH = 40


def budget_metric(base: str, budget: int) -> str:
    """``answer_in_context`` and 512 → ``answer_in_context@512tok``."""
    return str(Measure.at_tokens(base, budget))


def check_budgets(budgets: Iterable[int]) -> tuple[int, ...]:
    """``budgets`` as a sorted tuple of distinct positive ints; raises ``ValueError`` otherwise."""
    budgets = tuple(budgets)
    if any(isinstance(b, bool) or not isinstance(b, int) or b < 1 for b in budgets):
        raise ValueError(f"context budgets must be positive integers (tokens), got {list(budgets)!r}")
    return tuple(sorted(set(budgets)))


def budget_fits(outcome: Recalled, budgets: Sequence[int]) -> tuple[list[MemoryEntry], list[ContextFit]]:
    """The ranking's entries read and ``render(ranking, B)`` at each budget (increasing, positive).

    The ranking is read ``FIRST_DEPTH`` deep, and twice as deep again while the largest budget
    takes every entry read and the recaller ranks more: a budget's block never depends on
    where the ranking was cut.
    """
    depth = FIRST_DEPTH
    while True:
        entries = list(outcome.ranking.entries(depth))
        fits = fit_contexts(entries, budgets, outcome.count)
        if len(entries) < depth or fits[-1].whole < len(entries):
            return entries, fits
        depth *= 2


def budget_scores(outcome: Recalled, budgets: Iterable[int], *, retrieval: bool | None = None,
                  threshold: float = DEFAULT_RETENTION_THRESHOLD) -> dict[str, float]:
    """The ``@Btok`` metrics of one probe's recall for every budget (see the module docstring).

    Args:
        outcome: the probe's recall; its ``ranking`` is read as deep as the budgets need.
        budgets: token budgets B.
        retrieval: also score evidence/coverage recall; None: by the @K rule (evidence, no
            expected abstention).  Never without evidence.
        threshold: token-recall threshold of the retention rule.
    """
    budgets = check_budgets(budgets)
    if not budgets:
        return {}
    probe = outcome.probe
    entries, contexts = budget_fits(outcome, budgets)
    retained = RetainedAnswer(probe.answer, threshold) \
        if not expects_abstention(probe) and normalize_answer(probe.answer) else None
    if retrieval is None:
        retrieval = not expects_abstention(probe)
    retrieval = retrieval and bool(probe.evidence)
    scores: dict[str, float] = {}
    ranked = None
    if retrieval:  # over each budget's whole entries: a prefix of the ranking
        whole = entries[:max(fit.whole for fit in contexts)]
        ranked = RankedEvidence(probe.evidence, entry_groups(whole), entry_flags(whole))
    in_context = _in_contexts(retained, entries, contexts) if retained is not None else []
    for i, (budget, fit) in enumerate(zip(budgets, contexts)):
        scores[budget_metric("context_tokens", budget)] = float(fit.tokens)
        if in_context:
            scores[budget_metric("answer_in_context", budget)] = float(in_context[i])
        if ranked is not None:
            scores[budget_metric("evidence_recall", budget)] = ranked.recall(fit.whole)
            scores[budget_metric("coverage_recall", budget)] = ranked.coverage(fit.whole)
    return scores


def _in_contexts(retained: RetainedAnswer, entries: Sequence[MemoryEntry],
                 contexts: Sequence[ContextFit]) -> list[bool]:
    """``retained(fit.text)`` for each of ``contexts`` (fits of ``entries``, budgets increasing), each entry's
    line read once: every block is the first ``fit.whole`` entries' lines joined by newlines, then at most
    one more line, the next entry's cut (an entry's line may hold newlines of its own)."""
    lines = [hit_line(entry) for entry in entries[:contexts[-1].whole]]
    firsts = retained.firsts(lines)
    ends = list(accumulate((len(line) + 1 for line in lines), initial=0))  # where each line's successor starts
    out = []
    for fit in contexts:
        cut = fit.text[ends[fit.whole]:] if len(fit.text) > max(ends[fit.whole] - 1, 0) else None
        full = hit_line(entries[fit.whole]) if cut is not None else ""
        out.append(retained.in_block(firsts, fit.whole, cut, full))
    return out
