"""Recency-weighted dense recall: similarity times an exponential decay on the entry's age."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lyra_lab.corpus import as_utc
from lyra_lab.memory import MemoryStore
from lyra_lab.recall._base import RECALLERS, Scored
from lyra_lab.recall._dense import CosineRecaller
from lyra_lab.recall._types import Query
from lyra_lab._params import param

DAY_S = 86_400.0


def decay(age_days: np.ndarray | float, half_life_days: float) -> np.ndarray | float:
    """``0.5 ** (age / half_life)``; negative ages (entries after ``now``) count as 0.

    >>> float(decay(30.0, 30.0))
    0.5
    """
    return 0.5 ** (np.maximum(age_days, 0.0) / half_life_days)


@RECALLERS.register("recency")
@dataclass(frozen=True)
class Recency(CosineRecaller):
    """Dense similarity × ``0.5 ** (age_days / half_life_days)``.

    The similarity is the cosine mapped to [0, 1] (``(1 + cos) / 2``) so that
    decay always *lowers* a score (a raw negative cosine would rise as it
    decays).  Age is ``now - entry.end`` on the replay clock; ``now=None``
    means the conversation's latest entry end.  Undated entries are not decayed.
    """

    half_life_days: float = param(30.0, gt=0, doc="the age in days at which a score is halved.")

    def ranking(self, store: MemoryStore, query: Query, k: int) -> Scored:
        """The ``k`` best entries by decayed similarity, best first."""
        index, rows, cosine = self.cosines(store, query)
        ends = index.ends(rows)
        if query.now is not None:
            now_s = as_utc(query.now).timestamp()
        else:
            dated = ends[~np.isnan(ends)]
            now_s = float(dated.max()) if len(dated) else math.nan
        age_days = np.where(np.isnan(ends), 0.0, (now_s - ends) / DAY_S)
        scores = (1.0 + cosine) / 2.0 * decay(np.nan_to_num(age_days), self.half_life_days)
        return index.top(rows, scores, k)
