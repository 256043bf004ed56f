"""How many calls needed how many attempts: a small tally that adds up with ``+``.

A run's summary says "412 calls: 398 answered at the first attempt, 12 at the
second, 2 at the third; 1 failed (attempts)". Answers come from
``Completion.attempts`` (0: served from the response cache, no request), failures
from ``BackendError.gave_up`` or a strategy's ``Degradation.cause``.

>>> t = AttemptTally.of(answered=[1, 1, 2, 0]) + AttemptTally.of(failed=["attempts"])
>>> t.calls, t.retried, t.failed_calls
(5, 1, 1)
>>> str(t)
'5 calls: 2 answered at attempt 1, 1 at attempt 2, 1 from the response cache; 1 failed (attempts 1)'
>>> t.metrics()
{'calls.cached': 1, 'calls.attempts_1': 2, 'calls.attempts_2': 1, 'calls.failed.attempts': 1}
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Mapping


@dataclass(frozen=True)
class AttemptTally:
    """Calls by the attempts they needed, and failed calls by why they stopped.

    Attributes:
        answered: attempts → calls answered after that many requests (0: from the response cache).
        failed: why it stopped (``attempts``, ``deadline``, ``not_retryable``, ``error``) → calls that failed for good.
    """

    answered: Mapping[int, int] = field(default_factory=dict, hash=False)
    failed: Mapping[str, int] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if any(not isinstance(k, int) or isinstance(k, bool) or k < 0 for k in self.answered):
            raise ValueError(f"AttemptTally.answered keys are attempts (integers >= 0), got {sorted(self.answered)}")
        object.__setattr__(self, "answered", {int(k): int(v) for k, v in sorted(self.answered.items()) if v})
        object.__setattr__(self, "failed", {str(k): int(v) for k, v in sorted(self.failed.items()) if v})

    @classmethod
    def of(cls, answered: Iterable[int] = (), failed: Iterable[str] = ()) -> "AttemptTally":
        """The tally of answered calls' attempt counts and failed calls' reasons."""
        return cls(Counter(answered), Counter(failed))

    @property
    def calls(self) -> int:
        return sum(self.answered.values()) + self.failed_calls

    @property
    def retried(self) -> int:
        """Answered calls that needed more than one attempt."""
        return sum(n for attempts, n in self.answered.items() if attempts > 1)

    @property
    def failed_calls(self) -> int:
        return sum(self.failed.values())

    def __bool__(self) -> bool:
        return self.calls > 0

    def __add__(self, other: "AttemptTally") -> "AttemptTally":
        if not isinstance(other, AttemptTally):
            return NotImplemented
        return AttemptTally(Counter(self.answered) + Counter(other.answered), Counter(self.failed) + Counter(other.failed))

    def __radd__(self, other: object) -> "AttemptTally":
        # so that sum(tallies) works from its start value 0
        if other == 0:
            return self
        return self.__add__(other) if isinstance(other, AttemptTally) else NotImplemented

    def metrics(self) -> dict[str, int]:
        """``calls.cached``, ``calls.attempts_<n>`` and ``calls.failed.<why>`` for the counts that are not zero."""
        out = {("calls.cached" if k == 0 else f"calls.attempts_{k}"): n for k, n in self.answered.items()}
        out.update({f"calls.failed.{why}": n for why, n in self.failed.items()})
        return out

    def __str__(self) -> str:
        parts = [f"{n} answered at attempt {k}" if i == 0 else f"{n} at attempt {k}"
                 for i, (k, n) in enumerate((k, n) for k, n in self.answered.items() if k > 0)]
        if self.answered.get(0):
            parts.append(f"{self.answered[0]} from the response cache")
        text = f"{self.calls} calls: " + (", ".join(parts) or "none answered")
        if self.failed:
            text += f"; {self.failed_calls} failed (" + ", ".join(f"{why} {n}" for why, n in self.failed.items()) + ")"
        return text
