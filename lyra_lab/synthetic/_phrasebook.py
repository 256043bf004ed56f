"""What one language's planted sessions say: sentence templates, written once per language.

A ``Phrasebook`` holds the sentences of every planted kind (a fact about a person,
a fact that changes, a dated event, a person introduced in one session and told
about in another) with slots that ``_faker_kinds`` fills from Faker's locale of that
language: ``{p}`` a person's name, ``{v}`` a value (a city, a company, a date, a
name, a number), ``{old}``/``{new}`` an updated value, ``{when}`` a relative day,
``{rel}``/``{name}`` the introduced person.  Grammar the slots cannot know is
written in the templates themselves:

- **gender**: ``‹masculine|feminine›`` picks by the person's gender (French
  ``Mon ami‹|e›``, German ``Mein‹|e› Kolleg‹e|in›``), chosen when the name is drawn;
- anything that depends on the filled-in word's sound (Korean particles after a
  final consonant) is the phrasebook's ``finish``, run over every planted line.

Each language's phrasebook lives in its own module (``_lang_fr`` …); the list of
languages is ``_plant_templates.LANGUAGES``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from lyra_lab.synthetic._templates import Topic

GENDERED = re.compile(r"‹([^|›]*)\|([^›]*)›")


def same(text: str) -> str:
    """The text as it is (a phrasebook without sound-dependent grammar)."""
    return text


def gendered(text: str, feminine: bool) -> str:
    """``text`` with every ``‹m|f›`` marker resolved for a masculine or feminine person."""
    return GENDERED.sub(lambda m: m.group(2 if feminine else 1), text)


@dataclass(frozen=True)
class Said:
    """A fact about a person, stated once: ``{p}`` and ``{v}`` in statements, ``{p}`` in questions."""

    statements: tuple[str, ...]
    questions: tuple[str, ...]
    replies: tuple[str, ...]  # never repeat the value: the evidence is the user's turn alone


@dataclass(frozen=True)
class Changed:
    """A fact about a person stated, then changed weeks later (``{old}``, ``{new}`` in updates)."""

    statements: tuple[str, ...]
    updates: tuple[str, ...]
    questions: tuple[str, ...]
    replies: tuple[str, ...]
    update_replies: tuple[str, ...]


@dataclass(frozen=True)
class Happened:
    """Something done with a person on a day: ``{p}`` and ``{when}`` (a relative day) in statements."""

    statements: tuple[str, ...]
    question: str
    replies: tuple[str, ...]


@dataclass(frozen=True)
class Told:
    """The second half of a two-session fact: ``{name}`` gets ``{v}``; the question names only ``{rel}``."""

    statements: tuple[str, ...]
    question: str
    replies: tuple[str, ...]


@dataclass(frozen=True)
class Phrasebook:
    """Every sentence a planted session can hold in one language (``code``: ISO 639-1).

    ``locale`` is the Faker locale the names, places, companies and dates come from;
    ``relation`` (``{company}``, gender markers) names the person a two-session fact is
    about, possessive included (``my colleague at {company}``), as introductions and the
    link question use it; ``family_first`` writes names family name first, with no space.
    """

    code: str
    locale: str
    title: str
    date: Callable[[date], str]  # a birthday as the language writes it ("12 octobre")
    lives_in: Said
    works_at: Said
    birthday: Said
    cat: Said
    children: Said
    moved: Changed
    new_employer: Changed
    events: tuple[Happened, ...]
    moving_to: Told
    adopted: Told
    relation: str
    introductions: tuple[str, ...]  # {rel}, {name}: no gender marker (the relation carries it)
    intro_replies: tuple[str, ...]
    when: tuple[tuple[str, int], ...]  # (phrase, days before the session day)
    topics: tuple[Topic, ...]
    slots: dict[str, tuple[str, ...]]
    family_first: bool = False
    finish: Callable[[str], str] = same
    pet_name: Callable[[str], str] = same  # a pet's name made from a drawn first name
