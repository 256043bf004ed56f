"""Generating the synthetic corpus: sessions of filler with the planted facts, then the probes.

The public entry points are ``generate_synthetic`` (re-exported by
``lyra_lab.synthetic``) and the command line ``python -m lyra_lab.synthetic``
(``_cli``).

Determinism: every choice comes from ``random.Random`` seeded by the seed (one
stream per conversation), nothing reads the clock or iterates a set, so the
same arguments give the same bytes.
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import date, datetime, time, timedelta, timezone
from dataclasses import dataclass
from typing import Mapping, Sequence, TypedDict, Unpack

from lyra_lab._registry import ConfigError
from lyra_lab.corpus import Conversation, Corpus, Probe, Role, Session, Turn
from lyra_lab.synthetic import _facts as F
from lyra_lab.synthetic._plan import Plant, PlantCounts, ProbeDraft, plan_conversation
from lyra_lab.synthetic._templates import (
    CLOSERS_ASSISTANT, CLOSERS_USER, OPENERS_ASSISTANT, OPENERS_USER, SLOTS, TOPICS, Topic)

CATEGORIES: tuple[str, ...] = ("single_fact", "updated_fact", "temporal", "multi_hop", "abstention")
ABSTENTION_ANSWER = "not mentioned"
# The provenance label the committed datasets carry; it names where the generator lived when they
# were made, and stays so that the same seed still gives the same bytes.
SOURCE = "lyra_lab.corpus._synthetic"


class SyntheticOptions(TypedDict, total=False):
    """The keywords of ``generate_synthetic``: ``SyntheticShape``'s fields, each optional."""

    conversations: int
    months: int
    sessions: int
    exchanges: tuple[int, int]
    start: date | str
    single_facts: int
    updated_facts: int
    temporal: int
    multi_hop: int
    abstention: int


@dataclass(frozen=True)
class SyntheticShape:
    """The shape of a synthetic corpus; checked on construction.

    Attributes:
        conversations: independent users (``syn-0``, ``syn-1``…), each with its own facts.
        months: the span the sessions are spread over (30.44 days a month).
        sessions: sessions per conversation, one per distinct day.
        exchanges: (min, max) ordinary user/assistant exchanges per session, besides the
            greeting, planted facts and an occasional sign-off.
        start: the first possible session day (UTC), a date or ``"YYYY-MM-DD"``.
        single_facts: single-fact probes per conversation (see ``CATEGORIES``).
        updated_facts: probes per conversation about a fact that changes weeks later.
        temporal: probes per conversation about the date of an event.
        multi_hop: probes per conversation joining two sessions' facts.
        abstention: probes per conversation about things never mentioned.

    Raises:
        ConfigError: a parameter out of range, or more sessions than days in ``months``.
    """

    conversations: int = 2
    months: int = 4
    sessions: int = 16
    exchanges: tuple[int, int] = (2, 5)
    start: date | str = date(2024, 1, 8)
    single_facts: int = 10
    updated_facts: int = 4
    temporal: int = 5
    multi_hop: int = 3
    abstention: int = 6

    def __post_init__(self) -> None:
        _check(self)
        if isinstance(self.start, str):
            object.__setattr__(self, "start", self.first_day)  # parsed once: a bad date fails here
        if self.sessions > self.span_days:
            raise ConfigError(f"sessions={self.sessions} do not fit on distinct days in {self.months} month(s)")

    @property
    def first_day(self) -> date:
        """``start`` as a date."""
        if not isinstance(self.start, str):
            return self.start
        try:
            return date.fromisoformat(self.start)
        except ValueError:
            raise ConfigError(f"start must be a date like 2024-01-08, got {self.start!r}") from None

    @property
    def span_days(self) -> int:
        """The days the sessions are spread over."""
        return round(self.months * 30.44)

    @property
    def plant_counts(self) -> PlantCounts:
        """The planted categories' counts per conversation."""
        return PlantCounts(self.single_facts, self.updated_facts, self.temporal, self.multi_hop)


@dataclass
class _Chat:
    """One conversation being written: its random stream, id, user and exchange range, and the user lines used."""

    rng: random.Random
    cid: str
    user_name: str
    exchanges: tuple[int, int]
    seen: set[str]


