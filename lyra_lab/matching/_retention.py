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

The phrase clause implies the token clause (a whole-word phrase match puts
every answer token in the text, so token recall is 1.0), so the rule is
exactly: token recall >= ``threshold``.  That lets replay score retention from
the memory's set of normalized tokens, kept up to date entry by entry
(``answer_token_recall``, ``ProbeOutcome.memory_answer_recall``), instead of
normalizing the whole memory again for every probe; ``answer_retained`` keeps
the rule as written, and a property test holds the two equal.

Per probe the value is 1.0 or 0.0, so its mean over probes is the share
retained.  Probes expecting abstention (adversarial) and probes with an empty
gold answer have no retention.
"""

from __future__ import annotations

import functools
from typing import Container, Sequence

from lyra_lab.matching._squad import normalize_answer

DEFAULT_RETENTION_THRESHOLD = 0.8


def answer_retained(answer: object, text: str, threshold: float = DEFAULT_RETENTION_THRESHOLD) -> bool:
    """Whether ``answer`` survives in ``text`` by the rule in the module docstring, as written."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    gold = normalize_answer(answer)
    if not gold:
        raise ValueError("answer is empty after normalization; retention is undefined")
    padded = f" {normalized_text(text)} "  # tokens separated by single spaces
    if f" {gold} " in padded:
        return True
    tokens = set(gold.split())
    present = sum(1 for token in tokens if f" {token} " in padded)  # a token of the text, no split of it
    return present / len(tokens) >= threshold


class RetainedAnswer:
    """``answer_retained(answer, text, threshold)`` for one answer over many texts, the answer normalized once.

    It asks the rule in its exact form, token recall >= ``threshold`` (the phrase
    clause implies it), of the text's lines: normalization never crosses a newline,
    so the text's normalized tokens are the union of its lines', and each line's
    are worked out once however many texts (contexts at several budgets, probes)
    share it (a bounded memo).
    """

    def __init__(self, answer: object, threshold: float = DEFAULT_RETENTION_THRESHOLD):
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
        gold = normalize_answer(answer)
        if not gold:
            raise ValueError("answer is empty after normalization; retention is undefined")
        self.threshold = threshold
        self.tokens = tuple(set(gold.split()))

    def __call__(self, text: str) -> bool:
        lines = list(map(_line_tokens, str(text).split("\n")))
        present = sum(1 for token in self.tokens if any(token in line for line in lines))
        return present / len(self.tokens) >= self.threshold

    def firsts(self, lines: Sequence[str]) -> list[int]:
        """Per answer token (``self.tokens``), the index of the first of ``lines`` holding it, else ``len(lines)``."""
        tokens = list(map(_line_tokens, lines))
        return [next((i for i, held in enumerate(tokens) if token in held), len(lines)) for token in self.tokens]

    def in_block(self, firsts: Sequence[int], whole: int, cut: str | None = None, cut_from: str = "") -> bool:
        """``self(block)`` for a ``render_context`` block, computed from its parts.

        The block is the first ``whole`` of some lines (``firsts`` of them), closed by ``cut``, a line
        cut from the line ``cut_from``.

        A token missing from ``cut_from`` can only be in the cut's tail after its last word whole in
        ``cut_from`` (normalization never crosses whitespace), so only that short tail is normalized.
        """
        missing = [token for token, first in zip(self.tokens, firsts) if first >= whole]
        present = len(self.tokens) - len(missing)
        if missing and cut is not None:
            present += _found_in_cut(missing, cut, cut_from)
        return present / len(self.tokens) >= self.threshold


def _found_in_cut(tokens: list[str], cut: str, full: str) -> int:
    """How many of ``tokens`` are normalized tokens of ``cut``, a line cut from ``full`` (whatever it ends with)."""
    if any(token in _line_tokens(full) for token in tokens):
        held = _line_tokens(cut)
    else:
        shared = _shared_prefix(cut, full)
        # The last whitespace of ``cut`` ending a run of whole words of ``full``: before it, no token is new.
        if shared < len(cut) and cut[shared].isspace() and (shared == len(full) or full[shared].isspace()):
            j = shared
        else:
            j = next((p for p in range(shared - 1, -1, -1) if cut[p].isspace()), 0)
        held = frozenset(normalize_answer(cut[j:]).split())
    return sum(1 for token in tokens if token in held)


def _shared_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b`` (a binary search of C-speed comparisons)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def normalized_text(text: str) -> str:
    """``normalize_answer(text)``, normalizing each line once however many texts share it.

    Normalization never crosses a newline (lowercasing's final-sigma context
    stops at it, punctuation and articles are removed per character and word,
    and whitespace collapses), so the normalized text is the normalized lines
    joined by single spaces, empty ones left out.  Contexts rendered for
    many probes and budgets repeat the same memory lines; each is normalized
    once (a bounded memo).
    """
    text = str(text)
    if "\n" not in text:
        return _normalized_line(text)
    return " ".join(filter(None, map(_normalized_line, text.split("\n"))))


@functools.lru_cache(maxsize=1 << 16)
def _normalized_line(line: str) -> str:
    return normalize_answer(line)


@functools.lru_cache(maxsize=1 << 16)
def _line_tokens(line: str) -> frozenset[str]:
    return frozenset(_normalized_line(line).split())


def normalized_tokens(text: object) -> frozenset[str]:
    """The distinct tokens of ``normalize_answer(text)``.

    Normalization never crosses whitespace, so the tokens of texts joined by
    whitespace are the union of each text's tokens: a memory's vocabulary is
    the union over its entries.  A text is normalized once (the memo
    ``RetainedAnswer`` reads lines from): replay's memory tally normalizes each
    entry's line, and equal-budget scores then find the contexts' lines there.
    """
    return _line_tokens(text) if isinstance(text, str) else frozenset(normalize_answer(text).split())


def answer_token_recall(answer: object, tokens: Container[str]) -> float | None:
    """Share of the answer's distinct normalized tokens in ``tokens`` (None for an empty answer)."""
    gold = set(normalize_answer(answer).split())
    if not gold:
        return None
    return sum(1 for t in gold if t in tokens) / len(gold)
