"""The checks a model-written probe passes before it is kept, each with the reason it names when it fails.

A draft is kept only when its evidence turns exist, its answer is supported by
their text (``answer_retained``: a whole-word phrase or >= 80% of its tokens),
the question does not give the answer away (not every answer token may occur in
the question), its question is no near-copy of the prompt's example and no
near-duplicate of one already kept (token Jaccard >= ``DUPLICATE_JACCARD``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from lyra_lab.matching import answer_retained, normalize_answer

if TYPE_CHECKING:
    from lyra_lab.backends import Backend

DUPLICATE_JACCARD = 0.7

NO_JSON = "reply held no JSON object (counted per reply, not per draft)"
NO_QA = "reply held no Q:/A: pair (counted per reply, not per draft)"
UNPARSEABLE = "not a JSON object with question, answer and turns"
BAD_IDS = "evidence turn numbers that name no turn"
EMPTY_ANSWER = "empty answer"
UNSUPPORTED = "answer not supported by its evidence turns"
GIVEN_AWAY = "answerable from the question alone"
DUPLICATE = "near-duplicate of a kept question"
COPIED = "copied the prompt's example"
REASONS: tuple[str, ...] = (NO_JSON, NO_QA, UNPARSEABLE, BAD_IDS, EMPTY_ANSWER, UNSUPPORTED, GIVEN_AWAY, DUPLICATE,
                            COPIED)
NO_DRAFT_REASONS = frozenset({NO_JSON, NO_QA})  # counted per reply, not among the drafted


@dataclass(frozen=True)
class Draft:
    """One parsed line of a model's answer: turn numbers as the model gave them."""

    question: str
    answer: str
    turns: tuple[int, ...]
    kind: str | None = None


_OBJECT = re.compile(r"\{.*?\}", re.DOTALL)


def parse_drafts(text: str) -> tuple[list[Draft], int]:
    """The drafts in a model reply and how many objects were unparseable.

    The reply holds one JSON object per line; fences and prose around them are tolerated.
    """
    drafts: list[Draft] = []
    bad = 0
    for match in _OBJECT.finditer(text):
        try:
            record = json.loads(match.group(0))
        except json.JSONDecodeError:
            bad += 1
            continue
        draft = _draft(record)
        if draft is None:
            bad += 1
        else:
            drafts.append(draft)
    return drafts, bad


_NUMBERING = re.compile(r"^\s*(?:[-*•]+|\(?\d+[.):]|#+)?\s*")
_LABEL = re.compile(r"^\**\s*(q|question|a|answer)\s*\**\s*[:.)\-]\s*\**\s*(.*)$", re.IGNORECASE)
_INLINE_ANSWER = re.compile(r"\s(?:A|Answer)\s*:\s*", re.IGNORECASE)


def parse_qa(text: str) -> tuple[str, str] | None:
    """The question and answer of a reply's first ``Q: ...`` and ``A: ...`` lines, in either order.

    (``Question:``/``Answer:``, numbering, bullets and bold tolerated, ``Q: ... A: ...`` on one line too),
    or None when the reply lacks either or one is empty.
    """
    found: dict[str, str] = {}
    for raw in text.splitlines():
        match = _LABEL.match(_NUMBERING.sub("", raw.strip(), count=1))
        if match is None:
            continue
        label, rest = match.group(1).lower()[0], _clean(match.group(2))
        if label == "q":
            parts = _INLINE_ANSWER.split(rest, maxsplit=1)
            rest = _clean(parts[0])
            if len(parts) == 2:
                found.setdefault("a", _clean(parts[1]))
        found.setdefault(label, rest)
        if len(found) == 2:
            break
    question, answer = found.get("q", ""), found.get("a", "").rstrip(".").strip()
    if not re.search(r"\w", question) or not re.search(r"\w", answer):  # "Q: ..." copies the placeholder
        return None
    return question, answer


def _clean(text: str) -> str:
    return text.strip().strip("*").strip().strip('"').strip()


def _draft(record: object) -> Draft | None:
    if not isinstance(record, dict):
        return None
    question, answer, turns = record.get("question"), record.get("answer"), record.get("turns")
    if not isinstance(question, str) or not isinstance(answer, (str, int, float)) or not question.strip():
        return None
    if isinstance(turns, (int, str)):
        turns = [turns]
    if not isinstance(turns, list):
        return None
    numbers = []
    for t in turns:
        try:
            numbers.append(int(str(t).strip().lstrip("[").rstrip("]")))
        except ValueError:
            numbers.append(-1)  # kept as a bad id, so it is counted as one
    kind = record.get("kind")
    return Draft(question.strip(), str(answer).strip(), tuple(numbers),
                 kind.strip().lower() if isinstance(kind, str) else None)


def tokens(text: str) -> set[str]:
    return set(normalize_answer(text).split())


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def check(draft: Draft, numbered: dict[int, Any], kept_questions: list[set[str]],
          examples: tuple[str, ...] = (), supports: Callable[[Draft, str], bool] | None = None) -> str | None:
    """The reason ``draft`` is dropped, or None to keep it.

    ``numbered`` maps turn numbers to turns;
    ``examples`` are the questions the prompt showed (a near-copy of one is dropped).  ``supports``
    (e.g. a judge call: ``judge_supports``) is asked only when the answer's words are not in the
    evidence text, so a paraphrased answer ("her sister" for "my sister Ana") can still be kept.
    """
    if not draft.turns or any(n not in numbered for n in draft.turns):
        return BAD_IDS
    answer = normalize_answer(draft.answer)
    if not answer:
        return EMPTY_ANSWER
    if any(jaccard(tokens(draft.question), tokens(example)) >= DUPLICATE_JACCARD for example in examples):
        return COPIED
    evidence = " ".join(numbered[n].text for n in draft.turns)
    if not answer_retained(draft.answer, evidence) and (supports is None or not supports(draft, evidence)):
        return UNSUPPORTED
    if set(answer.split()) <= tokens(draft.question):
        return GIVEN_AWAY
    question = tokens(draft.question)
    if any(jaccard(question, other) >= DUPLICATE_JACCARD for other in kept_questions):
        return DUPLICATE
    return None


SUPPORT_PROMPT = """Does the conversation excerpt below state the answer to the question?

Excerpt:
{evidence}

Question: {question}
Answer: {answer}

Reply with YES if the excerpt states this answer (in any wording), NO otherwise."""


def judge_supports(backend: Backend, max_tokens: int = 4) -> Callable[[Draft, str], bool]:
    """A ``supports`` check asking ``backend`` whether the evidence states the draft's answer (YES/NO).

    Anything but a reply starting with "yes" counts as unsupported, so a confused judge keeps nothing it
    was not sure of.  Each call is one more model call (cached like the drafting calls when the backend is).
    """

    def supports(draft: Draft, evidence: str) -> bool:
        prompt = SUPPORT_PROMPT.format(evidence=evidence[:4000], question=draft.question, answer=draft.answer)
        reply = backend.complete([{"role": "user", "content": prompt}], max_tokens=max_tokens, temperature=0)
        return reply.text.strip().lower().lstrip("*\"' ").startswith("yes")

    return supports
