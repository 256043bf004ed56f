"""Replay's timed recall is a user's first ask of the query; only the deeper, untimed rankings reuse scores."""

from __future__ import annotations

from collections import Counter

from lyra_lab.backends import FakeLLM, HashingEmbedder
from lyra_lab.recall import Bm25Index, DenseIndex
from lyra_lab.replay import Pipeline, ReplaySetup, replay_iter

RECALLERS = ("dense", "bm25", "hybrid")


def _replay(build, registries, labels, k=2):
    """``{recaller: [(hit ids, 20-deep ranking ids) per probe]}``, the rankings read as each probe is asked."""
    conv = build.conversation([[i * 0.1 for i in range(12)], [30 + i * 0.1 for i in range(9)]])
    probes = [build.probe("topic0x3", None), build.probe("turn 4 of session 1", None)]
    pipeline = Pipeline.from_dict({"chunker": {"name": "turn_window", "max_turns": 4}}, registries)
    setup = ReplaySetup(FakeLLM(), embedder=HashingEmbedder(),
                        recallers={label: registries.recallers.build(label) for label in labels}, k=k)
    out: dict[str, list] = {label: [] for label in labels}
    for asked in replay_iter(conv, probes, pipeline, setup):
        for o in asked:
            out[o.recaller].append(([h.entry.id for h in o.hits], [e.id for e in o.ranking.entries(20)]))
    return out


def test_recallers_asked_together_rank_as_each_asked_alone(build, registries):
    together = _replay(build, registries, RECALLERS)
    for label in RECALLERS:
        alone = _replay(build, registries, [label])[label]
        assert together[label] == alone
        assert all(len(deep) > len(hits) for hits, deep in alone)  # the deeper call did run


def test_each_timed_call_scores_the_query_afresh_and_the_deeper_calls_reuse_it(build, registries, monkeypatch):
    scored: Counter[str] = Counter()
    for cls in (DenseIndex, Bm25Index):
        original = cls.scores

        def counting(self, query, _original=original, _name=cls.__name__):
            scored[_name] += 1
            return _original(self, query)

        monkeypatch.setattr(cls, "scores", counting)
    _replay(build, registries, RECALLERS)
    # per probe: dense's and hybrid's timed calls score the query vector, bm25's and hybrid's the text;
    # the deeper calls (and hybrid's own dense and BM25 rankings for them) score nothing anew
    assert scored == {"DenseIndex": 2 * 2, "Bm25Index": 2 * 2}
