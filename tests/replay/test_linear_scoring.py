"""Memory size and retention cost linear time: each entry is indexed once, whatever the probe count.

Work is counted (entries indexed, characters normalized), never timed, so the
complexity guard cannot flake under load.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lyra_lab.matching._retention as retention
import lyra_lab.matching._squad as qa
from lyra_lab.backends import FakeLLM, HashingEmbedder, token_counter
from lyra_lab.corpus import Conversation, Probe, Session, Turn
from lyra_lab.matching import answer_retained
from lyra_lab.measures import Scoring, score_recall
from lyra_lab.memory import MemoryEntry, MemoryStore
from lyra_lab.recall import RECALLERS
from lyra_lab.replay import MemoryTally, Pipeline, ReplaySetup, replay_iter
from lyra_lab.rollup import render_memory

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
WORDS = "the a an Ana moved to Lisbon Portugal May 7 2023 cat's cello, sister; nurse. piano—exam “Porto”".split()


def conversation_with_probes(turns: int, probes: int, cid: str = "c") -> tuple[Conversation, list[Probe]]:
    """``turns`` turns, and ``probes`` probes spread evenly through them (each at a new memory version)."""
    ts = tuple(Turn(id=f"t{i}", conversation_id=cid, session_id="s", role="user" if i % 2 == 0 else "assistant",
                    text=" ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(12)) + f" item{i}",
                    timestamp=T0 + timedelta(minutes=i)) for i in range(turns))
    step = turns // probes
    ps = [Probe(id=f"p{j}", conversation_id=cid, question=f"what about item{j * step}?", answer=f"item{j * step} cello",
                evidence=(f"t{j * step}",), asked_at=T0 + timedelta(minutes=j * step, seconds=30))
          for j in range(probes)]
    return Conversation(id=cid, sessions=(Session(id="s", conversation_id=cid, turns=ts),)), ps


def scoring_work(turns: int, probes: int, monkeypatch) -> tuple[int, int]:
    """(characters normalized while replaying and scoring, memory entries indexed)."""
    from lyra_lab.replay import Registries

    chars = [0]
    original = qa.normalize_answer

    def counting(text):
        chars[0] += len(str(text))
        return original(text)

    monkeypatch.setattr(retention, "normalize_answer", counting)
    conv, ps = conversation_with_probes(turns, probes)
    p = Pipeline.from_dict({"chunker": {"name": "turn_window", "max_turns": 4}}, Registries.default())
    tallies: list[MemoryTally] = []
    init = MemoryTally.__init__

    def spy(self, *args, **kwargs):
        init(self, *args, **kwargs)
        tallies.append(self)

    monkeypatch.setattr(MemoryTally, "__init__", spy)
    run = replay_iter(conv, ps, p, ReplaySetup(FakeLLM(), embedder=HashingEmbedder(),
                                               recallers={"bm25": RECALLERS.build("bm25")}, k=5))
    for asked in run:
        for outcome in asked:
            score_recall(outcome, Scoring(ks=(5,), budgets=(256,)))
    assert tallies[0].entries_indexed == len(run.result.store)  # every entry indexed exactly once
    return chars[0], tallies[0].entries_indexed


def test_doubling_probes_and_memory_does_not_quadruple_scoring_work(monkeypatch):
    small_chars, small_entries = scoring_work(200, 40, monkeypatch)
    big_chars, big_entries = scoring_work(400, 80, monkeypatch)
    assert big_entries == 2 * small_entries == 2 * (200 + 50)  # raw turns + chunks of 4
    # Linear work doubles; normalizing the whole memory per probe (the old way) quadruples it.
    assert big_chars < 2.5 * small_chars


def test_memory_tokens_match_counting_the_rendered_memory():
    count = token_counter("gpt-4o-mini")
    entries = [MemoryEntry(f"e{i}", "c", "turn", text, (f"t{i}",), start=T0 + timedelta(hours=i), end=T0 + timedelta(hours=i))
               for i, text in enumerate(["user: hi.", "assistant:  spaces  ", "user: a/b\n/c", "x:\n\n", "y: end"])]
    store = MemoryStore()
    tally = MemoryTally(store, "c", count)
    for entry in entries:
        store.add(entry)
        tally.sync()
        assert tally.memory_tokens() == count(render_memory(store.entries("c")))
    store.apply(remove=["e4", "e1"], add=[MemoryEntry("d", "c", "digest", "week one", ("t0", "t2"), level=1,
                                                     start=T0, end=T0 + timedelta(hours=2))])
    tally.sync()
    assert tally.memory_tokens() == count(render_memory(store.entries("c")))
    assert render_memory(store.entries("c")).startswith("[2024-01-01] week one\n")  # coarse before fine


def test_a_five_megabyte_memory_is_counted_without_encoding_it_at_once():
    count = token_counter("gpt-4o-mini")
    line = "user: I went to the market today and bought apples, pears and a melon for the weekend.\n"
    text = line * (5_000_000 // len(line))
    assert len(text) > 4_900_000
    assert count(text) == count(line) * (len(text) // len(line))  # exact: pieces cut after newlines
    entries = [MemoryEntry(f"e{i}", "c", "chunk", line * 2000, (f"t{i}",), start=T0 + timedelta(days=i),
                           end=T0 + timedelta(days=i)) for i in range(30)]
    store = MemoryStore(entries)
    tally = MemoryTally(store, "c", count)
    tally.sync()
    memory_text = render_memory(store.entries("c"))
    assert tally.entries_indexed == 30 and len(memory_text) > 5_000_000 and tally.memory_tokens() == count(memory_text)


ANSWER_WORDS = st.sampled_from(WORDS + ["", "!", "'s", "The", "LISBON", "7,", "2023."])
TEXT = st.lists(ANSWER_WORDS, max_size=12).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(answer=TEXT.filter(lambda a: qa.normalize_answer(a)), lines=st.lists(TEXT, max_size=6),
       threshold=st.sampled_from([0.3, 0.5, 0.8, 1.0]))
def test_indexed_retention_equals_the_rule_on_the_whole_text(answer, lines, threshold):
    vocab = frozenset().union(*(retention.normalized_tokens(line) for line in lines))
    recall = retention.answer_token_recall(answer, vocab)
    assert (recall >= threshold) == answer_retained(answer, "\n".join(lines), threshold)


@pytest.mark.parametrize("threshold", [0.5, 1.0])
def test_replayed_retention_equals_the_rule(threshold):
    conv, ps = conversation_with_probes(40, 8)
    ps.append(Probe(id="gone", conversation_id="c", question="?", answer="saxophone Biscuit", evidence=("t1",)))
    from lyra_lab.replay import Registries

    p = Pipeline.from_dict({"chunker": {"name": "turn_window", "max_turns": 4}}, Registries.default())
    run = replay_iter(conv, ps, p, ReplaySetup(FakeLLM(), recallers={"bm25": RECALLERS.build("bm25")}, k=3))
    for asked in run:
        memory_text = render_memory(run.store.entries("c"))
        for outcome in asked:
            assert outcome.memory.answer_recall is not None
            fast = score_recall(outcome, Scoring(ks=(3,), retention_threshold=threshold))["retention"]
            assert fast == float(answer_retained(outcome.probe.answer, memory_text, threshold))
