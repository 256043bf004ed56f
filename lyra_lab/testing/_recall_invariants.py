"""Invariant checks for recallers and context rendering, and a generator of memory stores.

Use them on your own recaller::

    from hypothesis import given, settings
    from lyra_lab.backends import HashingEmbedder
    from lyra_lab.testing import check_recall, memory_stores

    @settings(max_examples=200, deadline=None)
    @given(memory_stores(), st.text(max_size=30), st.integers(0, 8))
    def test_my_recaller(drawn, query, k):
        store, cid = drawn
        check_recall(MyRecaller(), store, Query(query, cid, embedder=HashingEmbedder()), k)
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable, Sequence

from hypothesis import strategies as st

from lyra_lab.memory import CONDENSED_KINDS, ELLIPSIS, MemoryEntry, MemoryStore, date_label, hit_line
from lyra_lab.recall import Hit, Query, Recaller
from lyra_lab.testing._chunk_invariants import InvariantViolation
from lyra_lab.testing._conversations import conversations


def _violation(detail: str, subject: object = "recall") -> InvariantViolation:
    invariant = "render" if subject == "render" else "recall"
    return InvariantViolation(subject, invariant, detail)


def check_hits(hits: Sequence[Hit], *, store: MemoryStore, conversation_id: str, k: int) -> None:
    """Check a recall's hits: at most ``k``, ranks 0..n-1, scores finite and non-increasing.

    Also no duplicate entries, and every entry current in ``store`` and inside ``conversation_id``.
    """
    if len(hits) > k:
        raise _violation(f"{len(hits)} hits for k={k}")
    ids = [h.entry.id for h in hits]
    if len(set(ids)) != len(ids):
        raise _violation(f"duplicate entries in hits: {ids}")
    for i, hit in enumerate(hits):
        if hit.rank != i:
            raise _violation(f"hit {i} has rank {hit.rank}")
        if not math.isfinite(hit.score):
            raise _violation(f"hit {i} ({hit.entry.id}) has score {hit.score}")
        if i and hit.score > hits[i - 1].score:
            raise _violation(f"hit {i} scores {hit.score} > hit {i - 1}'s {hits[i - 1].score}")
        if hit.entry.conversation_id != conversation_id:
            raise _violation(f"hit {hit.entry.id} is from conversation {hit.entry.conversation_id!r}")
        if hit.entry.id not in store or store.get(hit.entry.id) != hit.entry:
            raise _violation(f"hit {hit.entry.id} is not (or no longer) in the store")


def check_recall(recaller: Recaller, store: MemoryStore, query: Query, k: int) -> list[Hit]:
    """Run ``recaller`` and check its hits with ``check_hits``; also that the store is unchanged."""
    before = store.dumps()
    hits = list(recaller.recall(store, query, k))
    if store.dumps() != before:
        raise _violation("changed the memory store while recalling", recaller)
    check_hits(hits, store=store, conversation_id=query.conversation_id, k=k)
    return hits


def _squash(text: str) -> str:
    return " ".join(text.split())


def check_render(text: str, hits: Sequence[Hit], budget: int, count: Callable[[str], int]) -> int:
    """Check the block is within budget and a priority-order prefix of the hits' lines.

    Whole lines, then at most one truncated line marked ``" …"``. Returns whole hits shown.
    """
    if count(text) > max(budget, 0):
        raise _violation(f"rendered block has {count(text)} tokens > budget {budget}", "render")
    shown, pos = 0, 0
    for hit in hits:
        piece = ("\n" if shown else "") + hit_line(hit.entry)
        end = pos + len(piece)
        if text.startswith(piece, pos) and (end == len(text) or text[end] == "\n"):
            shown, pos = shown + 1, end
        else:
            break
    rest = text[pos:]
    if shown and rest:
        if not rest.startswith("\n"):
            raise _violation(f"no line break after hit {shown - 1}: {rest[:60]!r}", "render")
        rest = rest[1:]
    if rest:
        if shown == len(hits):
            raise _violation(f"unexpected text after the last hit: {rest[:60]!r}", "render")
        entry = hits[shown].entry
        head = f"[{date_label(entry)}] "
        if not (rest.startswith(head) and rest.endswith(ELLIPSIS)):
            raise _violation(f"text after hit {shown} is not a truncation of hit {shown}: {rest[:60]!r}", "render")
        body = rest[len(head):-len(ELLIPSIS)]
        if not body.strip() or not _squash(entry.text).startswith(_squash(body)):
            raise _violation(f"truncated hit {shown} is not a prefix of its text: {body[:60]!r}", "render")
    return shown


@st.composite
def memory_stores(draw, n_conversations: int = 3, condensed: bool = True) -> tuple[MemoryStore, str]:
    """``(store, conversation_id)``: raw turns of a few drawn conversations and some condensed entries.

    The condensed entries (digests, gists, summaries, facts) cover random turns; a random removal or
    two lets indexes meet a store with history.
    """
    convs = [draw(conversations(conversation_id=f"c{i}", max_sessions=3, max_turns_per_session=4,
                                huge_line=False)) for i in range(draw(st.integers(1, n_conversations)))]
    # Source turn ids (LoCoMo's "D1:3") repeat across conversations; store ids must not.
    entries = [replace(MemoryEntry.from_turn(t), id=f"turn:{t.conversation_id}:{t.id}")
               for c in convs for t in c.turns()]
    if condensed:
        for j in range(draw(st.integers(0, 4))):
            sources = draw(st.lists(st.sampled_from(entries), min_size=1, max_size=4, unique_by=lambda e: e.id))
            base = sources[0]
            same = [e for e in sources if e.conversation_id == base.conversation_id]
            entries.append(MemoryEntry(
                id=f"cond:{j}", conversation_id=base.conversation_id, kind=draw(st.sampled_from(CONDENSED_KINDS)),
                text=" ".join(e.text for e in same), turn_ids=tuple(t for e in same for t in e.turn_ids),
                session_ids=tuple(sorted({s for e in same for s in e.session_ids})),
                start=min((e.start for e in same if e.start), default=None),
                end=max((e.end for e in same if e.end), default=None), level=1,
            ))
    store = MemoryStore()
    split = draw(st.integers(0, len(entries)))
    store.add(entries[:split])  # two batches: an index built in between must catch up
    store.add(entries[split:])
    removable = [e.id for e in entries]
    doomed = draw(st.lists(st.sampled_from(removable), max_size=2, unique=True)) if removable else []
    store.apply(remove=doomed)
    return store, draw(st.sampled_from([c.id for c in convs]))
