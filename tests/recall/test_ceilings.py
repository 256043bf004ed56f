"""The ceilings ``oracle`` and ``full_context``: what they return, that only a recaller declaring it is told a
probe's evidence, that the context is rendered within the same budget, and that they run in a grid beside any
recaller (the oracle's evidence recall is 1.0 there, on the synthetic corpus and on LoCoMo)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.backends import token_counter
from lyra_lab.corpus import Probe
from lyra_lab.experiments import ExperimentSpec, RunOptions, run_experiment
from lyra_lab.memory import MemoryEntry, MemoryStore, hit_line
from lyra_lab.recall import RECALLERS, Bm25, FullContext, Oracle, Query
from lyra_lab.replay._ask import Asker, ContextRender
from lyra_lab.replay._types import MemoryState
from lyra_lab.systems import PipelineSystem, ServedSystem
from tests.helpers.locomo import locomo_path
from tests.systems.conftest import SYNTHETIC

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def turn(i: int, text: str) -> MemoryEntry:
    at = T0 + timedelta(days=i)
    return MemoryEntry(id=f"turn:{i}", conversation_id="c", kind="turn", text=text, turn_ids=(f"D1:{i}",),
                       start=at, end=at)


def store_with_a_digest() -> MemoryStore:
    """Turns 1..5 verbatim, and a digest folding turns 6 and 7 (their turns are gone)."""
    entries = [turn(i, f"turn {i} about the kayak trip") for i in range(1, 6)]
    entries.append(MemoryEntry(id="digest:1", conversation_id="c", kind="digest", text="turns 6-7 in brief",
                               turn_ids=("D1:6", "D1:7"), start=T0 + timedelta(days=6), end=T0 + timedelta(days=7),
                               level=1))
    return MemoryStore(entries)


def test_the_oracle_returns_the_evidence_entries_and_nothing_else():
    store = store_with_a_digest()
    hits = Oracle().recall(store, Query("which trip?", "c", evidence=("D1:4", "D1:2", "D1:7")), 10)
    assert [h.entry.id for h in hits] == ["turn:2", "turn:4", "digest:1"]  # verbatim where kept, else the digest
    assert [h.rank for h in hits] == [0, 1, 2] and {h.via for h in hits} == {"oracle"}
    assert Oracle().recall(store, Query("which trip?", "c"), 10) == []  # no evidence: nothing is the context
    assert [h.entry.id for h in Oracle().recall(store, Query("q", "c", evidence=("D1:4", "D1:2")), 1)] == ["turn:2"]


def test_full_context_is_the_whole_memory_newest_first():
    hits = FullContext().recall(store_with_a_digest(), Query("q", "c"), 10)
    assert [h.entry.id for h in hits] == ["digest:1", "turn:5", "turn:4", "turn:3", "turn:2", "turn:1"]


def probe(evidence: tuple[str, ...]) -> Probe:
    return Probe(id="p1", conversation_id="c", question="kayak trip?", answer="the kayak", evidence=evidence)


def test_only_a_recaller_that_declares_it_is_told_the_evidence():
    seen: dict[str, tuple[str, ...]] = {}

    class Spy(Bm25):
        def recall(self, store, query, k):
            seen[type(self).__name__] = query.evidence
            return super().recall(store, query, k)

    class OracleSpy(Oracle):
        def recall(self, store, query, k):
            seen[type(self).__name__] = query.evidence
            return super().recall(store, query, k)

    store = store_with_a_digest()
    asker = Asker(store, "c", {"bm25": Spy(), "oracle": OracleSpy()}, None, k=3)
    count = token_counter()
    outcomes = asker.ask(probe(("D1:3",)), T0 + timedelta(days=30), MemoryState(entries=6, tokens=0),
                         ContextRender(1000, count))
    assert seen == {"Spy": (), "OracleSpy": ("D1:3",)}
    assert outcomes[1].context == hit_line(store.get("turn:3"))  # the evidence alone, rendered as any context


def test_full_context_fills_the_same_budget_newest_first_and_drops_the_oldest():
    store = store_with_a_digest()
    count = token_counter()
    lines = [hit_line(e) for e in sorted(store.entries("c"), key=lambda e: e.end, reverse=True)]
    budget = count("\n".join(lines[:3]))  # room for the three newest entries, whole
    asker = Asker(store, "c", {"full": FullContext(), "bm25": Bm25()}, None, k=2)
    full, bm25 = asker.ask(probe(("D1:1",)), T0 + timedelta(days=30), MemoryState(entries=6, tokens=0),
                           ContextRender(budget, count))
    assert full.context == "\n".join(lines[:3]) and full.context_tokens <= budget
    assert [h.entry.id for h in full.hits][:3] == ["digest:1", "turn:5", "turn:4"]  # asked past k=2: the budget cuts
    assert len(bm25.hits) == 2  # every other recaller is asked for k as before
    assert full.ranking.entries(10)[-1].id == "turn:1"  # the whole memory, read deeper


def test_given_a_room_full_context_fills_it_and_every_other_recaller_keeps_the_budget():
    store = store_with_a_digest()
    count = token_counter()
    lines = [hit_line(e) for e in sorted(store.entries("c"), key=lambda e: e.end, reverse=True)]
    seen: list[str] = []

    class Room:  # a ContextRoom: the answerer's room for each probe
        def tokens(self, probe, count):
            seen.append(probe.id)
            return count("\n".join(lines[:4]))

    asker = Asker(store, "c", {"full": FullContext(), "bm25": Bm25()}, None, k=6)
    full, bm25 = asker.ask(probe(("D1:1",)), T0 + timedelta(days=30), MemoryState(entries=6, tokens=0),
                           ContextRender(count(lines[0]), count, Room()))
    assert full.context == "\n".join(lines[:4]) and full.answer_room == count("\n".join(lines[:4]))
    assert bm25.context_tokens <= count(lines[0]) and bm25.answer_room is None  # the pipeline's budget
    assert seen == ["p1"]  # asked once, for the whole-memory recaller only


@pytest.mark.parametrize("system", [PipelineSystem, ServedSystem])
def test_a_memory_system_refuses_the_oracle_in_one_line(system):
    with pytest.raises(ConfigError) as caught:
        system(recaller="oracle")
    assert "needs each probe's gold evidence, which a memory system is never told" in str(caught.value)
    assert "\n" not in str(caught.value)


def ceilings_run(tmp_path, corpus: dict[str, object]):
    spec = ExperimentSpec.from_dict({
        "name": "ceilings", "corpus": corpus,
        "grid": {"chunkers": [{"name": "turn_window", "max_turns": 1}], "recallers": ["bm25", "oracle", "full_context"]},
        "run": {"backends": ["fake"], "embedders": ["none"], "ks": [5, 10], "score_at_tokens": [256], "cache": "off"}})
    df = run_experiment(spec, tmp_path / "run", RunOptions(progress=False))
    return df[df["probe_id"] != ""]


def oracle_recall(probes, metric: str):
    rows = probes[(probes["metric"] == metric)]
    return rows.groupby("recaller")["value"].mean(), rows[rows["recaller"] == "oracle"]


def test_in_a_grid_the_oracle_recalls_every_evidence_turn_on_the_synthetic_corpus(tmp_path):
    probes = ceilings_run(tmp_path, {"path": str(SYNTHETIC), "max_probes": 12})
    assert set(probes["recaller"]) == {"bm25", "oracle", "full_context"} and RECALLERS.build("oracle") == Oracle()
    means, oracle = oracle_recall(probes, "evidence_recall@10")
    assert len(oracle) >= 8 and (oracle["value"] == 1.0).all()
    assert means["bm25"] < 1.0  # the ceiling is above a real recaller
    full = probes[probes["recaller"] == "full_context"].pivot_table(index=["cell_id", "probe_id"], columns="metric",
                                                                    values="value")
    # the room the fake answerer's window leaves bounds the whole history, not the pipelines' 1000 tokens
    assert (full["context_tokens"] <= full["answer_room"]).all() and full["context_tokens"].max() > 1000


def test_in_a_grid_the_oracle_recalls_every_evidence_turn_on_locomo(tmp_path):
    probes = ceilings_run(tmp_path, {"path": str(locomo_path()), "format": "locomo", "conversations": ["conv-26"]})
    means, oracle = oracle_recall(probes, "evidence_recall@10")
    assert oracle["probe_id"].nunique() > 100
    # every LoCoMo probe with evidence: its evidence turns are the oracle's context (none has more than 10)
    assert (oracle["value"] == 1.0).all(), oracle[oracle["value"] < 1.0][["probe_id", "value"]].head()
    assert means["bm25"] < 0.9


def test_in_a_grid_the_oracle_recalls_the_has_answer_turns_of_longmemeval(tmp_path):
    mini = Path(__file__).parents[1] / "fixtures" / "corpus" / "longmemeval_mini.json"
    probes = ceilings_run(tmp_path, {"path": str(mini)})
    _, oracle = oracle_recall(probes, "recall_all@10")  # LongMemEval's own rule
    assert list(oracle["probe_id"]) == ["q1"] and (oracle["value"] == 1.0).all()  # q2_abs abstains: not scored
