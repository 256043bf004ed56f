"""Equal-budget scores (@Btok) on hand-built outcomes, counted in words so every figure is checkable by eye.

The counter here is a fake: one token per whitespace-separated word (render then truncates on
word boundaries).  A line is ``[undated] <text>``, so it costs 1 + the words of the text.
"""

import pandas as pd
from hypothesis import strategies as st
import pytest

from lyra_lab.corpus import Probe
from lyra_lab.reports import budget_frame
from lyra_lab.measures import Scoring, budget_scores, score_recall
from lyra_lab.memory import MemoryEntry, fit_context
from lyra_lab.recall import Hit, render
from tests.helpers.recalled import recalled


def words(text: str) -> int:  # fake token counter: words
    return len(text.split())


def entry(eid, turn_ids, text, kind="turn"):
    return MemoryEntry(id=eid, conversation_id="c1", kind=kind, text=text, turn_ids=tuple(turn_ids))


T1 = entry("turn:t1", ["t1"], "ana lives in lisbon")            # line: 5 words
T9 = entry("turn:t9", ["t9"], "the weather is nice")            # 5, irrelevant
T2 = entry("turn:t2", ["t2"], "she moved last may")             # 5
DIGEST = entry("digest:1", ["t1", "t2", "t3"], "ana moved somewhere sunny and likes cats very much now",
               kind="digest")                                   # 11, covers both evidence turns, lost "lisbon"
PROBE = Probe(id="p1", conversation_id="c1", question="Where does Ana live?", answer="Lisbon", evidence=("t1", "t2"))


def outcome(ranking, probe=PROBE, count=words):
    return recalled(probe, ranking, k=1, count=count)


def test_raw_turns_fill_the_budget_in_rank_order():
    s = budget_scores(outcome([T1, T9, T2]), [4, 5, 15])
    # B=4: T1's line (5) does not fit whole -> nothing counts for recall; render keeps its head
    # "[undated] ana lives …" (4 words), which lacks "lisbon"
    assert (s["evidence_recall@4tok"], s["coverage_recall@4tok"]) == (0.0, 0.0)
    assert s["answer_in_context@4tok"] == 0.0 and s["context_tokens@4tok"] == 4.0
    # B=5: T1 fits (5); T9 would make 10 and not even "[undated]" of it fits -> context = T1's line
    assert (s["evidence_recall@5tok"], s["coverage_recall@5tok"]) == (0.5, 0.5)
    assert s["answer_in_context@5tok"] == 1.0 and s["context_tokens@5tok"] == 5.0
    # B=15: all three lines (15): both evidence turns, directly
    assert (s["evidence_recall@15tok"], s["coverage_recall@15tok"]) == (1.0, 1.0)
    assert s["context_tokens@15tok"] == 15.0
    # the ranking's first hit is the only one in outcome.hits: budgets read the deeper ranking
    assert len(outcome([T1, T9, T2]).hits) == 1


def test_a_digest_covers_the_evidence_but_only_its_text_counts():
    s = budget_scores(outcome([DIGEST, T1]), [10, 11])
    # B=11: the digest fits whole: it covers t1 and t2 (coverage 1.0) but holds neither verbatim (0.0),
    # and its text lost "lisbon": the "summaries flatter" case in one probe
    assert s["coverage_recall@11tok"] == 1.0 and s["evidence_recall@11tok"] == 0.0
    assert s["answer_in_context@11tok"] == 0.0
    # B=10: a first entry longer than B counts for nothing in recall (cut: which turns survived is unknown)
    assert s["coverage_recall@10tok"] == 0.0
    assert s["context_tokens@10tok"] == 10.0  # its head, cut to the budget with " …"


