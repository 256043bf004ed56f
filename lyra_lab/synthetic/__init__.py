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
them, written in the history's main language where a phrasebook exists (``PLANT_LANGUAGES``:
English, Korean, French, Spanish, German, Portuguese, Italian, Japanese, Chinese), names,
places and dates from Faker's locale of that language; planted turns stay at most ``MAX_SHARE``
of a conversation's turns where they can.  ``planted_counts`` counts a corpus's planted probes by
kind, ``planting_warnings`` says where planted text is in another language than the history and
``planted_share_warnings`` where planted turns are more than their share.

It builds on the data model of ``lyra_lab.corpus`` and sits above it.
"""

from lyra_lab.synthetic._corpus import ABSTENTION_ANSWER, CATEGORIES, category_counts, generate_synthetic
from lyra_lab.synthetic._plant import MAX_SHARE, plant_probes
from lyra_lab.synthetic._plant_notes import planted_counts, planted_share_warnings, planting_warnings
from lyra_lab.synthetic._plant_templates import LANGUAGES

PLANT_LANGUAGES: tuple[str, ...] = tuple(LANGUAGES)  # ISO 639-1 codes planted text can be written in

__all__ = [
    "ABSTENTION_ANSWER",
    "CATEGORIES",
    "MAX_SHARE",
    "PLANT_LANGUAGES",
    "category_counts",
    "generate_synthetic",
    "plant_probes",
    "planted_counts",
    "planted_share_warnings",
    "planting_warnings",
]
