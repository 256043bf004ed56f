"""Each session position's model work over a corpus (turns, tokens read): what a first look is sized from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from lyra_lab.corpus import Conversation


@dataclass(frozen=True)
class SessionWork:
    """The n-th session of every conversation, together: its turns and the tokens a model reads of them."""

    turns: int
    tokens: int



def session_work(conversations: Sequence[Conversation], count: Callable[[str], int],
                 window: int | None) -> tuple[SessionWork, ...]:
    """Each session position's work over ``conversations`` (sessions with turns, as ``max_sessions`` keeps them).

    Args:
        conversations: the selected corpus's conversations.
        count: a token counter.
        window: the tokens of a text an embedder reads (None: all); a text is counted up to it.
    """
    turns: list[int] = []
    tokens: list[int] = []
    for conv in conversations:
        for i, session in enumerate(s for s in conv.sessions if s.turns):
            if i == len(turns):
                turns.append(0)
                tokens.append(0)
            turns[i] += len(session.turns)
            for turn in session.turns:
                text = turn.text if window is None else turn.text[: 8 * window]  # a window's worth, no more
                n = count(text)
                tokens[i] += n if window is None else min(n, window)
    return tuple(SessionWork(t, n) for t, n in zip(turns, tokens))
