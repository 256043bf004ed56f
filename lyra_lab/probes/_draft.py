"""Drafted probes: a model reads sampled sessions and writes questions about what the user said.

Two styles.  ``json`` (capable models): each sampled session is shown as numbered
turns; the model answers with JSON lines ``{"question", "answer", "turns": [numbers], "kind"}``;
a kind from ``DRAFT_KINDS`` becomes the probe's category, anything else ``"drafted"``.
``qa`` (small models such as the bundled SmolLM2-135M, which never writes JSON): per
call the model sees ONE user turn, picked for stating facts (digits, names, "my",
"I'm"…), after a one-shot example sharing as few words with it as possible, and writes
``A: ...`` / ``Q: ...`` (answer first: it then stays in the message's words); the
evidence is that turn, known to us and not asked of the model; the category is
``"drafted"``.  Every draft goes through
``_checks.check`` before it is kept, and every reason for dropping one is
counted, so a user sees how much of the model's output survived.  Kept probes
record the drafting backend, model and prompt name in their meta.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from typing import Callable, TypedDict, Unpack

from lyra_lab.backends import Backend, Usage
from lyra_lab.corpus import Corpus, Probe, Session, Turn
from lyra_lab.matching import answer_retained
from lyra_lab.probes._checks import (NO_JSON, NO_QA, UNPARSEABLE, Draft, check, judge_supports, parse_drafts, parse_qa,
                                     tokens)

PROMPT_NAME = "draft_questions_v1"
PROMPT = """Below is a conversation between a user and an assistant, as numbered turns.
Write up to {per_session} questions that someone could ask the user later about what the USER said:
people they mention, their preferences, plans, decisions and dates.
Each answer must be a short phrase copied from the turns, and must not appear in the question.
Reply with one JSON object per line and nothing else, like:
{{"question": "What is the name of my dog?", "answer": "Biscuit", "turns": [3], "kind": "people"}}
where kind is one of: people, preference, plan, decision, date.

{turns}"""
QA_PROMPT_NAME = "draft_qa_v1"
QA_PROMPT = """Make a quiz question from a message. First copy a word from the message as the answer, \
then write the question.

Message: "{example_text}"
A: {example_answer}
Q: {example_question}

