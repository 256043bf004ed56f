"""What a planted corpus says about itself: probes per kind, the language planted text is in, its share.

``plant_probes`` (``_plant``) writes into each planted conversation's ``meta["planted"]``: the
planted sessions and turns, planted turns' share of the conversation's turns (and the
``max_share`` it was held to), the language planted text is in and the history's own, and a
warning when the two differ.  The functions here read that back; the report, ``view``, ``run``,
``compare`` and ``export`` show the warnings through them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from lyra_lab.corpus import Conversation, Corpus
from lyra_lab.synthetic._corpus import CATEGORIES
from lyra_lab.synthetic._language import NAMES, Language, detect_language
from lyra_lab.synthetic._plant_templates import PlantTemplates


def planting_warnings(corpus: Corpus, conversations: Iterable[str] | None = None) -> list[str]:
    """One line per conversation (of ``conversations``, default all) whose planted text is in another language."""
    out = []
    wanted = None if conversations is None else set(conversations)
    for conv in corpus.conversations:
        if wanted is not None and conv.id not in wanted:
            continue
        planted = conv.meta.get("planted")
        if isinstance(planted, dict) and planted.get("warning"):
            out.append(f"{conv.id}: {planted['warning']}")
    return out


def planted_share_warnings(corpus: Corpus) -> list[str]:
    """One line per conversation whose planted turns are more than its ``max_share`` even at one exchange a fact."""
    out = []
    for conv in corpus.conversations:
        planted = conv.meta.get("planted")
        if isinstance(planted, dict) and planted.get("max_share") and planted.get("share", 0) > planted["max_share"]:
            out.append(f"{conv.id}: planted turns are {planted['share']:.0%} of its turns, above the "
                       f"{planted['max_share']:.0%} share even with one exchange per planted fact: plant fewer "
                       "probes (--n) for planted text to stay a small part of your history")
    return out


@dataclass(frozen=True)
class Written:
    """The templates a conversation's planted text comes from, its history's language, planted turns' top share."""

    templates: PlantTemplates
    history: Language
    max_share: float | None

    def warning(self) -> str | None:
        if self.templates.language == self.history.code:
            return None
        planted = NAMES.get(self.templates.language, self.templates.language)
        if self.history.code == "und":
            said = "this history's language could not be told from its text (too little, or too mixed)"
        else:
            said = (f"this history is mostly {self.history.name} ({self.history.code}, {self.history.share:.0%} of "
                    f"its letters in {self.history.script.title()} script)")
        return (f"planted text is in {planted} but {said}: planted sessions stand out from your own turns by "
                "language alone, so these probes measure how well recall separates planted sessions from "
                "each other, not recall among your own turns")

    def meta(self) -> dict[str, Any]:
        warning = self.warning()
        return {"language": self.templates.language, "history_language": self.history.code,
                **({"warning": warning} if warning else {})}


def history_language(conv: Conversation) -> Language:
    """The main language of a conversation's real user turns (all its turns when it has no user turn)."""
    turns = [t for t in conv.turns() if not t.meta.get("planted")]
    users = [t.text for t in turns if t.role == "user"]
    return detect_language(users or [t.text for t in turns])


def planted_counts(corpus: Corpus) -> dict[str, int]:
    """Planted probes per category, in ``CATEGORIES`` order."""
    counts = Counter(p.category for p in corpus.probes if p.meta.get("planted"))
    return {c: counts.get(c, 0) for c in CATEGORIES}
