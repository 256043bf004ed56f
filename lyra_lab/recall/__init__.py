"""Recall strategies over one conversation's memory, and the context block they feed a model.

``oracle`` and ``full_context`` are ceilings to set beside them (``_ceilings``), not strategies.

>>> sorted(RECALLERS.names())
['bm25', 'dense', 'dense_ann', 'full_context', 'hybrid', 'oracle', 'recency', 'reference', 'tiered']
>>> RECALLERS.build({"name": "hybrid", "method": "weighted", "weight": 0.7})
Hybrid(method='weighted', rrf_k=60, weight=0.7, candidates=50)
"""

from lyra_lab._moved import moved_names
from lyra_lab.memory import date_label
from lyra_lab.recall._ann import AnnIndex, DenseAnn, ann_index
from lyra_lab.recall._base import RECALLERS, BaseRecaller, render
from lyra_lab.recall._bm25 import Bm25, Bm25Index, Tokenizer, bm25_index
from lyra_lab.recall._ceilings import FullContext, Oracle, ceiling_names
from lyra_lab.recall._dense import Dense
from lyra_lab.recall._fusion import fuse, normalize, rrf_scores
from lyra_lab.recall._hybrid import Hybrid, rrf_fuse, weighted_fuse
from lyra_lab.recall._index import DenseIndex, dense_index
from lyra_lab.recall._keys import KeyedView, key_texts, keyed_view
from lyra_lab.recall._ranking import Ranking
from lyra_lab.recall._recency import Recency, decay
from lyra_lab.recall._reference import Reference
from lyra_lab.recall._tiered import Tiered
from lyra_lab.recall._types import Hit, Query, Recaller
from lyra_lab.recall._when import Span, closeness, named_spans

__all__ = [
    "RECALLERS",
    "AnnIndex",
    "BaseRecaller",
    "Bm25",
    "Bm25Index",
    "Dense",
    "DenseAnn",
    "DenseIndex",
    "FullContext",
    "Hit",
    "Hybrid",
    "KeyedView",
    "Oracle",
    "Query",
    "Ranking",
    "Recaller",
    "Recency",
    "Reference",
    "Span",
    "Tiered",
    "Tokenizer",
    "ann_index",
    "bm25_index",
    "ceiling_names",
    "closeness",
    "date_label",
    "decay",
    "dense_index",
    "fuse",
    "key_texts",
    "keyed_view",
    "named_spans",
    "normalize",
    "render",
    "rrf_fuse",
    "rrf_scores",
    "weighted_fuse",
]

# names that moved away keep importing from here for one release, with a DeprecationWarning (lyra_lab._moved)
__getattr__ = moved_names(__name__)
