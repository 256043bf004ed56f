"""Drafted probes: a model reads sampled sessions and writes questions about what the user said.

Each sampled session is shown as numbered turns; the model answers with JSON
lines ``{"question", "answer", "turns": [numbers], "kind"}``; a kind from
``DRAFT_KINDS`` becomes the probe's category, anything else ``"drafted"``.  Every draft goes through
``_checks.check`` before it is kept, and every reason for dropping one is
counted, so a user sees how much of the model's output survived.  Kept probes
record the drafting backend, model and prompt name in their meta.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta

from lyra_lab.backends import Backend, Usage
from lyra_lab.corpus import Corpus, Probe, Session
from lyra_lab.probes._checks import NO_JSON, UNPARSEABLE, check, parse_drafts, tokens

PROMPT_NAME = "draft_questions_v1"
PROMPT = """Below is a conversation between a user and an assistant, as numbered turns.
Write up to {per_session} questions that someone could ask the user later about what the USER said:
people they mention, their preferences, plans, decisions and dates.
Each answer must be a short phrase copied from the turns, and must not appear in the question.
Reply with one JSON object per line and nothing else, like:
{{"question": "What is the name of my dog?", "answer": "Biscuit", "turns": [3], "kind": "people"}}
where kind is one of: people, preference, plan, decision, date.

{turns}"""
DRAFT_KINDS: tuple[str, ...] = ("people", "preference", "plan", "decision", "date")
MAX_TURNS = 24
MAX_TURN_CHARS = 600


@dataclass
class DraftResult:
    """Kept probes, how many drafts the model wrote, and why the others were dropped."""

    probes: list[Probe]
    drafted: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    calls: int = 0
    usage: Usage = field(default_factory=Usage)


def numbered_turns(session: Session) -> dict[int, object]:
    """Turn number (1-based, as the model sees it) -> turn, the first ``MAX_TURNS`` of the session."""
    return {i: t for i, t in enumerate(session.turns[:MAX_TURNS], start=1)}


def render_prompt(session: Session, per_session: int) -> str:
    lines = [f"[{i}] {t.role}: {' '.join(t.text.split())[:MAX_TURN_CHARS]}"
             for i, t in numbered_turns(session).items()]
    return PROMPT.format(per_session=per_session, turns="\n".join(lines))


def draft_probes(corpus: Corpus, backend: Backend, *, n: int = 100, sessions: int = 20, per_session: int = 3,
                 seed: int = 0, max_tokens: int = 300) -> DraftResult:
    """Ask ``backend`` for questions about ``sessions`` sampled sessions; keep the checked ones, up to ``n``.

    Sessions are sampled with ``random.Random(seed)`` among those with a user turn, and
    visited in time order.  Each kept probe is asked the day after its conversation's last turn.
    """
    pool = [s for c in corpus.conversations for s in c.sessions if any(t.role == "user" for t in s.turns)]
    chosen = random.Random(seed).sample(range(len(pool)), min(sessions, len(pool)))
    result = DraftResult(probes=[])
    kept_questions: list[set[str]] = []
    for index in sorted(chosen):
        if len(result.probes) >= n:
            break
        session = pool[index]
        completion = backend.complete([{"role": "user", "content": render_prompt(session, per_session)}],
                                      max_tokens=max_tokens, temperature=0)
        result.calls += 1
        result.usage = result.usage + completion.usage
        drafts, bad = parse_drafts(completion.text)
        result.drafted += len(drafts) + bad
        result.dropped[UNPARSEABLE] += bad
        if not drafts and not bad and completion.text.strip():
            result.dropped[NO_JSON] += 1  # a tiny model often writes plain numbered questions instead
        numbered = numbered_turns(session)
        for draft in drafts:
            reason = check(draft, numbered, kept_questions) if len(result.probes) < n else "over --n"
            if reason is not None:
                result.dropped[reason] += 1
                continue
            kept_questions.append(tokens(draft.question))
            result.probes.append(_probe(corpus, session, draft, numbered, backend, len(result.probes) + 1))
    result.dropped = Counter({k: v for k, v in result.dropped.items() if v})
    return result


def _probe(corpus: Corpus, session: Session, draft, numbered, backend: Backend, k: int) -> Probe:
    conv = corpus.conversation(session.conversation_id)
    stamps = [t.timestamp for t in conv.turns() if t.timestamp is not None]
    asked_at = (datetime.combine(max(stamps).date() + timedelta(days=1), time(12, 0), tzinfo=max(stamps).tzinfo)
                if stamps else None)
    return Probe(id=f"draft-{k:03d}", conversation_id=conv.id, question=draft.question, answer=draft.answer,
                 evidence=tuple(dict.fromkeys(numbered[i].id for i in draft.turns)), category=draft.kind if draft.kind in DRAFT_KINDS else "drafted",
                 asked_at=asked_at,
                 meta={"drafted": True, "backend": backend.name, "model": backend.model, "prompt": PROMPT_NAME,
                       "session_id": session.id})