def generate_synthetic(seed: int = 0, **options: Unpack[SyntheticOptions]) -> Corpus:
    """Generate a multi-month user/assistant chat corpus with planted facts and probes.

    Args:
        seed: the only source of randomness; the same arguments give an identical corpus.
        **options: ``SyntheticShape``'s fields (``conversations``, ``months``, ``sessions``,
            ``exchanges``, ``start`` and the probes per category).

    Returns:
        A Corpus named ``synthetic-seed<seed>`` whose probes are asked the day after
        each conversation's last session.

    Raises:
        ConfigError: a parameter out of range, or more planted facts than the sessions hold.
    """
    shape = SyntheticShape(**options)
    start, span_days, sessions = shape.first_day, shape.span_days, shape.sessions
    names = list(F.USER_NAMES)
    random.Random(seed).shuffle(names)  # then take a prefix: the first users never depend on the count
    convs: list[Conversation] = []
    probes: list[Probe] = []
    for index, user_name in enumerate(names[:shape.conversations]):
        # one stream per conversation: conversation i does not depend on how many follow it
        rng = random.Random(f"lyra-lab-synthetic:{seed}:{index}")
        cid = f"syn-{index}"
        days = sorted(rng.sample(range(span_days), sessions))
        starts = [datetime.combine(start + timedelta(days=d), time(rng.randint(8, 20), rng.randint(0, 59)),
                                   tzinfo=timezone.utc) for d in days]
        plants, drafts = plan_conversation(rng, starts, shape.plant_counts)
        chat = _Chat(rng, cid, user_name, shape.exchanges, set())
        conv_sessions = tuple(_session(chat, i + 1, starts[i], plants[i]) for i in range(sessions))
        conv = Conversation(id=cid, sessions=conv_sessions, title=f"{user_name} and {F.ASSISTANT_NAME}",
                            meta={"generator": SOURCE, "seed": seed, "user": user_name})
        drafts += _abstention_drafts(rng, conv, drafts, shape.abstention)
        asked_at = datetime.combine(starts[-1].date() + timedelta(days=1), time(12, 0), tzinfo=timezone.utc)
        probes += _probes(cid, drafts, asked_at)
        convs.append(conv)
    return Corpus(name=f"synthetic-seed{seed}", conversations=tuple(convs), probes=tuple(probes),
                  source=SOURCE, format="synthetic")


def _check(shape: SyntheticShape) -> None:
    """Refuse a shape out of range (one ``ConfigError`` naming the first bad field)."""
    conversations, months, sessions, exchanges = shape.conversations, shape.months, shape.sessions, shape.exchanges
    if not 1 <= conversations <= len(F.USER_NAMES):
        raise ConfigError(f"conversations must be 1..{len(F.USER_NAMES)}, got {conversations}")
    if months < 1:
        raise ConfigError(f"months must be >= 1, got {months}")
    if sessions < 2:
        raise ConfigError(f"sessions must be >= 2, got {sessions}")
    if len(exchanges) != 2 or not 0 <= exchanges[0] <= exchanges[1]:
        raise ConfigError(f"exchanges must be (min, max) with 0 <= min <= max, got {exchanges!r}")
    limits = {"single_facts": len(F.FACTS), "updated_facts": len(F.UPDATES), "temporal": len(F.EVENTS),
              "multi_hop": min(len(F.LINKS), len(F.RELATIONS)), "abstention": len(F.NEVER) + len(F.FACTS)}
    for name, limit in limits.items():
        value = getattr(shape, name)
        if not 0 <= value <= limit:
            raise ConfigError(f"{name} must be 0..{limit}, got {value}")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _filler(rng: random.Random, topics: Sequence[Topic], seen: set[str],
            slots: Mapping[str, Sequence[str]] = SLOTS) -> tuple[str, str, Topic]:
    """One ordinary exchange from the session's topics (their ``slots`` filled), avoiding user lines used before."""
    for _ in range(30):
        topic = rng.choice(topics)
        user, reply = rng.choice(topic.exchanges)
        fill = {slot: rng.choice(slots[slot]) for slot in topic.slots}
        line = _cap(user.format(**fill))
        if line not in seen:
            break
    seen.add(line)
    return line, _cap(reply.format(**fill)), topic


