"""Differential test: lyra-lab's LongMemEval-named retrieval measures against LongMemEval's own rules.

``_lme_*`` below is this suite's rewrite of the rules of LongMemEval's published retrieval
scoring (``src/retrieval/eval_utils.py``: ``evaluate_retrieval`` at turn level and
``evaluate_retrieval_turn2session``), written from its description, over the same inputs it
takes: a ranking as indices into a corpus of document ids (``<session>_<turn>``), the
correct (evidence) ids, and k.  Three thousand random corpora, evidence sets and complete
rankings go through both; every LongMemEval-named figure must agree on every case.

lyra-lab's side goes through the real path a run takes: raw turns in a ``MemoryStore``, the
replay's ``MemoryTally`` counting the relevant entries, and ``score_recall`` reading the
ranking as deep as it needs.
"""

from __future__ import annotations

import math
import random

import pytest

from lyra_lab.backends import PlainCount
from lyra_lab.corpus import Probe
from lyra_lab.measures import Scoring, score_recall
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.replay._ask import MemoryTally
from tests.helpers.recalled import recalled

LME_KS = (1, 3, 5, 10, 30, 50)  # the cutoffs LongMemEval reports
CASES = 3000


# --- LongMemEval's rules, rewritten ------------------------------------------------------------

def _lme_dcg(relevances: list[int], k: int) -> float:
    rel = relevances[:k]
    return float(rel[0] + sum(r / math.log2(i) for i, r in enumerate(rel[1:], start=2))) if rel else 0.0


def _lme_ndcg(rankings: list[int], correct: set[str], corpus_ids: list[str], k: int) -> float:
    relevances = [1 if doc in correct else 0 for doc in corpus_ids]
    ideal = _lme_dcg(sorted(relevances, reverse=True), k)
    return _lme_dcg([relevances[i] for i in rankings[:k]], k) / ideal if ideal else 0.0


def _lme_evaluate(rankings: list[int], correct: list[str], corpus_ids: list[str], k: int) -> tuple[float, float, float]:
    recalled_docs = {corpus_ids[i] for i in rankings[:k]}
    return (float(any(doc in recalled_docs for doc in correct)), float(all(doc in recalled_docs for doc in correct)),
            _lme_ndcg(rankings, set(correct), corpus_ids, k))


def _lme_strip(doc_id: str) -> str:
    return "_".join(doc_id.split("_")[:-1])


def _lme_turn2session(rankings: list[int], correct: list[str], corpus_ids: list[str],
                      k: int) -> tuple[float, float, float]:
    sessions_correct = sorted({_lme_strip(doc) for doc in correct})
    session_ids = [_lme_strip(doc) for doc in corpus_ids]
    effective_k = k
    while effective_k <= len(session_ids) and len({session_ids[i] for i in rankings[:effective_k]}) < k:
        effective_k += 1
    return _lme_evaluate(rankings, sessions_correct, session_ids, effective_k)


# --- one random case ------------------------------------------------------------------------------

def _case(rng: random.Random) -> tuple[list[str], list[str], list[int]]:
    """A corpus of turn ids ``s<j>_<i>``, a non-empty evidence set, and a complete ranking."""
    corpus = [f"s{j}_{i}" for j in range(rng.randint(1, 12)) for i in range(rng.randint(1, 6))]
    evidence = rng.sample(corpus, rng.randint(1, min(4, len(corpus))))
    ranking = list(range(len(corpus)))
    rng.shuffle(ranking)
    return corpus, evidence, ranking


def _lyra_scores(corpus: list[str], evidence: list[str], ranking: list[int]) -> dict[str, float]:
    session_of = {turn: _lme_strip(turn) for turn in corpus}
    entries = {turn: MemoryEntry(id=f"turn:{turn}", conversation_id="c", kind="turn", text=f"u: {turn}",
                                 turn_ids=(turn,), session_ids=(session_of[turn],)) for turn in corpus}
    store = MemoryStore()
    store.add(list(entries.values()))
    count = PlainCount(lambda text: len(text.split()))
    tally = MemoryTally(store, "c", count)
    tally.sync()
    probe = Probe(id="q", conversation_id="c", question="?", answer="x", evidence=tuple(evidence))
    ranked = [entries[corpus[i]] for i in ranking]
    outcome = recalled(probe, ranked, k=max(LME_KS), count=count, memory=tally.state(probe, session_of))
    return score_recall(outcome, Scoring(ks=LME_KS), session_of)


def _disagreements(corpus: list[str], evidence: list[str], ranking: list[int]) -> list[str]:
    got = _lyra_scores(corpus, evidence, ranking)
    wrong = []
    for k in LME_KS:
        turn = _lme_evaluate(ranking, evidence, corpus, k)
        session = _lme_turn2session(ranking, evidence, corpus, k)
        pairs = {"recall_any": turn[0], "recall_all": turn[1], "ndcg_any": turn[2],
                 "session_recall_any": session[0], "session_recall_all": session[1], "session_ndcg_any": session[2]}
        wrong += [f"{name}@{k}: lyra-lab {got[f'{name}@{k}']!r}, LongMemEval {want!r}"
                  for name, want in pairs.items() if got[f"{name}@{k}"] != pytest.approx(want, abs=1e-12)]
    return wrong


def test_longmemeval_turn_and_session_measures_agree_on_every_random_case():
    rng = random.Random(25)
    failures = []
    for n in range(CASES):
        corpus, evidence, ranking = _case(rng)
        wrong = _disagreements(corpus, evidence, ranking)
        if wrong:
            failures.append(f"case {n} ({len(corpus)} turns, evidence {evidence}): {wrong[0]}")
    assert not failures, f"{len(failures)} of {CASES} cases disagree; first: {failures[0]}"


def test_the_session_rule_widens_k_to_k_distinct_sessions_and_keeps_repeats():
    # ranking a_0, a_1, b_0, c_0 with evidence in c: at k=2 LongMemEval reads 3 entries (a, a, b)
    # and misses c; at k=3 it reads all 4.  The distinct-session variant reads [a, b, c].
    corpus = ["a_0", "a_1", "b_0", "c_0"]
    got = _lyra_scores(corpus, ["c_0"], [0, 1, 2, 3])
    assert got["session_recall_any@3"] == 1.0 and _lme_turn2session([0, 1, 2, 3], ["c_0"], corpus, 3)[0] == 1.0
    assert _lme_turn2session([0, 1, 2, 3], ["c_0"], corpus, 2)[0] == 0.0
    # nDCG at k=3 over the widened prefix of 4: the relevant entry at rank 4, ideal list of 1
    assert got["session_ndcg_any@3"] == pytest.approx(1 / math.log2(4))
    # the distinct variant: c is the third distinct session
    assert got["distinct_session_ndcg_any@3"] == pytest.approx(1 / math.log2(3))


def test_the_reference_is_not_vacuous():
    """The comparison can fail: a ranking scored as if it were reversed disagrees on many cases."""
    rng = random.Random(7)
    differ = 0
    for _ in range(200):
        corpus, evidence, ranking = _case(rng)
        got = _lyra_scores(corpus, evidence, ranking[::-1])
        want = _lme_turn2session(ranking, evidence, corpus, 3)
        differ += got["session_ndcg_any@3"] != pytest.approx(want[2], abs=1e-12)
    assert differ > 50
