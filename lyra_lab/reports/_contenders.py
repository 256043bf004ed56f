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