def test_answer_in_context_follows_the_retention_rule():
    def aic(answer, text):
        probe = Probe(id="p", conversation_id="c1", question="q", answer=answer)
        return budget_scores(outcome([entry("turn:t1", ["t1"], text)], probe=probe), [50])["answer_in_context@50tok"]

    assert aic("Lisbon, Portugal", "She said: LISBON portugal!") == 1.0  # normalized phrase
    assert aic("7 May 2023", "on May 7, 2023 we met") == 1.0  # every token present, reordered
    assert aic("Lisbon", "Lisbonne is not it") == 0.0
    # 1 of 3 distinct normalized tokens ("sir", "leafalot", "fig") is below 0.8 -> not in context
    assert aic("Sir Leafalot the fig", "my fig is green") == 0.0


def test_whole_entries_are_the_whole_lines_render_keeps():
    entries = [T1, T9, T2, DIGEST]
    hits = [Hit(e, 1.0, i) for i, e in enumerate(entries)]
    for budget in range(1, 30):
        n = fit_context(entries, budget, words).whole
        whole = "\n".join(f"[undated] {h.entry.text}" for h in hits[:n])
        assert render(hits, budget, words).startswith(whole)
        assert words(whole) <= budget
        if n < len(hits):  # one more whole line would not fit
            assert words(whole + "\n" + f"[undated] {hits[n].entry.text}") > budget


def test_which_probes_get_budget_scores():
    abstain = Probe(id="p2", conversation_id="c1", question="q", answer="x", evidence=("t1",), adversarial=True)
    assert set(budget_scores(outcome([T1], probe=abstain), [5])) == {"context_tokens@5tok"}
    no_evidence = Probe(id="p3", conversation_id="c1", question="q", answer="Lisbon")
    assert set(budget_scores(outcome([T1], probe=no_evidence), [5])) == {"context_tokens@5tok",
                                                                         "answer_in_context@5tok"}
    assert budget_scores(outcome([T1]), []) == {}
    with pytest.raises(ValueError, match="positive integers"):
        budget_scores(outcome([T1]), [0])


def test_score_recall_adds_the_budget_metrics_and_budget_frame_splits_them():
    scores = score_recall(outcome([T1, T9, T2]), Scoring(ks=(1,), budgets=(5, 15)))
    assert scores["evidence_recall@5tok"] == 0.5 and scores["evidence_recall@15tok"] == 1.0
    assert "answer_in_context@5tok" in scores and "evidence_recall@1" in scores
    df = pd.DataFrame({"metric": list(scores), "value": list(scores.values())})
    frame = budget_frame(df)
    assert set(frame["budget_tokens"]) == {5, 15}
    assert set(frame["metric_base"]) == {"evidence_recall", "coverage_recall", "answer_in_context", "context_tokens"}
    assert not budget_frame(df[df["metric"] == "evidence_recall@1"]).shape[0]


def test_budgets_read_the_ranking_only_as_deep_as_they_fill():
    from lyra_lab.backends import LineMemoCounter, token_counter

    long_digest = entry("digest:2", ["t1", "t2", "t9"], " ".join(["ana moved to lisbon in may"] * 60),
                        kind="digest")  # ~400 tokens: budgets take it whole, cut, or not at all
    ranking = [long_digest, DIGEST, T9, entry("digest:3", ["t1", "t2", "t9"], long_digest.text, "digest"), T1, T2]
    count = LineMemoCounter(token_counter("gpt-4o-mini"))
    budgets = (5, 64, 256, 512, 1024, 4096)
    scores = score_recall(outcome(ranking, count=count), Scoring(ks=(1, 5), budgets=budgets))
    assert scores["evidence_recall@1024tok"] == 1.0 and scores["coverage_recall@256tok"] == 0.0
    assert scores["context_tokens@4096tok"] == count("\n".join(render_line(e) for e in ranking))


def render_line(e):
    from lyra_lab.memory import hit_line

    return hit_line(e)


_texts = st.lists(st.sampled_from(["Lisbon", "lisbon,", "may", "7", "the", "cat's", " ", "\n", "Ana:", "2023", "Σ"]),
                  max_size=10).map("".join)
