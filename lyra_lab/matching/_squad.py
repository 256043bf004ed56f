"""SQuAD answer normalization, exact match, token F1, and the abstention rule.

Normalization follows the SQuAD evaluation script: lowercase, drop punctuation,
drop the articles ``a``/``an``/``the``, collapse whitespace.

Adversarial and abstention probes (``Probe.adversarial`` / ``Probe.abstention``)
ask about something the conversation never says.  Their rule: the answer is
correct (EM = F1 = 1) when it *abstains*, i.e. its normalized text matches one of
``ABSTAIN_PATTERNS`` ("not mentioned", "no information", "unknown", "don't know",
"cannot answer", "not stated"…), otherwise EM = F1 = 0 — regardless of the gold
text, which for LoCoMo category 5 is the trap answer, not a correct one.
"""

from __future__ import annotations

import re
import string
from collections import Counter

from lyra_lab.corpus import Probe

_PUNCT = str.maketrans("", "", string.punctuation + "‘’“”–—")
_ARTICLES = re.compile(r"\b(a|an|the)\b")

# Matched against the *normalized* answer (lowercase, no punctuation, no articles).
ABSTAIN_PATTERNS: tuple[str, ...] = (
    r"\bnot (?:been )?(?:mentioned|stated|specified|discussed|provided|given|known|available|said)\b",
    r"\bno (?:information|mention|record|evidence|details?|data)\b",
    r"\bnever (?:mentioned|said|discussed|stated)\b",
    r"\bunknown\b",
    r"\b(?:i )?(?:do not|dont|don t) know\b",
    r"\b(?:cannot|can not|cant|can t|unable to) (?:answer|tell|say|determine|be determined)\b",
    r"\bnot (?:in|from) (?:memory|context|conversation)\b",
    r"\bnot answerable\b|\bunanswerable\b",
)
_ABSTAIN = re.compile("|".join(ABSTAIN_PATTERNS))


def normalize_answer(text: object) -> str:
    """SQuAD normalization: lowercase, no punctuation, no articles, single spaces."""
    text = str(text).lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: object, gold: object) -> float:
    """1.0 when the normalized strings are equal, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(gold))


def token_f1(prediction: object, gold: object) -> float:
    """Token-overlap F1 of the normalized strings (multiset overlap, as in SQuAD).

    When either side has no tokens, F1 is 1.0 if both are empty and 0.0 otherwise.
    """
    pred = normalize_answer(prediction).split()
    ref = normalize_answer(gold).split()
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision = common / len(pred)
    recall = common / len(ref)
    return 2 * precision * recall / (precision + recall)


def abstains(prediction: object) -> bool:
    """True when the answer says the memory holds no answer (see ``ABSTAIN_PATTERNS``)."""
    return bool(_ABSTAIN.search(normalize_answer(prediction)))


def expects_abstention(probe: Probe) -> bool:
    return bool(probe.adversarial or probe.abstention)
