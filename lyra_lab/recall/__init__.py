"""Recall strategies over one conversation's memory, and the context block they feed a model.

>>> sorted(RECALLERS.names())
['bm25', 'dense', 'hybrid', 'recency', 'tiered']
>>> RECALLERS.build({"name": "hybrid", "method": "weighted", "weight": 0.7})
Hybrid(method='weighted', rrf_k=60, weight=0.7, candidates=50)
"""

from lyra_lab.recall._base import RECALLERS
from lyra_lab.recall._bm25 import Bm25, bm25_index
from lyra_lab.recall._dense import Dense
from lyra_lab.recall._hybrid import Hybrid, rrf_fuse, weighted_fuse
from lyra_lab.recall._index import DenseIndex, dense_index
from lyra_lab.recall._recency import Recency, decay
from lyra_lab.recall._render import date_label, render
from lyra_lab.recall._tiered import Tiered
from lyra_lab.recall._types import Hit, Recaller

__all__ = [
    "Bm25",
    "Dense",
    "DenseIndex",
    "Hit",
    "Hybrid",
    "RECALLERS",
    "Recaller",
    "Recency",
    "Tiered",
    "bm25_index",
    "date_label",
    "decay",
    "dense_index",
    "render",
    "rrf_fuse",
    "weighted_fuse",
]
