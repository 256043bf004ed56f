"""Differential test: lyra-lab's ``locomo`` QA scorer against the LoCoMo release's own rules.

``_release_*`` below is this suite's rewrite, from its published description, of the rules in
the LoCoMo release's ``task_eval/evaluation.py`` (``normalize_answer``, ``f1_score``, the
multi-answer ``f1``, ``exact_match_score`` and the per-category choice in
``eval_question_answering``), with the same libraries the release uses: ``regex`` for the
article pattern and nltk's ``PorterStemmer``.  Two sets of cases go through both sides:

* 3,000 random gold/prediction pairs over a vocabulary chosen to reach every rule (commas,
  semicolons, articles and "and", punctuation, inflected words, digits, accents, odd
  whitespace, the two abstention phrases, empty answers), categories 1-5;
* with the dataset present, every LoCoMo question's real gold answer and category, each
  against predictions made from it (the gold itself, a cut, a reordering, another question's
  gold, an abstention) through the real importer.

Every F1 and every exact match must agree on every case.
"""

from __future__ import annotations

import random
import string
from collections import Counter

import pytest
import regex

from lyra_lab.corpus import Probe
from lyra_lab.measures import score_answer
from tests.helpers.locomo import needs_locomo

CASES = 3000


# --- the LoCoMo release's rules, rewritten ---------------------------------------------------

def _release_normalize(s: str) -> str:
    s = s.replace(",", "").lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = regex.sub(r"\b(a|an|the|and)\b", " ", s)
    return " ".join(s.split())


def _release_stemmer():
    from nltk.stem import PorterStemmer

    return PorterStemmer()


STEMMER = _release_stemmer()


def _release_f1(prediction: str, gold: str) -> float:
    pred = [STEMMER.stem(w) for w in _release_normalize(prediction).split()]
    ref = [STEMMER.stem(w) for w in _release_normalize(gold).split()]
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    p, r = same / len(pred), same / len(ref)
    return 2 * p * r / (p + r)


def _release_multi_f1(prediction: str, gold: str) -> float:
    preds = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in gold.split(",")]
    best = [max(_release_f1(p, g) for p in preds) for g in golds]
    return sum(best) / len(best)


def _release_em(prediction: str, gold: str) -> float:
    return float(set(_release_normalize(prediction).split()) == set(_release_normalize(gold).split()))


def _release_score(category: int, gold: str, prediction: str) -> tuple[float, float | None]:
    """(the release's QA score, its exact match where the release defines one for the category)."""
    if category == 5:
        low = prediction.lower()
        return float("no information available" in low or "not mentioned" in low), None
    if category == 3:
        gold = gold.split(";")[0].strip()
    f1 = _release_multi_f1(prediction, gold) if category == 1 else _release_f1(prediction, gold)
    return f1, _release_em(prediction, gold)


# --- the cases --------------------------------------------------------------------------------

WORDS = ["the", "The", "a", "an", "An", "and", "AND", "running", "runs", "ran", "shoes", "shoe", "tent",
         "tents", "Paris", "paris", "camping", "camped", "2022", "7", "May", "café", "naïve", "Anna's",
         "it's", "mother-in-law", "x", "studies", "studying", "happily", "generously", "hopeful",
         "relational", "Ünïcode", "über", "band", "anthem", "thence"]
GLUE = [" ", " ", " ", ", ", "; ", ",", ";", " and ", ". ", "!", "?", " - ", "  ", "\t", "\n", "—", "'", '"', "(", ")"]
PHRASES = ["Not mentioned.", "no information available", "It is not  mentioned", "NOT MENTIONED in the memory",
           "No Information Available here", "not mention"]


def _text(rng: random.Random, pool: list[str]) -> str:
    n = rng.choice([0, 1, 1, 2, 3, 4, 6, 9])
    parts = []
    for _ in range(n):
        parts.append(rng.choice(pool))
        parts.append(rng.choice(GLUE))
    return "".join(parts[:-1]) if rng.random() < 0.8 else "".join(parts)


def _random_cases(seed: int) -> list[tuple[int, str, str]]:
    rng = random.Random(seed)
    cases = []
    for _ in range(CASES):
        category = rng.randint(1, 5)
        gold = _text(rng, WORDS)
        roll = rng.random()
        if roll < 0.25:  # a prediction that shares words with the gold
            words = regex.split(r"(\s+|,)", gold)
            rng.shuffle(words)
            prediction = "".join(words[: rng.randint(0, len(words))]) + rng.choice(["", ", ", " the ", "."])
        elif roll < 0.35:
            prediction = rng.choice(PHRASES)
        else:
            prediction = _text(rng, WORDS)
        cases.append((category, gold, prediction))
    return cases


def _lyra(category: int, gold: str, prediction: str, *, adversarial: bool = False) -> dict[str, float]:
    probe = Probe("p", "c", "What was it?", gold, category=category, adversarial=adversarial)
    return score_answer(probe, prediction, scorer="locomo")


def _disagreements(cases: list[tuple[int, str, str, bool]]) -> list[str]:
    out = []
    for category, gold, prediction, adversarial in cases:
        want_f1, want_em = _release_score(category, gold, prediction)
        got = _lyra(category, gold, prediction, adversarial=adversarial)
        if got["qa_f1"] != pytest.approx(want_f1, abs=1e-12) or (want_em is not None and got["qa_em"] != want_em):
            out.append(f"category {category}, gold {gold!r}, prediction {prediction!r}: "
                       f"lyra-lab {got}, release f1 {want_f1} em {want_em}")
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_random_answers_score_as_the_release_scores_them(seed):
    cases = [(c, g, p, False) for c, g, p in _random_cases(seed)]
    # the generator reaches every rule: each category, abstention phrases, partial credit, empty answers
    assert {c for c, *_ in cases} == {1, 2, 3, 4, 5}
    assert any(0 < _release_score(c, g, p)[0] < 1 for c, g, p, _ in cases)
    assert any(c == 5 and _release_score(c, g, p)[0] == 1 for c, g, p, _ in cases)
    assert any(c == 3 and ";" in g for c, g, *_ in cases) and any(c == 1 and "," in g for c, g, *_ in cases)
    bad = _disagreements(cases)
    assert not bad, f"{len(bad)} of {len(cases)} disagree, first: {bad[0]}"


@needs_locomo
def test_every_locomo_gold_answer_scores_as_the_release_scores_it():
    from lyra_lab.corpus import load
    from tests.helpers.locomo import locomo_path

    probes = [p for p in load(locomo_path()).probes if p.category is not None]
    rng = random.Random(7)
    cases = []
    for probe in probes:
        gold = str(probe.answer)
        words = gold.split()
        cut = " ".join(words[: max(1, len(words) // 2)])
        shuffled = " ".join(rng.sample(words, len(words)))
        other = str(rng.choice(probes).answer)
        for prediction in (gold, cut, shuffled, other, "Not mentioned", f"the {gold.lower()}, and more"):
            cases.append((int(probe.category), gold, prediction, probe.adversarial))
    assert len(probes) == 1986
    bad = _disagreements(cases)
    assert not bad, f"{len(bad)} of {len(cases)} disagree, first: {bad[0]}"
