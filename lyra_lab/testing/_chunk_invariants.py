r"""``check_chunker``: the invariants every chunker must keep, as one call for users' tests.

>>> from lyra_lab.chunking import LineBudgetChunker
>>> len(check_chunker(LineBudgetChunker(max_chars=10), "a\nbb\nccc\n"))
1
"""

from __future__ import annotations

from itertools import accumulate
from typing import Callable, Protocol, Sequence, runtime_checkable

from lyra_lab.chunking import Budget, Chunk, Chunker, Transcript, render_turn
from lyra_lab.corpus import Turn


@runtime_checkable
class BudgetedChunker(Protocol):
    """A chunker that states its size promise (every built-in chunker does)."""

    def budget(self) -> Budget: ...


class InvariantViolation(AssertionError):
    """A chunker broke an invariant; the message names the chunker, the invariant and the place."""

    def __init__(self, chunker: object, invariant: str, detail: str):
        self.chunker = chunker
        self.invariant = invariant
        self.detail = detail
        super().__init__(f"{chunker!r} broke {invariant!r}: {detail}")


def check_chunker(
    chunker: Chunker,
    turns: Sequence[Turn] | str,
    *,
    budget: Budget | None = None,
    render: Callable[[Turn], str] = render_turn,
    check_text_input: bool = True,
) -> list[Chunk]:
    """Chunk ``turns`` and check every invariant; return the chunks.

    Checked: the result is deterministic (same input, equal output); chunks
    are ``Chunk``s indexed 0..n-1; none is empty (nor is its new, non-overlap
    part); each declared overlap really repeats the text just before the
    chunk's new part; concatenation minus overlaps restores the rendered
    input exactly (hence order is kept); each chunk's ``turn_ids`` are exactly
    the turns with characters in its text, in order (so their union covers
    every turn, and a turn split or overlapped across chunks appears in a
    contiguous run of them); session ids and time span agree with those
    turns; and each chunk is within ``budget`` unless it is one indivisible
    unit.  With ``check_text_input``, ``chunk(rendered_text)`` is checked too
    (same invariants, no turn ids).

    Args:
        chunker: any object with ``chunk(turns | text) -> list[Chunk]``.
        turns: the input (turns, or raw text).
        budget: the size promise; by default ``chunker.budget()`` if it has one.
        render: how the chunker renders one turn (the canonical ``render_turn``).
        check_text_input: also chunk the rendered text as a str.

    Raises:
        InvariantViolation: naming the invariant and the first place it fails.
    """
    if budget is None and isinstance(chunker, BudgetedChunker):
        budget = chunker.budget()
    transcript = _transcript(turns, render)
    chunks = _check_one(chunker, turns, transcript, budget)
    if check_text_input and not isinstance(turns, str):
        _check_one(chunker, transcript.text, Transcript.of(transcript.text), budget)
    return chunks


def _transcript(turns: Sequence[Turn] | str, render: Callable[[Turn], str]) -> Transcript:
    if isinstance(turns, str):
        return Transcript.of(turns)
    pieces = [render(t) for t in turns]
    starts = tuple(accumulate((len(p) for p in pieces[:-1]), initial=0)) if pieces else ()
    return Transcript("".join(pieces), tuple(turns), starts)


def _check_one(chunker, source, transcript: Transcript, budget: Budget | None) -> list[Chunk]:
    def fail(invariant: str, detail: str) -> None:
        raise InvariantViolation(chunker, invariant, detail)

    chunks = chunker.chunk(source)
    if chunker.chunk(source) != chunks:
        fail("deterministic", "chunking the same input twice gave different chunks")
    if not isinstance(chunks, list) or not all(isinstance(c, Chunk) for c in chunks):
        fail("returns list[Chunk]", f"got {type(chunks).__name__} of "
             f"{sorted({type(c).__name__ for c in chunks})}")
    text = transcript.text
    pos = 0  # where the next chunk's new text must start
    for i, chunk in enumerate(chunks):
        where = f"chunk {i}"
        if chunk.index != i:
            fail("indexed in order", f"{where} has index {chunk.index}")
        if not 0 <= chunk.overlap_chars < len(chunk.text):
            fail("no empty chunk", f"{where}: {len(chunk.text)} chars with overlap_chars="
                 f"{chunk.overlap_chars} leaves no new text")
        if i == 0 and chunk.overlap_chars:
            fail("overlap only repeats earlier text", f"the first chunk declares overlap_chars="
                 f"{chunk.overlap_chars}")
        start = pos - chunk.overlap_chars
        if start < 0 or text[start:pos] != chunk.text[:chunk.overlap_chars]:
            fail("overlap only repeats earlier text", f"{where}: its first {chunk.overlap_chars} "
                 f"chars {chunk.text[:chunk.overlap_chars][:60]!r} are not the text just before it")
        new = chunk.text[chunk.overlap_chars:]
        if text[pos:pos + len(new)] != new:
            offset = pos + next((k for k, (a, b) in enumerate(zip(new, text[pos:])) if a != b),
                                min(len(new), len(text) - pos))
            fail("concatenation restores the input", f"{where} differs from the input at offset "
                 f"{offset}: chunk has {new[offset - pos:][:40]!r}, input has {text[offset:][:40]!r}")
        _check_provenance(fail, where, chunk, transcript.turns_in(start, pos + len(new)))
        pos += len(new)
    if pos != len(text):
        fail("concatenation restores the input", f"chunks end at offset {pos} of {len(text)}: "
             f"{text[pos:][:60]!r} is missing")
    _check_turn_runs(fail, chunks, transcript)
    if budget is not None:
        problems = budget.violations(chunks)
        if problems:
            fail(f"within budget ({budget.limit} {budget.unit})", problems[0])
    return chunks


def _check_provenance(fail, where: str, chunk: Chunk, turns: tuple[Turn, ...]) -> None:
    ids = tuple(t.id for t in turns)
    if chunk.turn_ids != ids:
        fail("turn_ids are the turns in the chunk", f"{where} lists {chunk.turn_ids!r}, "
             f"its text holds {ids!r}")
    sessions = tuple(dict.fromkeys(t.session_id for t in turns))
    if chunk.session_ids != sessions:
        fail("session_ids are the sessions in the chunk", f"{where} lists {chunk.session_ids!r}, "
             f"its turns are in {sessions!r}")
    stamps = [t.timestamp for t in turns if t.timestamp is not None]
    span = (min(stamps), max(stamps)) if stamps else (None, None)
    if (chunk.start, chunk.end) != span:
        fail("start/end span the chunk's turns", f"{where} spans {chunk.start}..{chunk.end}, "
             f"its turns span {span[0]}..{span[1]}")


def _check_turn_runs(fail, chunks: list[Chunk], transcript: Transcript) -> None:
    seen: dict[str, list[int]] = {}
    for chunk in chunks:
        for turn_id in dict.fromkeys(chunk.turn_ids):
            seen.setdefault(turn_id, []).append(chunk.index)
    missing = [t.id for t in transcript.turns if t.id not in seen]
    if missing:
        fail("every turn in some chunk", f"turns {missing[:5]!r} are in no chunk")
    for turn_id, indexes in seen.items():
        if indexes != list(range(indexes[0], indexes[0] + len(indexes))):
            fail("each turn's chunks are contiguous", f"turn {turn_id!r} is in chunks {indexes}")
