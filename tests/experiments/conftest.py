"""A tiny corpus on disk, experiment files, and registries with a stand-in summarizer."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest

from lyra_lab._registry import Registry
from lyra_lab.chunking import CHUNKERS
from lyra_lab.corpus import Conversation, Corpus, Probe, Session, Turn
from lyra_lab.recall import RECALLERS
from lyra_lab.replay import TRIGGERS, Registries
from lyra_lab.rollup import ROLLUPS
from lyra_lab.summarize._types import Summary

T0 = datetime(2024, 3, 1, 10, 0, tzinfo=timezone.utc)
FACTS = ["my dog is called Biscuit", "my sister works as a nurse", "I am allergic to peanuts",
         "I moved to Porto last week", "my pottery class is on Tuesdays", "my manager Saoirse is relocating"]

SUMMARIZERS = Registry("summarizer")


@SUMMARIZERS.register("concat")
@dataclass(frozen=True)
class Concat:
    """Stand-in summarizer: one backend call over all chunks."""

    max_tokens: int = 32

    def summarize(self, chunks, backend, focus=None, on_event=None):
        text = "".join(c.text for c in chunks)
        completion = backend.complete([{"role": "user", "content": "Summarize:\n" + text}], max_tokens=self.max_tokens)
        ids = tuple(dict.fromkeys(t for c in chunks for t in c.turn_ids))
        return Summary(text=completion.text, turn_ids=ids, calls=(completion,))


@SUMMARIZERS.register("per_chunk")
@dataclass(frozen=True)
class PerChunk:
    """Stand-in map-reduce: one call per chunk plus one merge call."""

    def summarize(self, chunks, backend, focus=None, on_event=None):
        calls = [backend.complete([{"role": "user", "content": "Summarize:\n" + c.text}]) for c in chunks]
        merge = backend.complete([{"role": "user", "content": "Merge:\n" + "\n".join(c.text for c in calls)}])
        ids = tuple(dict.fromkeys(t for c in chunks for t in c.turn_ids))
        return Summary(text=merge.text, turn_ids=ids, calls=(*calls, merge))


def tiny_corpus(conversations: int = 2, sessions: int = 3) -> Corpus:
    convs, probes = [], []
    for ci in range(conversations):
        cid = f"u{ci}"
        sess = []
        for si in range(sessions):
            sid = f"{cid}:s{si}"
            start = T0 + timedelta(days=7 * si)
            fact = FACTS[(ci * sessions + si) % len(FACTS)]
            texts = [f"hi, by the way {fact}", "good to know, thanks for telling me", "what should I cook tonight?",
                     "maybe a risotto with mushrooms"]
            turns = tuple(Turn(id=f"{sid}:t{ti}", conversation_id=cid, session_id=sid,
                               role="user" if ti % 2 == 0 else "assistant", text=text,
                               timestamp=start + timedelta(minutes=ti)) for ti, text in enumerate(texts))
            sess.append(Session(id=sid, conversation_id=cid, turns=turns, started_at=start))
            probes.append(Probe(id=f"{cid}:q{si}", conversation_id=cid, question=f"what did I say: {fact.split()[-1]}?",
                                answer=fact.split()[-1], evidence=(f"{sid}:t0",), category="single_fact",
                                asked_at=T0 + timedelta(days=60)))
        probes.append(Probe(id=f"{cid}:qa", conversation_id=cid, question="what is my saxophone called?",
                            answer="not mentioned", category="abstention", abstention=True))
        convs.append(Conversation(id=cid, sessions=tuple(sess)))
    return Corpus(name="tiny", conversations=tuple(convs), probes=tuple(probes), format="native")


@pytest.fixture
def registries() -> Registries:
    return Registries(CHUNKERS, SUMMARIZERS, ROLLUPS, RECALLERS, TRIGGERS)


@pytest.fixture
def corpus_path(tmp_path):
    return tiny_corpus().save(tmp_path / "tiny.jsonl")


GRID = """
name = "tiny"
[corpus]
path = "tiny.jsonl"
[grid]
chunkers = [{ name = "turn_window", max_turns = 2 }, { name = "token_budget", max_tokens = 40 }]
summarizers = ["concat", "per_chunk"]
recallers = ["dense", "bm25", { name = "hybrid", method = "rrf" }]
[run]
backends = ["fake"]
embedders = ["hashing"]
ks = [1, 3]
cache = "off"
"""


@pytest.fixture
def write_toml(tmp_path, corpus_path):
    """Write an experiment file next to the tiny corpus; ``extra`` is appended verbatim."""

    def write(text: str = GRID, extra: str = "", name: str = "exp.toml"):
        path = tmp_path / name
        path.write_text(textwrap.dedent(text) + textwrap.dedent(extra), encoding="utf-8")
        return path

    return write
