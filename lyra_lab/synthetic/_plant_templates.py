"""The languages planted sessions are written in, and the templates one conversation is planted from.

``LANGUAGES`` is the one list of languages ``plant_probes`` writes (ISO 639-1 code →
its phrasebook, one module per language: ``_lang_en``, ``_lang_ko``, …); the plant
command's ``--language`` choices, the docs and the tests read it.  A ``PlantTemplates``
holds everything one conversation's planted text is made of: facts of each kind
(made by ``_faker_kinds`` from the phrasebook and Faker's locale, as many as asked),
the ordinary chat that pads a planted session, the relative-day phrases of dated
events, the title of a planted session and the phrasebook's ``finish``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lyra_lab.synthetic import _lang_de, _lang_en, _lang_es, _lang_fr, _lang_it, _lang_ja, _lang_ko, _lang_pt, _lang_zh
from lyra_lab.synthetic._facts import EventKind, FactKind, LinkKind, UpdateKind
from lyra_lab.synthetic._phrasebook import Phrasebook, same
from lyra_lab.synthetic._templates import Topic

LANGUAGES: dict[str, Phrasebook] = {b.code: b for b in (
    _lang_en.BOOK, _lang_ko.BOOK, _lang_fr.BOOK, _lang_es.BOOK, _lang_de.BOOK, _lang_pt.BOOK, _lang_it.BOOK,
    _lang_ja.BOOK, _lang_zh.BOOK)}
FALLBACK = "en"  # the language of a history no phrasebook is written in


@dataclass(frozen=True)
class PlantTemplates:
    """Every text one conversation's planted sessions can hold, in one language (``language``: ISO 639-1).

    ``relations[i]`` names the person ``people[i]`` (their gender agrees); ``finish`` runs over
    every planted line and question (grammar that depends on a filled-in word's sound).
    """

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
    finish: Callable[[str], str] = same


def phrasebook_for(code: str) -> Phrasebook | None:
    """The phrasebook of language ``code`` (``fr``), or None when planted text cannot be written in it."""
    return LANGUAGES.get(code)
