"""Synthetic conversations with planted facts, and probes planted into a user's own history.

``generate_synthetic(seed)``: a seeded companion chat over months (recipes, trips,
work stress…) between a user and the assistant "Lyra", with facts planted in
user turns: static facts stated once, facts that change weeks later, dated
events, two-session facts about a person introduced earlier, and questions about
things never mentioned.  Every probe knows its evidence turn ids, so recall can
be scored at turn level.  The dataset card is ``datasets/README.md``; the
committed dataset is regenerated with
``python -m lyra_lab.synthetic --seed 0 --out datasets/synthetic_small.jsonl``.

``plant_probes(corpus, n, kinds, seed, language)``: the same kinds of facts inserted as new
sessions into the gaps of a real corpus (an export), with probes that point at
them, written in the history's main language where templates exist (English,
Korean); ``planted_counts`` counts a corpus's planted probes by kind and
``planting_warnings`` says where planted text is in another language than the history.

It builds on the data model of ``lyra_lab.corpus`` and sits above it.
"""

from lyra_lab.synthetic._corpus import ABSTENTION_ANSWER, CATEGORIES, category_counts, generate_synthetic
from lyra_lab.synthetic._plant import plant_probes, planted_counts, planting_warnings

__all__ = [
    "ABSTENTION_ANSWER",
    "CATEGORIES",
    "category_counts",
    "generate_synthetic",
    "plant_probes",
    "planted_counts",
    "planting_warnings",
]
