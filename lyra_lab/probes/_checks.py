"""The checks a model-written probe passes before it is kept, each with the reason it names when it fails.

A draft is kept only when its evidence turns exist, its answer is supported by
their text (``answer_retained``: a whole-word phrase or >= 80% of its tokens),
the question does not give the answer away (not every answer token may occur in
the question), and its question is no near-duplicate of one already kept
(token Jaccard >= ``DUPLICATE_JACCARD``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from lyra_lab.evaluate._qa import normalize_answer
from lyra_lab.evaluate._retention import answer_retained

DUPLICATE_JACCARD = 0.7

NO_JSON = "reply held no JSON object (counted per reply, not per draft)"
UNPARSEABLE = "not a JSON object with question, answer and turns"
BAD_IDS = "evidence turn numbers that name no turn"
EMPTY_ANSWER = "empty answer"
UNSUPPORTED = "answer not supported by its evidence turns"
GIVEN_AWAY = "answerable from the question alone"
DUPLICATE = "near-duplicate of a kept question"
REASONS: tuple[str, ...] = (NO_JSON, UNPARSEABLE, BAD_IDS, EMPTY_ANSWER, UNSUPPORTED, GIVEN_AWAY, DUPLICATE)


@dataclass(frozen=True)
class Draft:
    """One parsed line of a model's answer: turn numbers as the model gave them."""

    question: str
    answer: str
    turns: tuple[int, ...]
    kind: str | None = None


_OBJECT = re.compile(r"\{.*?\}", re.DOTALL)


def parse_drafts(text: str) -> tuple[list[Draft], int]:
    """The drafts in a model reply (one JSON object per line, tolerating fences and prose) and how many objects
    were unparseable."""
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


def _draft(record: Any) -> Draft | None:
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


def check(draft: Draft, numbered: dict[int, Any], kept_questions: list[set[str]]) -> str | None:
    """The reason ``draft`` is dropped, or None to keep it. ``numbered`` maps turn numbers to turns."""
    if not draft.turns or any(n not in numbered for n in draft.turns):
        return BAD_IDS
    answer = normalize_answer(draft.answer)
    if not answer:
        return EMPTY_ANSWER
    evidence = " ".join(numbered[n].text for n in draft.turns)
    if not answer_retained(draft.answer, evidence):
        return UNSUPPORTED
    if set(answer.split()) <= tokens(draft.question):
        return GIVEN_AWAY
    question = tokens(draft.question)
    if any(jaccard(question, other) >= DUPLICATE_JACCARD for other in kept_questions):
        return DUPLICATE
    return None
