"""The templates planted sessions are written from, one set per language: English and Korean.

A ``PlantTemplates`` holds everything ``plant_probes`` writes: the facts of each kind
(``_facts``), the ordinary chat that pads a planted session (``_templates``), the
relative-day phrases of dated events and the title of a planted session.  English
is the synthetic generator's own set; Korean (``_facts_ko``) is the same kinds
written in Korean.  ``templates_for(code)`` gives a language's set, or None.
"""

from __future__ import annotations

from dataclasses import dataclass

from lyra_lab.synthetic import _facts as F
from lyra_lab.synthetic import _facts_ko as KO
from lyra_lab.synthetic._facts import EventKind, FactKind, LinkKind, UpdateKind
from lyra_lab.synthetic._templates import SLOTS, TOPICS, Topic


@dataclass(frozen=True)
class PlantTemplates:
    """Every text a planted session can hold in one language (``language``: ISO 639-1)."""

    language: str
    facts: tuple[FactKind, ...]
    updates: tuple[UpdateKind, ...]
    events: tuple[EventKind, ...]
    when: tuple[tuple[str, int], ...]
    relations: tuple[str, ...]
    people: tuple[str, ...]
    introductions: tuple[str, ...]
    intro_replies: tuple[str, ...]
    links: tuple[LinkKind, ...]
    never: tuple[tuple[str, tuple[str, ...]], ...]
    topics: tuple[Topic, ...]
    slots: dict[str, tuple[str, ...]]
    session_title: str


ENGLISH = PlantTemplates("en", F.FACTS, F.UPDATES, F.EVENTS, F.WHEN, F.RELATIONS, F.PEOPLE, F.INTRODUCTIONS,
                         F.INTRO_REPLIES, F.LINKS, F.NEVER, TOPICS, SLOTS, "Catching up")
KOREAN = PlantTemplates("ko", KO.FACTS, KO.UPDATES, KO.EVENTS, KO.WHEN, KO.RELATIONS, KO.PEOPLE, KO.INTRODUCTIONS,
                        KO.INTRO_REPLIES, KO.LINKS, KO.NEVER, KO.TOPICS, KO.SLOTS, "근황 이야기")
TEMPLATES: dict[str, PlantTemplates] = {t.language: t for t in (ENGLISH, KOREAN)}


def templates_for(code: str) -> PlantTemplates | None:
    """The templates written in language ``code`` (``en``, ``ko``), or None when there are none."""
    return TEMPLATES.get(code)