Message: "{text}"
A: ...
Q: ..."""
# (message, question, answer): the example shown is the one sharing fewest words with the target turn
QA_EXAMPLES: tuple[tuple[str, str, str], ...] = (
    ("My parrot Kiwi turned 7 on Sunday.", "How old did my parrot turn?", "7"),
    ("Our neighbour Olek fixed the boiler before Christmas.", "Who fixed the boiler?", "Olek"),
    ("Yesterday we adopted a grey kitten called Pumpkin.", "What is the kitten called?", "Pumpkin"),
)
STYLES: tuple[str, ...] = ("json", "qa")
QA_MAX_TOKENS = 48
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
    judge_calls: int = 0  # support checks asked of the judge (answers whose words were not in the evidence)
    judge_kept: int = 0  # kept because the judge found them supported


def numbered_turns(session: Session) -> dict[int, Turn]:
    """Turn number (1-based, as the model sees it) -> turn, the first ``MAX_TURNS`` of the session."""
    return {i: t for i, t in enumerate(session.turns[:MAX_TURNS], start=1)}


def render_prompt(session: Session, per_session: int) -> str:
    lines = [f"[{i}] {t.role}: {' '.join(t.text.split())[:MAX_TURN_CHARS]}"
             for i, t in numbered_turns(session).items()]
    return PROMPT.format(per_session=per_session, turns="\n".join(lines))


_DIGIT = re.compile(r"\d")
_FIRST_PERSON = re.compile(r"\b(?:my|our|i am|i'm|i've|i will|i'll|we're|we are|we've|i|we)\b", re.IGNORECASE)
_CAPITAL = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+")


def fact_score(text: str) -> int:
    """How much a user turn looks like it states a fact worth a question.

    Digits, capitalised names not starting a sentence and first-person words count; short turns
    (greetings, thanks) score 0.
    """
    words = text.split()
    if len(words) < 5:
        return 0
    score = 2 * bool(_DIGIT.search(text)) + 2 * min(len(_CAPITAL.findall(text.strip())), 2)
    return score + min(len(_FIRST_PERSON.findall(text)), 2) + (len(words) >= 8)


def fact_turns(session: Session, per_session: int) -> list[int]:
    """The numbers of the session's user turns most worth a question, in turn order.

    Up to ``per_session`` numbers (as in ``numbered_turns``) of the user turns with the highest
    ``fact_score`` (> 0).
    """
    scored = [(fact_score(t.text), i) for i, t in numbered_turns(session).items() if t.role == "user"]
    best = sorted((x for x in scored if x[0] > 0), key=lambda x: (-x[0], x[1]))[:per_session]
    return sorted(i for _, i in best)


def qa_example(text: str) -> tuple[str, str, str]:
    """The example of ``QA_EXAMPLES`` sharing fewest words with ``text`` (the first on a tie)."""
    words = tokens(text)
    return min(QA_EXAMPLES, key=lambda ex: len(tokens(" ".join(ex)) & words))


def render_qa_prompt(text: str) -> str:
    example_text, question, answer = qa_example(text)
    return QA_PROMPT.format(example_text=example_text, example_question=question, example_answer=answer,
                            text=" ".join(text.split())[:MAX_TURN_CHARS])


class DraftOptions(TypedDict, total=False):
    """The keywords of ``draft_probes``, each optional (the fields of ``DraftSettings``)."""

    n: int
    sessions: int
    per_session: int
    seed: int
    max_tokens: int | None
    style: str


@dataclass(frozen=True)
class DraftSettings:
    """How ``draft_probes`` drafts.

    Attributes:
        n: the most probes kept.
        sessions: how many sessions are sampled (``random.Random(seed)``) among those with a user turn.
        per_session: drafts asked per session (``json``) or user turns asked about per session (``qa``).
        seed: of the session sample.
        max_tokens: per call; None: 300 (``json``) or ``QA_MAX_TOKENS`` (``qa``).
        style: ``"json"`` or ``"qa"`` (module docstring).
    """

    n: int = 100
    sessions: int = 20
    per_session: int = 3
    seed: int = 0
    max_tokens: int | None = None
    style: str = "json"

    def __post_init__(self) -> None:
        if self.style not in STYLES:
            raise ValueError(f"style must be one of {', '.join(STYLES)}, got {self.style!r}")


@dataclass
class _Drafting:
    """One drafting run: what it asks, what it kept so far, and how it checks a paraphrased answer."""

    corpus: Corpus
    backend: Backend
    result: DraftResult
    kept_questions: list[set[str]]
    supports: Callable[[Draft, str], bool] | None


def draft_probes(corpus: Corpus, backend: Backend, *, judge: Backend | None = None,
                 **options: Unpack[DraftOptions]) -> DraftResult:
    """Ask ``backend`` for questions about ``sessions`` sampled sessions; keep the checked ones, up to ``n``.

    Sessions are sampled with ``random.Random(seed)`` among those with a user turn, and
    visited in time order.  Each kept probe is asked the day after its conversation's last turn.
    ``style`` is ``"json"`` (one call per session, up to ``per_session`` drafts; ``max_tokens`` 300 by default)
    or ``"qa"`` (one call per chosen user turn, up to ``per_session`` turns; ``max_tokens`` 48 by default).

    Args:
        corpus: the conversations to draft about.
        backend: the drafting model.
        judge: a backend asked whether the evidence states an answer whose words it does not contain
            (a paraphrase); without one such drafts are dropped as unsupported.  Kept probes record
            how their answer was supported (``meta["support"]``: ``text`` or ``judge``).
        **options: ``DraftSettings`` fields (``n``, ``sessions``, ``per_session``, ``seed``,
            ``max_tokens``, ``style``).
    """
    settings = DraftSettings(**options)
    n, per_session = settings.n, settings.per_session
    pool = [s for c in corpus.conversations for s in c.sessions if any(t.role == "user" for t in s.turns)]
    chosen = random.Random(settings.seed).sample(range(len(pool)), min(settings.sessions, len(pool)))
    result = DraftResult(probes=[])
    kept_questions: list[set[str]] = []
    supports = None
    if judge is not None:
        ask = judge_supports(judge)

        def supports(draft: Draft, evidence: str) -> bool:
            result.judge_calls += 1
            return ask(draft, evidence)

    run = _Drafting(corpus, backend, result, kept_questions, supports)
    max_tokens = settings.max_tokens
    for index in sorted(chosen):
        if len(result.probes) >= n:
            break
        session = pool[index]
        if settings.style == "qa":
            _draft_qa(run, session, settings)
            continue
        max_tokens = max_tokens or 300
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
            reason = check(draft, numbered, kept_questions, supports=supports) if len(result.probes) < n \
                else "over --n"
            if reason is not None:
                result.dropped[reason] += 1
                continue
            kept_questions.append(tokens(draft.question))
            result.probes.append(_probe(run, session, draft, numbered))
            result.judge_kept += result.probes[-1].meta["support"] == "judge"
    result.dropped = Counter({k: v for k, v in result.dropped.items() if v})
    return result


def _draft_qa(run: _Drafting, session: Session, settings: DraftSettings) -> None:
    """Draft ``qa``-style probes about the session's most fact-like user turns, one call per turn."""
    result, kept_questions = run.result, run.kept_questions
    numbered = numbered_turns(session)
    examples = tuple(question for _, question, _ in QA_EXAMPLES)
    for number in fact_turns(session, settings.per_session):
        if len(result.probes) >= settings.n:
            return
        completion = run.backend.complete(
            [{"role": "user", "content": render_qa_prompt(numbered[number].text)}],
            max_tokens=settings.max_tokens or QA_MAX_TOKENS, temperature=0)
        result.calls += 1
        result.usage = result.usage + completion.usage
        pair = parse_qa(completion.text)
        if pair is None:
            result.dropped[NO_QA] += 1
            continue
        result.drafted += 1
        draft = Draft(pair[0], pair[1], (number,))
        reason = check(draft, numbered, kept_questions, examples, run.supports)
        if reason is not None:
            result.dropped[reason] += 1
            continue
        kept_questions.append(tokens(draft.question))
        result.probes.append(_probe(run, session, draft, numbered, prompt=QA_PROMPT_NAME))
        result.judge_kept += result.probes[-1].meta["support"] == "judge"


def _probe(run: _Drafting, session: Session, draft: Draft, numbered: dict[int, Turn],
           prompt: str = PROMPT_NAME) -> Probe:
    """The probe a kept draft becomes, numbered after the probes kept so far."""
    corpus, backend, k = run.corpus, run.backend, len(run.result.probes) + 1
    conv = corpus.conversation(session.conversation_id)
    stamps = [t.timestamp for t in conv.turns() if t.timestamp is not None]
    asked_at = (datetime.combine(max(stamps).date() + timedelta(days=1), time(12, 0), tzinfo=max(stamps).tzinfo)
                if stamps else None)
    evidence_text = " ".join(numbered[i].text for i in draft.turns)
    support = "text" if answer_retained(draft.answer, evidence_text) else "judge"  # check() let it through
    return Probe(id=f"draft-{k:03d}", conversation_id=conv.id, question=draft.question, answer=draft.answer,
                 evidence=tuple(dict.fromkeys(numbered[i].id for i in draft.turns)),
                 category=draft.kind if draft.kind in DRAFT_KINDS else "drafted", asked_at=asked_at,
                 meta={"drafted": True, "backend": backend.name, "model": backend.model, "prompt": prompt,
                       "session_id": session.id, "support": support})
