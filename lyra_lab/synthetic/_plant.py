"""Planted probes: LongMemEval's construction on a user's own history, offline and exact.

An imported export has no questions, so nothing in it can be scored.  Here the
user's real conversation is the haystack: short evidence sessions that state
facts of the synthetic generator's kinds (a fact stated once, a fact changed
weeks later, a dated event, a person introduced in one session and mentioned in
another) are inserted into the gaps between real sessions, and probes ask about
them, with the planted turns as their evidence.  Abstention probes ask about
things said nowhere.

Planted sessions imitate the user's chats in shape: as many exchanges as a
typical real session (1 to 4), user turns padded with ordinary lines towards
the median real user-turn length, roles alternating, the user's own speaker
names.  Every planted session and turn carries ``meta["planted"] = True``, real
turns are kept as they are, and planted ids never collide with real ones.

Language: planted text is written in the history's main language (``_language``:
Unicode script, then langid within a shared script) where a phrasebook exists (the
languages of ``_plant_templates.LANGUAGES``), its names, places, companies and dates from
Faker's locale of that language, so any ``n`` can be planted; otherwise in English, and the conversation's
``meta["planted"]`` and every probe's ``meta`` say so (``language``,
``history_language``, ``warning``), as ``planting_warnings`` does for the plant command and
the report.  Planted text in another language than the user's stands out by language alone:
recall then separates planted sessions from each other more than it finds a fact among the
user's own turns.

Share: planted turns stay a minority of each conversation.  Planted sessions are shortened
(fewer ordinary exchanges around the fact, down to the fact alone) until planted turns are at
most ``max_share`` of the conversation's turns, ``MAX_SHARE`` by default; the share is kept in
``meta["planted"]["share"]`` and ``planted_share_warnings`` says where even that was too many.

Determinism: one ``random.Random`` stream per conversation from the seed and the
conversation id; the same corpus, ``n``, ``kinds``, seed and language give the same bytes.
"""

from __future__ import annotations

import dataclasses
import math
import random
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Any

from lyra_lab._registry import ConfigError
from lyra_lab.corpus import Conversation, Corpus, Probe, Role, Session, Turn
from lyra_lab.synthetic._plant_facts import EVIDENCE_KINDS, Placed, capacity, plan_facts
from lyra_lab.synthetic._plant_slots import Moments, free_moments, session_spans
from lyra_lab.synthetic._corpus import ABSTENTION_ANSWER, CATEGORIES, _filler, mentions
from lyra_lab.synthetic._plan import ProbeDraft
from lyra_lab.synthetic._plant_notes import (
    Written,
    history_language,
    planted_counts,
    planted_share_warnings,
    planting_warnings,
)
from lyra_lab.synthetic._faker_kinds import templates_for
from lyra_lab.synthetic._plant_templates import LANGUAGES, PlantTemplates

MAX_EXCHANGES = 4
MAX_SHARE = 0.3  # planted turns' largest share of a conversation's turns, by default


@dataclass(frozen=True)
class Style:
    """The shape of a user's real sessions that planted ones imitate."""

    exchanges: int
    user_words: float
    user_speaker: str | None
    assistant_speaker: str | None


def plant_probes(corpus: Corpus, n: int = 60, kinds: Sequence[str] = CATEGORIES, seed: int = 0,  # noqa: PLR0913
                 language: str = "auto", max_share: float | None = MAX_SHARE) -> Corpus:
    """Insert evidence sessions with planted facts into ``corpus`` and return it with probes about them.

    Args:
        corpus: an imported corpus with timestamps (conversations without any are left as they are).
        n: probes to plant in all, spread round-robin over ``kinds`` and conversations; fewer only when
            the gaps between sessions run out (count the returned probes).
        kinds: categories from ``CATEGORIES`` (single_fact, updated_fact, temporal, multi_hop, abstention).
        seed: the only source of randomness.
        language: ``auto`` writes each conversation's planted text in its main language where a
            phrasebook exists (``LANGUAGES``), else in English with a warning in the metadata; a code of
            ``LANGUAGES`` (``fr``) writes in that language whatever the history's.
        max_share: planted sessions are shortened until planted turns are at most this share of each
            conversation's turns (where even one exchange per fact is more, the share says so); None:
            planted sessions as long as the user's own, whatever the share.

    Returns:
        A new Corpus named ``<name>+planted``: the real probes, then the planted ones
        (``meta["planted"] = True``), each asked the day after its conversation's last turn.

    Raises:
        ConfigError: ``n`` below 1, an unknown kind or language, ``max_share`` outside (0, 1), or no
            conversation with timestamps.
    """
    if n < 1:
        raise ConfigError(f"n must be >= 1, got {n}")
    if max_share is not None and not 0 < max_share < 1:
        raise ConfigError(f"max_share must be between 0 and 1, got {max_share}")
    kinds = tuple(dict.fromkeys(kinds))
    unknown = [k for k in kinds if k not in CATEGORIES]
    if unknown or not kinds:
        raise ConfigError(f"unknown probe kind {unknown[0] if unknown else None!r}; allowed: {', '.join(CATEGORIES)}")
    hosts = [c for c in corpus.conversations if session_spans(c)]
    if not hosts:
        raise ConfigError(f"corpus {corpus.name!r} has no timestamps: planted sessions need dated gaps to go in")
    if language != "auto" and language not in LANGUAGES:
        raise ConfigError(f"no planting templates in language {language!r}; allowed: auto, {', '.join(LANGUAGES)}")
    texts = {c.id: "\n".join(t.text for t in c.turns()) for c in hosts}
    spoken = {c.id: history_language(c) for c in hosts}
    per = math.ceil(n / len(hosts))  # facts of each kind one conversation may need
    packs = {cid: templates_for(language if language != "auto" else lang.code, f"lyra-lab-plant:{seed}:{cid}", per,
                                texts[cid]) for cid, lang in spoken.items()}
    caps = {c.id: {**capacity(texts[c.id], packs[c.id]),
                   "abstention": len(packs[c.id].never) + len(packs[c.id].facts)} for c in hosts}
    counts = _allocate(n, kinds, [c.id for c in hosts], caps)
    taken = {t.id for t in corpus.turns()} | {s.id for c in corpus.conversations for s in c.sessions}
    taken_probes = {p.id for p in corpus.probes}
    convs, probes = [], list(corpus.probes)
    for conv in corpus.conversations:
        if conv.id not in counts:
            convs.append(conv)
            continue
        rng = random.Random(f"lyra-lab-plant:{seed}:{conv.id}")
        written = Written(packs[conv.id], spoken[conv.id], max_share)
        new_conv, drafts = _plant_conversation(rng, conv, counts[conv.id], taken, written)
        convs.append(new_conv)
        probes += _probes(new_conv, drafts, seed, taken_probes, written.meta())
    return Corpus(name=f"{corpus.name}+planted", conversations=tuple(convs), probes=tuple(probes),
                  source=corpus.source, format="planted")


