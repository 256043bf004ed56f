"""Named QA scorers: how an answer is compared with the gold answer.

A scorer is an experiment variable, recorded with every row, because the rules
move scores by many points and two figures scored differently must never be set
side by side silently.

* ``squad`` (default): the SQuAD evaluation's normalization (lowercase, no
  punctuation, no articles), exact match and token F1.  Adversarial and
  abstention probes are correct when the answer abstains (``abstains``).
* ``locomo``: the rules of the LoCoMo paper's released evaluation, restated:

  - normalization drops commas first, then lowercases, strips punctuation and
    drops the words ``a``, ``an``, ``the`` and ``and``; F1 is computed over
    Porter-stemmed tokens (nltk's ``PorterStemmer``, as the release uses);
  - exact match compares the *sets* of normalized (unstemmed) tokens;
  - category 1 (multi-hop in the dataset's own numbering): prediction and gold
    are split on commas; each gold part takes its best F1 against any predicted
    part, and the score is the mean over gold parts;
  - category 3: the gold answer is cut at its first ``;`` (the rest is a rationale);
  - category 5 (adversarial), and any probe flagged adversarial/abstention:
    correct only when the answer contains "no information available" or
    "not mentioned" (case-insensitive), the release's two phrases;
  - other categories: the stemmed F1 of the whole strings.
* ``longmemeval``: LongMemEval grades answers only with its question-type-aware
  judge (``lyra_lab.measures.JUDGE_PROMPTS["longmemeval_v1"]``); its string
  scores here are SQuAD's, and abstention questions (``_abs`` in the id) are correct when
  the answer abstains.  Put the judge's ``judge`` column beside LongMemEval tables.

>>> from lyra_lab.corpus import Probe
>>> p = Probe("q", "c", "What did she buy?", "Running shoe and tent", category=4)
>>> round(score_with("locomo", p, "running shoes, a tent")["qa_f1"], 3)
1.0
>>> round(score_with("squad", p, "running shoes, a tent")["qa_f1"], 3)
0.571
"""

from __future__ import annotations

import functools
import re
import string
from collections import Counter
from typing import TYPE_CHECKING

from lyra_lab.corpus import Probe
from lyra_lab.matching import abstains, exact_match, expects_abstention, token_f1

if TYPE_CHECKING:
    from nltk.stem import PorterStemmer

SCORERS: tuple[str, ...] = ("squad", "locomo", "longmemeval")
DEFAULT_SCORER = "squad"

_LOCOMO_DROP = re.compile(r"\b(a|an|the|and)\b")
_PUNCT = set(string.punctuation)
_LOCOMO_ABSTAIN = ("no information available", "not mentioned")


def check_scorer(scorer: str) -> str:
    """``scorer`` if it is known; otherwise a ``ConfigError`` listing the known ones."""
    if scorer not in SCORERS:
        from lyra_lab._registry import ConfigError

        raise ConfigError(f"unknown QA scorer {scorer!r}; known: {', '.join(SCORERS)}")
    return scorer


@functools.lru_cache(maxsize=1)
def _stemmer() -> PorterStemmer:
    from nltk.stem import PorterStemmer  # imported on first use: only the locomo scorer needs it

    return PorterStemmer()


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return str(_stemmer().stem(word))


def locomo_normalize(text: object) -> str:
    """LoCoMo's answer normalization (see the module docstring)."""
    text = str(text).replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    return " ".join(_LOCOMO_DROP.sub(" ", text).split())


def locomo_f1(prediction: object, gold: object) -> float:
    """Token F1 of the normalized, Porter-stemmed strings (0 when either side is empty)."""
    pred = [_stem(w) for w in locomo_normalize(prediction).split()]
    ref = [_stem(w) for w in locomo_normalize(gold).split()]
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def locomo_multi_f1(prediction: object, gold: object) -> float:
    """Category 1: mean over comma-separated gold parts of the best F1 against any predicted part."""
    preds = [p.strip() for p in str(prediction).split(",")]
    golds = [g.strip() for g in str(gold).split(",")]
    return sum(max(locomo_f1(p, g) for p in preds) for g in golds) / len(golds)


def locomo_em(prediction: object, gold: object) -> float:
    """1.0 when the sets of normalized tokens are equal."""
    return float(set(locomo_normalize(prediction).split()) == set(locomo_normalize(gold).split()))


def locomo_abstains(prediction: object) -> bool:
    """The release's adversarial rule: the answer says "no information available" or "not mentioned"."""
    text = str(prediction).lower()
    return any(phrase in text for phrase in _LOCOMO_ABSTAIN)


def _category(probe: Probe) -> int | None:
    try:
        return int(probe.category) if probe.category is not None else None
    except (TypeError, ValueError):
        return None


def score_locomo(probe: Probe, prediction: str) -> dict[str, float]:
    category = _category(probe)
    if probe.adversarial or probe.abstention or category == 5:
        value = float(locomo_abstains(prediction))
        return {"qa_em": value, "qa_f1": value}
    gold = str(probe.answer)
    if category == 3:
        gold = gold.split(";")[0].strip()
    f1 = locomo_multi_f1(prediction, gold) if category == 1 else locomo_f1(prediction, gold)
    return {"qa_em": locomo_em(prediction, gold), "qa_f1": f1}


def score_squad(probe: Probe, prediction: str) -> dict[str, float]:
    """The ``squad`` scorer: adversarial/abstention probes by the abstain rule, others EM and F1."""
    if expects_abstention(probe):
        value = float(abstains(prediction))
        return {"qa_em": value, "qa_f1": value}
    return {"qa_em": exact_match(prediction, probe.answer), "qa_f1": token_f1(prediction, probe.answer)}


def score_with(scorer: str, probe: Probe, prediction: str) -> dict[str, float]:
    """``{"qa_em", "qa_f1"}`` of one answer under the named scorer."""
    check_scorer(scorer)
    if scorer == "locomo":
        return score_locomo(probe, prediction)
    return score_squad(probe, prediction)  # squad, and longmemeval's string scores