def _session(chat: _Chat, number: int, started: datetime, plants: list[Plant]) -> Session:
    """Greeting, ordinary exchanges with the planted ones at random places, maybe a sign-off."""
    rng, cid, user_name, exchanges, seen = chat.rng, chat.cid, chat.user_name, chat.exchanges, chat.seen
    topics = rng.sample(TOPICS, 2)  # a session drifts between two subjects at most
    fillers = [_filler(rng, topics, seen) for _ in range(rng.randint(*exchanges))]
    body: list[tuple[str, str, Plant | None]] = [(user, reply, None) for user, reply, _ in fillers]
    for plant in plants:
        body.insert(rng.randint(0, len(body)), (plant.user, plant.reply, plant))
    script: list[tuple[str, str, Plant | None]] = [(rng.choice(OPENERS_USER), rng.choice(OPENERS_ASSISTANT), None),
                                                   *body]
    if rng.random() < 0.6:
        script.append((rng.choice(CLOSERS_USER), rng.choice(CLOSERS_ASSISTANT), None))
    sid = f"{cid}:s{number:02d}"
    turns: list[Turn] = []
    clock = started
    for user, reply, placed in script:
        roles: tuple[tuple[Role, str], ...] = (("user", user), ("assistant", reply))
        for role, text in roles:
            tid = f"{sid}:t{len(turns) + 1:02d}"
            if placed is not None and role == "user":
                placed.turn_id = tid
            turns.append(Turn(id=tid, conversation_id=cid, session_id=sid, role=role, text=text,
                              timestamp=clock, speaker=user_name if role == "user" else F.ASSISTANT_NAME))
            # the assistant answers within seconds; the user takes a while to read and type
            clock += timedelta(seconds=rng.randint(4, 30) if role == "user" else rng.randint(25, 150))
    discussed = list(dict.fromkeys(topic.title for _, _, topic in fillers))  # first-use order
    return Session(id=sid, conversation_id=cid, turns=tuple(turns),
                   title=discussed[0] if discussed else "Catching up", started_at=started,
                   meta={"topics": discussed})


def mentions(text: str, term: str) -> bool:
    """Whether ``term`` occurs in ``text`` (case-insensitive substring: stricter than a word match)."""
    return term.lower() in text.lower()


def _abstention_drafts(rng: random.Random, conv: Conversation, drafts: list[ProbeDraft],
                       count: int) -> list[ProbeDraft]:
    """Questions whose key words occur nowhere in the conversation, so no turn answers them."""
    planted = {d.meta.get("fact_key") for d in drafts}
    candidates: list[tuple[str, tuple[str, ...], str | None]] = [(kind.questions[0], (*kind.terms, *(v.lower() for v in kind.values)), kind.key)
                  for kind in F.FACTS if kind.key not in planted]
    candidates += [(question, terms, None) for question, terms in F.NEVER]
    text = "\n".join(t.text for t in conv.turns())
    usable = [c for c in candidates if not any(mentions(text, term) for term in c[1])]
    if len(usable) < count:
        raise ConfigError(f"only {len(usable)} abstention questions are unmentioned in {conv.id}, "
                          f"{count} requested")
    return [ProbeDraft("abstention", question, ABSTENTION_ANSWER,
                       meta={"absent_terms": list(terms), **({"fact_key": key} if key else {})})
            for question, terms, key in rng.sample(usable, count)]


def _probes(cid: str, drafts: list[ProbeDraft], asked_at: datetime) -> list[Probe]:
    ordered = sorted(drafts, key=lambda d: CATEGORIES.index(d.category))  # stable: plan order kept
    probes = []
    for n, d in enumerate(ordered, start=1):
        meta = dict(d.meta)
        if d.superseded:
            meta["superseded"] = [p.rendered_id for p in d.superseded]
        probes.append(Probe(id=f"{cid}:q{n:02d}", conversation_id=cid, question=d.question, answer=d.answer,
                            evidence=tuple(p.rendered_id for p in d.evidence), category=d.category,
                            asked_at=asked_at, abstention=d.category == "abstention", meta=meta))
    return probes


def category_counts(corpus: Corpus) -> dict[str, int]:
    """Probes per category, in ``CATEGORIES`` order."""
    counts = Counter(p.category for p in corpus.probes)
    return {c: counts.get(c, 0) for c in CATEGORIES}
