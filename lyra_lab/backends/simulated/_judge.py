"""A simulated judge: how the simulated server answers a judge prompt, with error rates you set.

Not a model — a simulation whose truth is known, so a test can check that the error rates
lyra-lab *measures* for a judge (from its controls) are the ones the judge *has*.  When the
last user message is a judge prompt — a line ``Gold answer:`` (or ``Correct [Aa]nswer:``,
``Rubric:``, ``Explanation:``) followed by a line ``Generated answer:`` (or ``[Model ]Response:``) —
the server replies one word, ``CORRECT`` or ``WRONG``:

* the answer is *right* when every word of the gold is among its words and it adds no negation
  ("not", "never", "no") the gold lacks; otherwise *wrong*;
* a right answer is labelled CORRECT with probability ``accept_right`` (the true-positive rate),
  a wrong one with probability ``accept_wrong`` (the false-positive rate) — or, when the prompt
  holds a string of ``accept_wrong_when``, that string's probability (so two judge prompts can
  be given different leniency, as real judges are);
* the draw is a hash of the seed and the prompt's text: the same prompt always gets the same
  verdict (as a cached judge at temperature 0 would), different prompts independent draws.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

_PROMPT = re.compile(r"(?:Gold answer|Correct [Aa]nswer|Rubric|Explanation):[ \t]*(?P<gold>[^\n]*)\n+[ \t]*"
                     r"(?:Generated answer|(?:Model )?Response):[ \t]*(?P<answer>.*?)(?:\n\n|\Z)", re.DOTALL)
_WORD = re.compile(r"\w+")
_NEGATIONS = frozenset({"not", "never", "no", "nothing", "none"})


@dataclass(frozen=True)
class SimulatedJudge:
    """How the simulated server grades judge prompts (see the module docstring).

    Attributes:
        accept_wrong: probability a wrong answer is labelled CORRECT (the false-positive rate).
        accept_right: probability a right answer is labelled CORRECT (the true-positive rate).
        accept_wrong_when: ``(string, probability)`` pairs: a prompt holding the string (the first
            that matches) accepts a wrong answer with that probability instead of ``accept_wrong``.
    """

    accept_wrong: float = 0.0
    accept_right: float = 1.0
    accept_wrong_when: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        # pairs given as lists (a spec sent to a server in another process) become tuples
        object.__setattr__(self, "accept_wrong_when", tuple((str(k), v) for k, v in self.accept_wrong_when))
        named = [("accept_wrong", self.accept_wrong), ("accept_right", self.accept_right)]
        named += [(f"accept_wrong_when[{k!r}]", v) for k, v in self.accept_wrong_when]
        for name, value in named:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise ValueError(f"simulated judge: {name} must be a probability in [0, 1], got {value!r}")

    def wrong_rate(self, prompt: str) -> float:
        """The probability this judge accepts a wrong answer under ``prompt``."""
        return next((p for text, p in self.accept_wrong_when if text in prompt), self.accept_wrong)

    def reply(self, prompt: str, seed: int = 0) -> str | None:
        """``CORRECT`` or ``WRONG`` for a judge prompt; None for any other prompt."""
        found = list(_PROMPT.finditer(prompt))
        if not found:
            return None
        gold, answer = found[-1]["gold"], found[-1]["answer"]
        p = self.accept_right if is_right(gold, answer) else self.wrong_rate(prompt)
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
