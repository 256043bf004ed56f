"""Answer-text matching: SQuAD normalization, exact match, token F1, abstention, and retention.

The text rules that replay, probe drafting and evaluation share, below all of them:

- ``normalize_answer`` (lowercase, no punctuation, no articles), ``exact_match``,
  ``token_f1``, ``abstains`` / ``expects_abstention`` (the abstain rule for
  adversarial and abstention probes, ``ABSTAIN_PATTERNS``);
- the retention rule: is a probe's answer still in a text (``answer_retained``;
  ``RetainedAnswer`` asks it of many texts, the answer normalized once),
  the normalized token set a memory keeps up to date entry by entry
  (``normalized_tokens``, ``answer_token_recall``); a probe recall's retention scores are
  ``lyra_lab.measures.retention_scores``.

>>> normalize_answer("The Eiffel Tower!")
'eiffel tower'
>>> answer_retained("7 May 2023", "we met on May 7, 2023 in Paris")
True
"""

from lyra_lab._moved import moved_names
from lyra_lab.matching._retention import (
    DEFAULT_RETENTION_THRESHOLD,
    RetainedAnswer,
    answer_retained,
    answer_token_recall,
    normalized_tokens,
)
from lyra_lab.matching._squad import (
    ABSTAIN_PATTERNS,
    abstains,
    exact_match,
    expects_abstention,
    normalize_answer,
    token_f1,
)

__all__ = [
    "ABSTAIN_PATTERNS",
    "DEFAULT_RETENTION_THRESHOLD",
    "RetainedAnswer",
    "abstains",
    "answer_retained",
    "answer_token_recall",
    "exact_match",
    "expects_abstention",
    "normalize_answer",
    "normalized_tokens",
    "token_f1",
]

# names that moved away keep importing from here for one release, with a DeprecationWarning (lyra_lab._moved)
__getattr__ = moved_names(__name__)
