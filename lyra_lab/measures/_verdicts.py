"""How a judge's reply is read: each judge prompt names one of these rules (``JudgePrompt.verdict``).

A rule turns the judge's reply into ``(score, parsed)``: score 1 or 0, and whether the reply
could be read at all (an unreadable reply scores 0 with ``parsed=False``: an unreadable
judgement is not a pass).

* ``mem0_label`` — mem0's LoCoMo judge (mem0ai/mem0 ``evaluation/metrics/llm_judge.py`` at
  commit 2352a44, ``evaluate_llm_judge``): the reply is cut out of a fenced code block if it
  holds one (mem0's ``extract_json``, ``mem0/memory/utils.py`` at commit 04732b8), parsed as JSON,
  and scores 1 exactly when its ``label`` is the string ``"CORRECT"``.  Where mem0 itself raises
  (the text is not JSON, the JSON is not an object, it has no ``label``), lyra-lab scores 0 with
  ``parsed=False``.
* ``longmemeval_yes`` — LongMemEval (xiaowu0162/LongMemEval ``src/evaluation/evaluate_qa.py``):
  1 exactly when ``'yes'`` is in the lower-cased reply (``eyes`` and ``no, not yes`` too, as
  upstream).  Every reply is read (``parsed=True``), as upstream reads every reply.
* ``lenient`` — lyra-lab's own, tolerant of how models reply (``parse_judgement``):

  1. a ``label``/``verdict``/``answer``/``score`` field, JSON-style or ``key: value``;
  2. the first word of the reply, if it is a verdict word;
  3. the last verdict word anywhere in the reply (models reason, then conclude).

  Verdict words: ``CORRECT``/``yes``/``1``/``true`` → 1; ``WRONG``/``INCORRECT``/``not correct``/
  ``no``/``0``/``false`` → 0, in any case.
"""

from __future__ import annotations

import json
import re
from typing import Callable

Verdict = Callable[[str], tuple[int, bool]]

_POSITIVE = {"correct", "yes", "1", "true", "right"}
_NEGATIVE = {"wrong", "incorrect", "no", "0", "false", "not_correct"}
_FIELD = re.compile(r"""["']?(?:label|verdict|answer|score|judgement|judgment)["']?\s*[:=]\s*["']?([A-Za-z01]+)""",
                    re.IGNORECASE)
_WORD = re.compile(r"\bnot\s+correct\b|[A-Za-z]+|\b[01]\b", re.IGNORECASE)
# mem0's extract_json: the inside of the first ``` fence (an optional "json" tag after it), else the text
_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)


def _word_verdict(word: str) -> int | None:
    word = re.sub(r"\s+", "_", word.lower())
    if word in _POSITIVE:
        return 1
    if word in _NEGATIVE:
        return 0
    return None


def parse_judgement(raw: str) -> tuple[int, bool]:
    """``(score, parsed)`` from a judge's reply under lyra-lab's tolerant rule (``lenient``, module docstring)."""
    for match in _FIELD.finditer(raw):
        verdict = _word_verdict(match.group(1))
        if verdict is not None:
            return verdict, True
    words = _WORD.findall(raw)
    if words and (first := _word_verdict(words[0])) is not None:
        return first, True
    # "yes"/"no"/"1"/"0" mid-sentence are too ambiguous; only the strong words count there.
    strong = [v for w in words if w.lower() in {"correct", "wrong", "incorrect"} or w.lower().startswith("not")
              for v in [_word_verdict(w)] if v is not None]
    if strong:
        return strong[-1], True
    return 0, False


def mem0_label(raw: str) -> tuple[int, bool]:
    """mem0's rule: the reply's JSON ``label`` is exactly ``"CORRECT"`` (module docstring).

    >>> mem0_label('{"reasoning": "The generated answer: no mention", "label": "CORRECT"}')
    (1, True)
    >>> mem0_label('CORRECT'), mem0_label('{"label": "correct"}')
    ((0, False), (0, True))
    """
    text = raw.strip()
    fenced = _FENCE.search(text)
    try:
        label = json.loads(fenced.group(1) if fenced else text)["label"]
    except (ValueError, KeyError, TypeError, RecursionError):
        return 0, False  # where mem0's evaluate_llm_judge raises
    return (1 if label == "CORRECT" else 0), True


def longmemeval_yes(raw: str) -> tuple[int, bool]:
    """LongMemEval's rule: ``'yes' in reply.lower()`` (module docstring).

    >>> longmemeval_yes("I would say yes"), longmemeval_yes("Correct")
    ((1, True), (0, True))
    """
    return (1 if "yes" in raw.strip().lower() else 0), True


#: verdict rule name → the rule; a judge prompt names one (``JudgePrompt.verdict``)
VERDICTS: dict[str, Verdict] = {
    "lenient": parse_judgement,
    "mem0_label": mem0_label,
    "longmemeval_yes": longmemeval_yes,
}
