"""A simulated judge: how the simulated server answers a judge prompt, with error rates you set.

Not a model — a simulation whose truth is known, so a test can check that the error rates
lyra-lab *measures* for a judge (from its controls) are the ones the judge *has*.  When the
last user message is a judge prompt — a line ``Gold answer:`` (or ``Correct answer:``,
``Rubric:``, ``Explanation:``) followed by a line ``Generated answer:`` (or ``Response:``) —
the server replies one word, ``CORRECT`` or ``WRONG``:

* the answer is *right* when every word of the gold is among its words and it adds no negation
  ("not", "never", "no") the gold lacks; otherwise *wrong*;
* a right answer is labelled CORRECT with probability ``accept_right`` (the true-positive rate),
  a wrong one with probability ``accept_wrong`` (the false-positive rate);
* the draw is a hash of the seed and the prompt's text: the same prompt always gets the same
  verdict (as a cached judge at temperature 0 would), different prompts independent draws.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

_PROMPT = re.compile(r"(?:Gold answer|Correct answer|Rubric|Explanation):[ \t]*(?P<gold>[^\n]*)\n+[ \t]*"
                     r"(?:Generated answer|Response):[ \t]*(?P<answer>.*?)(?:\n\n|\Z)", re.DOTALL)
_WORD = re.compile(r"\w+")
_NEGATIONS = frozenset({"not", "never", "no", "nothing", "none"})


@dataclass(frozen=True)
class SimulatedJudge:
    """How the simulated server grades judge prompts (see the module docstring).

    Attributes:
        accept_wrong: probability a wrong answer is labelled CORRECT (the false-positive rate).
        accept_right: probability a right answer is labelled CORRECT (the true-positive rate).
    """

    accept_wrong: float = 0.0
    accept_right: float = 1.0

    def __post_init__(self) -> None:
        for name in ("accept_wrong", "accept_right"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise ValueError(f"simulated judge: {name} must be a probability in [0, 1], got {value!r}")

    def reply(self, prompt: str, seed: int = 0) -> str | None:
        """``CORRECT`` or ``WRONG`` for a judge prompt; None for any other prompt."""
        found = list(_PROMPT.finditer(prompt))
        if not found:
            return None
        gold, answer = found[-1]["gold"], found[-1]["answer"]
        p = self.accept_right if is_right(gold, answer) else self.accept_wrong
        return "CORRECT" if _uniform(f"{seed}\x00{prompt}") < p else "WRONG"


def is_right(gold: str, answer: str) -> bool:
    """The simulation's truth: every gold word is in the answer, and the answer adds no negation.

    >>> is_right("7 May 2023", "It was on 7 May 2023."), is_right("7 May 2023", "It is not 7 May 2023.")
    (True, False)
    """
    gold_words, answer_words = set(_WORD.findall(gold.lower())), set(_WORD.findall(answer.lower()))
    return bool(gold_words) and gold_words <= answer_words and not (answer_words - gold_words) & _NEGATIONS


def _uniform(key: str) -> float:
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little") / 2.0 ** 64
