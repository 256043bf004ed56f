r"""The canonical transcript text that every chunker splits.

One turn renders as ``"[2023-05-08 13:56] Caroline: text\n"``: an optional
timestamp (minute precision, UTC), the speaker (or the role when the source
names none), and the text with line breaks normalised to ``"\n"`` and
trailing ones dropped, so that every turn ends with exactly one ``"\n"``.
Every character of the transcript therefore belongs to exactly one turn, and
``turn_spans`` maps a character offset back to its turn exactly.

>>> from datetime import datetime, timezone
>>> from lyra_lab.corpus import Conversation, Session, Turn
>>> when = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
>>> t = Turn("1", "c", "s", "user", "hi\r\nthere\n", when, "Caroline")
>>> render_turn(t)
'[2023-05-08 13:56] Caroline: hi\nthere\n'
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Sequence

from lyra_lab.corpus import Conversation, Session, Turn


def render_turn(turn: Turn) -> str:
    r"""One turn as transcript text, ending with exactly one ``"\n"``."""
    # Normalise CR/CRLF so that "\n" is the only line break a chunker needs to know.
    body = turn.text.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")
    speaker = turn.speaker or turn.role
    if turn.timestamp is None:
        return f"{speaker}: {body}\n"
    return f"[{turn.timestamp:%Y-%m-%d %H:%M}] {speaker}: {body}\n"


def render_turns(turns: Sequence[Turn]) -> str:
    """The transcript of ``turns`` in the order given (``""`` for no turns)."""
    return "".join(render_turn(t) for t in turns)


def split_lines(text: str) -> list[str]:
    r"""``text`` cut after every ``"\n"``; ``"".join`` of the result is ``text``.

    Only ``"\n"`` counts as a line break (unlike ``str.splitlines``, which also
    breaks on form feeds, ``\u2028`` and friends, and would make lines that do
    not end where the transcript says).
    """
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


@dataclass(frozen=True)
class Transcript:
    """Rendered text plus the character span of each turn in it.

    Attributes:
        text: the rendered transcript (or the raw text a caller passed).
        turns: the turns, in transcript order (empty for raw text).
        starts: ``starts[i]`` is the offset where ``turns[i]`` begins; turn i
            ends where turn i+1 begins (or at ``len(text)``).
    """

    text: str
    turns: tuple[Turn, ...]
    starts: tuple[int, ...]

    @classmethod
    def of(cls, source: Sequence[Turn] | str) -> "Transcript":
        """The transcript of a turn sequence (or a Session/Conversation), or raw text taken as is."""
        if isinstance(source, str):
            return cls(source, (), ())
        if isinstance(source, Conversation):
            source = list(source.turns())
        elif isinstance(source, Session):
            source = source.turns
        turns = tuple(source)
        for position, turn in enumerate(turns):
            if not isinstance(turn, Turn):
                raise TypeError(f"chunk() takes a str or a sequence of Turn; item {position} is "
                                f"{type(turn).__name__}")
        pieces = [render_turn(t) for t in turns]
        starts, offset = [], 0
        for piece in pieces:
            starts.append(offset)
            offset += len(piece)
        return cls("".join(pieces), turns, tuple(starts))

    def turns_in(self, start: int, end: int) -> tuple[Turn, ...]:
        """The turns with at least one character in ``text[start:end]``, in order."""
        if start >= end or not self.turns:
            return ()
        first = bisect_right(self.starts, start) - 1
        last = bisect_right(self.starts, end - 1) - 1
        return self.turns[max(first, 0): last + 1]

    def turn_boundaries(self) -> list[int]:
        """Offsets where a turn starts (0 included), or line starts for raw text."""
        if self.turns:
            return list(self.starts)
        offsets, offset = [], 0
        for line in split_lines(self.text):
            offsets.append(offset)
            offset += len(line)
        return offsets
