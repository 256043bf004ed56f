"""Planted facts without a pool that runs out: a phrasebook's templates filled from Faker's locale.

Every planted fact is about a person of its own (a name drawn from the language's
Faker locale, unique in the conversation and absent from the user's own turns), so
``count`` facts of every kind can be made for any ``count``: the question names the
person (``Where does Anouk Adam live?``) and nothing else answers it.  Values are the
locale's cities and companies, a date written the language's way, a first name, a
small number.  Facts made but not planted become abstention questions (a person
never mentioned).  Seeded: the same phrasebook, seed and count give the same kinds.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from lyra_lab.synthetic._facts import EventKind, FactKind, LinkKind, UpdateKind
from lyra_lab.synthetic._phrasebook import Phrasebook, Said, gendered
from lyra_lab.synthetic._plant_templates import FALLBACK, LANGUAGES, PlantTemplates

DOUBLE_PERIOD = re.compile(r"(?<!\.)\.\.(?!\.)")

if TYPE_CHECKING:
    from faker import Faker


@functools.cache
def _faker(locale: str) -> Faker:
    from faker import Faker  # a core dependency, imported on first planting only

    return Faker(locale)


class _People:
    """Names drawn from a locale, each new one unique, no substring of another, absent from ``avoid``."""

    def __init__(self, fake: Faker, book: Phrasebook, avoid: str):
        self.fake, self.book, self.avoid, self.names = fake, book, avoid.lower(), list[str]()

    def new(self) -> tuple[str, bool] | None:
        """A fresh (name, feminine); None when 200 draws in a row gave none (the locale's names are used up)."""
        for _ in range(200):
            feminine = self.fake.random.random() < 0.5
            first = self.fake.first_name_female() if feminine else self.fake.first_name_male()
            last = self.fake.last_name()
            name = f"{last}{first}" if self.book.family_first else f"{first} {last}"
            low = name.lower()
            if _clean(name) and low not in self.avoid and not any(low in n or n in low for n in self.names):
                self.names.append(low)
                return name, feminine
        return None

    def several(self, count: int) -> list[tuple[str, bool]]:
        """Up to ``count`` fresh (name, feminine), fewer when the locale's names run out."""
        out: list[tuple[str, bool]] = []
        while len(out) < count and (drawn := self.new()) is not None:
            out.append(drawn)
        return out


def _clean(text: str) -> bool:
    return "{" not in text and "}" not in text and bool(text.strip())


def _put(texts: tuple[str, ...], person: str, feminine: bool) -> tuple[str, ...]:
    return tuple(gendered(t, feminine).replace("{p}", person) for t in texts)


def faker_templates(book: Phrasebook, seed: str, count: int, avoid: str = "") -> PlantTemplates:
    """``book``'s templates with ``count`` facts of every kind, values from Faker's ``book.locale``.

    Args:
        book: the language's phrasebook.
        seed: seeds Faker (the same seed, the same facts).
        count: facts to make of each kind (single, updated, dated, two-session).
        avoid: the user's own text: no drawn name occurs in it.
    """
    fake = _faker(book.locale)
    fake.seed_instance(seed)
    people = _People(fake, book, avoid)

    def distinct(draw: Callable[[], str], n: int) -> list[str]:
        """Up to ``n`` distinct values (fewer when the locale has fewer)."""
        out: list[str] = []
        for _ in range(50 * n):
            value = draw()
            if _clean(value) and value not in out:
                out.append(value)
                if len(out) == n:
                    break
        return out

    def number() -> str:
        return str(fake.random_int(2, 6))

    def birthday() -> str:
        return book.date(fake.date_of_birth())

    def pet() -> str:
        return book.pet_name(fake.first_name())

    singles: list[tuple[str, Said, Callable[[], str]]] = [
        ("lives_in", book.lives_in, fake.city), ("works_at", book.works_at, fake.company),
        ("birthday", book.birthday, birthday), ("cat", book.cat, pet), ("children", book.children, number)]
    facts = []
    for i, (person, feminine) in enumerate(people.several(count)):
        key, said, draw = singles[i % len(singles)]
        if not (value := distinct(draw, 1)):
            continue
        facts.append(FactKind(f"{key}:{person}", tuple(value), _put(said.statements, person, feminine),
                              _put(said.questions, person, feminine), _put(said.replies, person, feminine),
                              (person.lower(),)))
    updates = []
    for i, (person, feminine) in enumerate(people.several(count)):
        key, changed, draw = (("moved", book.moved, fake.city), ("new_employer", book.new_employer, fake.company))[i % 2]
        if len(pair := distinct(draw, 2)) < 2:
            continue
        updates.append(UpdateKind(f"{key}:{person}", tuple(pair), _put(changed.statements, person, feminine),
                                  _put(changed.updates, person, feminine), _put(changed.questions, person, feminine),
                                  _put(changed.replies, person, feminine),
                                  _put(changed.update_replies, person, feminine)))
    events = []
    for i, (person, feminine) in enumerate(people.several(count)):
        happened = book.events[i % len(book.events)]
        events.append(EventKind(f"event{i % len(book.events)}:{person}", _put(happened.statements, person, feminine),
                                _put((happened.question,), person, feminine)[0],
                                _put(happened.replies, person, feminine)))
    relations, names, links = [], [], []
    for i, (company, (person, feminine)) in enumerate(zip(distinct(fake.company, count), people.several(count))):
        relations.append(gendered(book.relation, feminine).replace("{company}", company))
        names.append(person)
        key, told, draw = (("moving_to", book.moving_to, fake.city), ("adopted", book.adopted, pet))[i % 2]
        if value := distinct(draw, 1):
            links.append(LinkKind(f"{key}:{person}", tuple(value), told.statements, told.question, told.replies))
    return PlantTemplates(book.code, tuple(facts), tuple(updates), tuple(events), book.when, tuple(relations),
                          tuple(names), book.introductions, book.intro_replies, tuple(links), (), book.topics,
                          book.slots, book.title, functools.partial(_finish, book.finish))


def _finish(language: Callable[[str], str], text: str) -> str:
    """The language's ``finish``, after one period where a value ending in one closes a sentence (``S.A..``)."""
    return language(DOUBLE_PERIOD.sub(".", text))


def seed_of(rng: random.Random) -> str:
    """A Faker seed drawn from a conversation's random stream."""
    return f"{rng.getrandbits(64):016x}"


def templates_for(code: str, seed: str, count: int, avoid: str = "") -> PlantTemplates:
    """``count`` facts of every kind in language ``code`` (``FALLBACK`` when it has no phrasebook).

    ``avoid`` is the user's own text (no planted name occurs in it); ``seed`` seeds Faker.
    """
    return faker_templates(LANGUAGES.get(code) or LANGUAGES[FALLBACK], seed, count, avoid)
