"""Which pipelines of a table contend: every one whose recaller is not a ceiling.

A ceiling (``recall.ceiling_names``: ``oracle``, told the gold evidence, and ``full_context``, given the
whole history) bounds what the strategies could reach; it is not one of them.  The headline and the
paired comparisons rank and test the contenders alone (a ceiling as "the best" would make every
strategy look worse, and each ceiling would add a comparison to Holm's family); the ceilings' own
section gives every contender's distance to them, and the frontier leaves them out as well.
"""

from __future__ import annotations

import pandas as pd


def ceiling_rows(frame: pd.DataFrame) -> pd.Series:
    """True where the row's recaller is a ceiling (all False without a ``recaller`` column)."""
    if "recaller" not in frame.columns:
        return pd.Series(False, index=frame.index)
    from lyra_lab.recall import ceiling_names

    return frame["recaller"].astype(str).isin(ceiling_names())


def contenders(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` without its ceilings' rows."""
    return rows[~ceiling_rows(rows)]


def ceiling_pipelines(rows: pd.DataFrame) -> frozenset[str]:
    """The ``pipeline`` values of ``rows``' ceilings: what leaves them out of a table that has no ``recaller``."""
    if "pipeline" not in rows.columns:
        return frozenset()
    return frozenset(rows.loc[ceiling_rows(rows), "pipeline"].astype(str))


def ceilings_apart(rows: pd.DataFrame) -> list[str]:
    """The ceiling recallers ``rows`` holds, in their registry's order (empty: none)."""
    if "recaller" not in rows.columns:
        return []
    from lyra_lab.recall import ceiling_names

    held = set(rows["recaller"].astype(str))
    return [name for name in ceiling_names() if name in held]


def ceiling_words(rows: pd.DataFrame) -> str:
    """What the ceilings of ``rows`` were given, as the report says it (one home for the sentence).

    ``full_context``'s budget is read from its rows: ``answer_room`` (the room the answerer's window
    left, per probe) and ``context_tokens`` (what its context held); rows written before the room
    existed (no ``answer_room``) were cut to the pipelines' own budget, and the sentence says so.
    """
    held = ceilings_apart(rows)
    parts = []
    if "oracle" in held:
        parts.append("`oracle`: the gold evidence alone (perfect retrieval), in the pipelines' context budget")
    if "full_context" in held:
        parts.append(f"`full_context`: {_full_context_words(rows)}")
    return "; ".join(parts) + "." if parts else ""


def _full_context_words(rows: pd.DataFrame) -> str:
    mine = rows[rows["recaller"].astype(str) == "full_context"]
    room = mine.loc[mine["metric"] == "answer_room", "value"].astype(float)
    tokens = mine.loc[mine["metric"] == "context_tokens", "value"].astype(float)
    if room.empty or tokens.empty:
        return "the whole history, newest kept, in the pipelines' context budget"
    budgets = sorted({int(b) for b in rows.get("pipeline.context_budget", pd.Series(dtype=float)).dropna()})
    theirs = f" (the others': {', '.join(f'{b:,}' for b in budgets)})" if budgets else ""
    return (f"the whole history up to the answerer's window, newest kept when it does not fit: a mean of "
            f"{tokens.mean():,.0f} context tokens a probe in a room of {room.mean():,.0f}{theirs}")
