"""Every recaller, on generated multi-conversation stores: at most k hits, sorted, unique, in scope."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings, strategies as st

from lyra_lab._params import strategy_name
from lyra_lab.backends import HashingEmbedder, token_counter
from lyra_lab.recall import Hit, Query, RECALLERS, render
from lyra_lab.testing import check_recall, check_render, memory_stores, word_count

EMBEDDER = HashingEmbedder(dim=64)
SPECS = [*RECALLERS.names(), {"name": "hybrid", "method": "weighted", "weight": 0.3},
         {"name": "tiered", "gists": 1, "sharp": 2, "recent": 1}, {"name": "recency", "half_life_days": 0.5}]
_queries = st.one_of(st.text(max_size=30), st.sampled_from(["Caroline", "what did she say", "the", ""]))
_now = st.one_of(st.none(), st.datetimes(min_value=datetime(2019, 1, 1), max_value=datetime(2026, 1, 1),
                                        timezones=st.just(timezone.utc)))


@pytest.mark.parametrize("spec", SPECS, ids=str)
@settings(max_examples=200, deadline=None)
@given(drawn=memory_stores(), query=_queries, k=st.integers(0, 8), now=_now)
def test_recall_invariants(spec, drawn, query, k, now):
    store, cid = drawn
    recaller = RECALLERS.build(spec)
    hits = check_recall(recaller, store, Query(query, cid, embedder=EMBEDDER, now=now), k)
    in_scope = len(store.entries(cid))
    if k and in_scope and strategy_name(recaller) in ("dense", "recency"):
        assert len(hits) == min(k, in_scope)  # dense-scored recallers rank every entry
    # A second query after no change reuses the cached indexes and gives the same answer.
    assert check_recall(recaller, store, Query(query, cid, embedder=EMBEDDER, now=now), k) == hits


@pytest.mark.parametrize("counter", [word_count, token_counter("gpt-4o-mini")], ids=["words", "bpe"])
@settings(max_examples=200, deadline=None)
@given(drawn=memory_stores(), budget=st.integers(-1, 80), data=st.data())
def test_render_within_budget_in_priority_order(counter, drawn, budget, data):
    store, cid = drawn
    entries = store.entries(cid)
    order = data.draw(st.permutations(entries)) if entries else []
    hits = [Hit(e, score=float(-i), rank=i) for i, e in enumerate(order)]
    text = render(hits, budget, counter)
    shown = check_render(text, hits, budget, counter)
    if hits and budget >= counter(render(hits, 10**9, counter)):
        assert shown == len(hits)  # everything fits: nothing is cut


def test_render_truncates_on_a_token_boundary_and_stops():
    from lyra_lab.memory import MemoryEntry

    t = datetime(2023, 5, 8, tzinfo=timezone.utc)
    a = MemoryEntry("a", "c", "turn", "short one", ("a",), start=t, end=t)
    b = MemoryEntry("b", "c", "turn", "a much longer turn " * 20, ("b",), start=t, end=t + timedelta(days=2))
    c = MemoryEntry("c", "c", "turn", "tiny", ("c",))
    count = token_counter("gpt-4o-mini")
    hits = [Hit(a, 3, 0), Hit(b, 2, 1), Hit(c, 1, 2)]
    text = render(hits, 40, count)
    lines = text.split("\n")
    assert lines[0] == "[2023-05-08] short one"
    assert lines[1].startswith("[2023-05-08..2023-05-10] a much longer turn") and lines[1].endswith(" …")
    assert len(lines) == 2  # "tiny" has lower priority than the cut hit: never shown
    assert 36 <= count(text) <= 40  # the cut fills the budget closely
    assert render(hits, 10**6, count).endswith("[undated] tiny")
