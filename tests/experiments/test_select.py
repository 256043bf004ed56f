"""Cutting a corpus to size: conversations, sessions, categories, and a round-robin probe sample."""

from __future__ import annotations

import pytest

from lyra_lab._registry import ConfigError
from lyra_lab.corpus import Probe
from lyra_lab.experiments import CorpusSpec, select


def spec(**kw):
    return CorpusSpec(path=None, **kw)  # type: ignore[arg-type]


def with_probes(corpus, n_per_cat):
    """The tiny corpus with extra probes: ``n_per_cat`` per category, all with evidence in session 0."""
    probes = []
    for conv in corpus.conversations:
        first = conv.sessions[0].turns[0].id
        for cat in ("a", "b", "c"):
            probes += [Probe(id=f"{conv.id}:{cat}{i}", conversation_id=conv.id, question="q", answer="x",
                             evidence=(first,), category=cat) for i in range(n_per_cat)]
    return corpus.with_probes(probes)


def test_conversations_by_count_or_id_and_sessions_cut(corpus_path):
    from lyra_lab.corpus import load

    corpus = load(corpus_path)
    assert [c.id for c in select(corpus, spec(conversations=1)).corpus.conversations] == ["u0"]
    assert [c.id for c in select(corpus, spec(conversations=("u1",))).corpus.conversations] == ["u1"]
    with pytest.raises(ConfigError, match="no conversation 'u9'"):
        select(corpus, spec(conversations=("u9",)))
    cut = select(corpus, spec(max_sessions=1))
    assert all(len(c.sessions) == 1 for c in cut.corpus.conversations) and cut.dropped_sessions == 4
    # probes whose evidence lies in a dropped session go; the abstention probes (no evidence) stay
    assert sorted(p.id for p in cut.corpus.probes) == ["u0:q0", "u0:qa", "u1:q0", "u1:qa"]
    assert cut.dropped_probes == 4


def test_categories_filter_and_round_robin_sample(corpus_path):
    from lyra_lab.corpus import load

    corpus = with_probes(load(corpus_path), 3)
    only_b = select(corpus, spec(categories=("b",))).corpus.probes
    assert {p.category for p in only_b} == {"b"} and len(only_b) == 6
    sample = select(corpus, spec(max_probes=4)).corpus.probes
    for cid in ("u0", "u1"):
        ids = [p.id for p in sample if p.conversation_id == cid]
        # chosen round-robin over categories (a0, b0, c0, then a1), listed in file order
        assert ids == [f"{cid}:a0", f"{cid}:a1", f"{cid}:b0", f"{cid}:c0"]