def _allocate(n: int, kinds: tuple[str, ...], conv_ids: list[str],
              caps: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    counts = {cid: dict.fromkeys(kinds, 0) for cid in conv_ids}
    left = n
    while left:
        placed = False
        for kind in kinds:
            for cid in conv_ids:
                if left and counts[cid][kind] < caps[cid][kind]:
                    counts[cid][kind] += 1
                    left -= 1
                    placed = True
        if not placed:
            break
    return counts


def _style(conv: Conversation) -> Style:
    users = [t for t in conv.turns() if t.role == "user"]
    per_session = [sum(t.role == "user" for t in s.turns) for s in conv.sessions] or [1]
    words = [len(t.text.split()) for t in users] or [12]
    speakers = Counter(t.speaker for t in users if t.speaker)
    assistants = Counter(t.speaker for t in conv.turns() if t.role == "assistant" and t.speaker)
    return Style(exchanges=max(1, min(MAX_EXCHANGES, round(statistics.median(per_session)))),
                 user_words=float(statistics.median(words)),
                 user_speaker=speakers.most_common(1)[0][0] if speakers else None,
                 assistant_speaker=assistants.most_common(1)[0][0] if assistants else None)


def _plant_conversation(rng: random.Random, conv: Conversation, counts: dict[str, int], taken: set[str],
                        written: Written) -> tuple[Conversation, list[ProbeDraft]]:
    t, real_text, max_share = written.templates, "\n".join(turn.text for turn in conv.turns()), written.max_share
    placed, drafts = plan_facts(rng, Moments(free_moments(rng, conv)), counts, real_text, t)
    real_turns = sum(len(s.turns) for s in conv.sessions)
    style = _style(conv)
    if max_share is not None and placed:  # shorter planted sessions, down to the fact alone, to keep the share
        room = int(max_share * real_turns / (1 - max_share) / (2 * len(placed)))
        style = dataclasses.replace(style, exchanges=max(1, min(style.exchanges, room)))
    chat = _PlantedChat(rng, conv.id, style, set(), taken, t)
    planted = [_session(chat, p) for p in sorted(placed, key=lambda p: p.at)]
    sessions: list[Session] = []
    pending = list(planted)
    for session in conv.sessions:
        stamps = [t.timestamp for t in session.turns if t.timestamp is not None]
        while pending and stamps and _start(pending[0]) < min(stamps):
            sessions.append(pending.pop(0))
        sessions.append(session)
    sessions += pending
    planted_turns = sum(len(s.turns) for s in planted)
    share = planted_turns / (planted_turns + real_turns) if planted_turns else 0.0
    meta = {**conv.meta, "planted": {"sessions": len(planted), "turns": planted_turns, "share": round(share, 4),
                                     **({"max_share": max_share} if max_share is not None else {}),
                                     **written.meta()}}
    new_conv = Conversation(id=conv.id, sessions=tuple(sessions), title=conv.title, meta=meta)
    final_text = real_text + "\n" + "\n".join(t.text for s in planted for t in s.turns)
    drafts = drafts + _abstentions(rng, drafts, final_text, counts.get("abstention", 0), t)
    for d in drafts:
        d.question = t.finish(d.question)
    return new_conv, drafts


def _fresh_id(base: str, taken: set[str]) -> str:
    candidate, k = base, 1
    while candidate in taken:
        k += 1
        candidate = f"{base}-{k}"
    taken.add(candidate)
    return candidate


def _user_line(rng: random.Random, text: str, style: Style, seen: set[str], t: PlantTemplates) -> str:
    """``text``, lengthened with ordinary lines towards the user's typical turn length."""
    for _ in range(3):
        if len(text.split()) >= 0.7 * style.user_words:
            break
        text = f"{text} {_filler(rng, t.topics, seen, t.slots)[0]}"
    return text


@dataclass
class _PlantedChat:
    """A conversation being planted into: the random stream, its id and style, the user lines and ids used."""

    rng: random.Random
    cid: str
    style: Style
    seen: set[str]  # ordinary user lines used so far (none repeats)
    taken: set[str]  # session and turn ids of the corpus and of what was planted
    templates: PlantTemplates  # the language planted text is written in


def _session(chat: _PlantedChat, placed: Placed) -> Session:
    """A new session stating ``placed``'s fact among ordinary exchanges in the conversation's style."""
    rng, cid, style, seen, taken, t = chat.rng, chat.cid, chat.style, chat.seen, chat.taken, chat.templates
    topics = rng.sample(t.topics, 2)
    script: list[tuple[str, str, bool]] = [(*_filler(rng, topics, seen, t.slots)[:2], False)
                                           for _ in range(style.exchanges - 1)]
    script.insert(rng.randint(0, len(script)), (placed.plant.user, placed.plant.reply, True))
    sid = _fresh_id(f"{cid}:planted-{placed.at:%Y%m%d%H%M}", taken)
    turns: list[Turn] = []
    clock = placed.at
    for user, reply, is_fact in script:
        user_text = user if is_fact else _user_line(rng, user, style, seen, t)
        roles: tuple[tuple[Role, str], ...] = (("user", user_text), ("assistant", reply))
        for role, text in roles:
            tid = _fresh_id(f"{sid}:t{len(turns) + 1:02d}", taken)
            meta: dict[str, Any] = {"planted": True}
            if is_fact and role == "user":
                placed.plant.turn_id = tid
                meta["planted_fact"] = placed.category
            speaker = style.user_speaker if role == "user" else style.assistant_speaker
            turns.append(Turn(id=tid, conversation_id=cid, session_id=sid, role=role, text=t.finish(text),
                              timestamp=clock, speaker=speaker, meta=meta))
            clock += timedelta(seconds=rng.randint(4, 40) if role == "user" else rng.randint(30, 240))
    return Session(id=sid, conversation_id=cid, turns=tuple(turns), title=t.session_title, started_at=placed.at,
                   meta={"planted": True, "planted_kind": placed.category})


def _abstentions(rng: random.Random, drafts: list[ProbeDraft], text: str, count: int,
                 t: PlantTemplates) -> list[ProbeDraft]:
    """Questions whose topic words occur nowhere in the planted conversation (fewer if too few are left)."""
    planted = {d.meta.get("fact_key") for d in drafts}
    candidates: list[tuple[str, Iterable[str], str | None]] = [
        (k.questions[0], (*k.terms, *(v.lower() for v in k.values)), k.key) for k in t.facts if k.key not in planted]
    candidates += [(question, terms, None) for question, terms in t.never]
    usable = [c for c in candidates if not any(mentions(text, term) for term in c[1])]
    return [ProbeDraft("abstention", question, ABSTENTION_ANSWER,
                       meta={"absent_terms": list(terms), **({"fact_key": key} if key else {})})
            for question, terms, key in rng.sample(usable, min(count, len(usable)))]


def _probes(conv: Conversation, drafts: list[ProbeDraft], seed: int, taken: set[str],
            language: dict[str, Any]) -> list[Probe]:
    last = max(t.timestamp for t in conv.turns() if t.timestamp is not None)
    asked_at = datetime.combine(last.date() + timedelta(days=1), time(12, 0), tzinfo=last.tzinfo)
    probes = []
    ordered = sorted(drafts, key=lambda d: CATEGORIES.index(d.category))
    for n, d in enumerate(ordered, start=1):
        meta = {"planted": True, "plant_seed": seed, **d.meta, **language}
        if d.superseded:
            meta["superseded"] = [p.rendered_id for p in d.superseded]
        probes.append(Probe(id=_fresh_id(f"{conv.id}:planted-q{n:03d}", taken), conversation_id=conv.id,
                            question=d.question, answer=d.answer, evidence=tuple(p.rendered_id for p in d.evidence),
                            category=d.category, asked_at=asked_at, abstention=d.category == "abstention",
                            meta=meta))
    return probes


__all__ = ["EVIDENCE_KINDS", "MAX_SHARE", "plant_probes", "planted_counts", "planted_share_warnings",
           "planting_warnings"]


def _start(session: Session) -> datetime:
    """A planted session's start (planted sessions are always dated)."""
    if session.started_at is None:
        raise RuntimeError(f"planted session {session.id!r} has no start time")
    return session.started_at
