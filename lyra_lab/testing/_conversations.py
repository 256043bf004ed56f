r"""Hypothesis generators of conversations that stress memory strategies.

The conversations hold what real exports hold and naive code trips on: any
unicode (emoji, combining marks, right-to-left text, NUL, ``\u2028``, lone
``\r``), empty lines and empty turns, sometimes one huge line (a pasted
document), one-turn sessions, speakers with and without names, and aware UTC
timestamps that strictly increase — seconds apart within a session, hours to
weeks apart between sessions.  Examples stay small so ~200 of them run in
seconds.

>>> from hypothesis import given, settings
>>> @settings(max_examples=20, deadline=None)
... @given(conversations())
... def test(conversation):
...     assert all(s.turns for s in conversation.sessions)
>>> test()
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TypedDict, Unpack

from hypothesis import strategies as st

from lyra_lab.corpus import ROLES, Conversation, Session, Turn

SPEAKERS = (None, "Caroline", "Melanie", "Jürgen", "李雷", "Zoë 🙂", "أحمد", "o'Brien: jr")
_EPOCH = datetime(2020, 1, 1, tzinfo=timezone.utc)

# Lines without "\n" (lone "\r" and other separators are allowed on purpose).
_line = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\n"), max_size=40)
_word = st.text(st.characters(exclude_categories=["Cs", "Zl", "Zp", "Cc"]), min_size=1, max_size=9)


@st.composite
def turn_texts(draw, max_lines: int = 4) -> str:
    """A turn's text: a few unicode lines, some empty, sometimes leading/trailing newlines."""
    return "\n".join(draw(st.lists(_line, min_size=1, max_size=max_lines)))


@st.composite
def huge_lines(draw, min_chars: int = 300, max_chars: int = 2000) -> str:
    r"""One line (no ``"\n"`` or ``"\r"``) of ``min_chars``–``max_chars`` characters.

    Built by repeating a few drawn words, so it is cheap to generate however
    long it is, and has spaces to cut at (or none, when one word repeats).
    """
    words = draw(st.lists(_word, min_size=1, max_size=4))
    sep = draw(st.sampled_from([" ", "", "\t"]))
    target = draw(st.integers(min_chars, max_chars))
    unit = sep.join(words) + sep
    line = (unit * (target // len(unit) + 1))[:target]
    return line.replace("\r", " ")


@dataclass(frozen=True)
class ConversationShape:
    """What ``conversations`` draws.

    Attributes:
        min_sessions: the fewest sessions.
        max_sessions: the most sessions.
        max_turns_per_session: the most turns in one session (one-turn sessions are common).
        huge_line: put one huge line in one turn: True, False, or None to let hypothesis choose.
        huge_line_chars: the huge line's length range.
        timestamps: give every turn an aware UTC timestamp (strictly increasing).
    """

    min_sessions: int = 1
    max_sessions: int = 4
    max_turns_per_session: int = 6
    huge_line: bool | None = None
    huge_line_chars: tuple[int, int] = (300, 2000)
    timestamps: bool = True


class ConversationShapeOptions(TypedDict, total=False):
    """``ConversationShape``'s fields as keywords, each optional."""

    min_sessions: int
    max_sessions: int
    max_turns_per_session: int
    huge_line: bool | None
    huge_line_chars: tuple[int, int]
    timestamps: bool


@st.composite
def conversations(draw: st.DrawFn, conversation_id: str | None = None,
                  **options: Unpack[ConversationShapeOptions]) -> Conversation:
    """A ``Conversation`` of non-empty sessions of turns with unique LoCoMo-style ids (``D2:5``).

    Args:
        draw: hypothesis's draw function (``st.composite`` passes it).
        conversation_id: fixed id, or None to draw one.
        **options: ``ConversationShape``'s fields (how many sessions and turns, a huge line, timestamps).
    """
    shape = ConversationShape(**options)
    min_sessions, max_sessions, max_turns_per_session = shape.min_sessions, shape.max_sessions, \
        shape.max_turns_per_session
    huge_line, huge_line_chars, timestamps = shape.huge_line, shape.huge_line_chars, shape.timestamps
    cid = conversation_id or f"conv-{draw(st.integers(0, 999))}"
    n_sessions = draw(st.integers(min_sessions, max_sessions))
    sizes = [draw(st.integers(1, max_turns_per_session)) for _ in range(n_sessions)]
    clock = _EPOCH + timedelta(seconds=draw(st.integers(0, 5 * 365 * 86400)))
    speakers = draw(st.lists(st.sampled_from(SPEAKERS), min_size=2, max_size=2))
    sessions = []
    for s, size in enumerate(sizes):
        sid = f"{cid}/S{s + 1}"
        turns = []
        for i in range(size):
            if timestamps:
                gap = (st.integers(1, 3600) if i else
                       st.integers(3600, 21 * 86400) if s else st.integers(0, 60))
                clock += timedelta(seconds=draw(gap))
            role = draw(st.sampled_from(ROLES))
            turns.append(Turn(
                id=f"D{s + 1}:{i + 1}", conversation_id=cid, session_id=sid, role=role,
                text=draw(turn_texts()), timestamp=clock if timestamps else None,
                speaker=speakers[ROLES.index(role)],
            ))
        sessions.append(Session(sid, cid, tuple(turns), started_at=turns[0].timestamp))
    if sum(sizes) and (draw(st.booleans()) if huge_line is None else huge_line):
        s = draw(st.integers(0, n_sessions - 1))
        i = draw(st.integers(0, sizes[s] - 1))
        old = sessions[s].turns[i]
        line = draw(huge_lines(*huge_line_chars))
        before = draw(st.booleans())
        text = f"{line}\n{old.text}" if before else f"{old.text}\n{line}"
        turns = list(sessions[s].turns)
        turns[i] = Turn(old.id, cid, old.session_id, old.role, text, old.timestamp, old.speaker)
        sessions[s] = Session(sessions[s].id, cid, tuple(turns), started_at=sessions[s].started_at)
    return Conversation(cid, tuple(sessions))


def turns_strategy(allow_empty: bool = True, **kwargs) -> st.SearchStrategy[list[Turn]]:
    """The turns of a drawn conversation, in order (``kwargs`` go to ``conversations``).

    With ``allow_empty`` an empty list is drawn now and then (about one example
    in ten), because "no turns yet" is an input every strategy must take.
    """
    turns = conversations(**kwargs).map(lambda c: list(c.turns()))
    if not allow_empty:
        return turns
    return st.integers(0, 9).flatmap(lambda k: st.just([]) if k == 0 else turns)
