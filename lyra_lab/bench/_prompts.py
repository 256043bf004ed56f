"""The fixed, seeded prompts a benchmark sends: summarization prompts from a corpus, or synthetic text.

Every level of a sweep, and every backend compared, gets the same prompts in
the same order, so differences come from the backend and the load, not the
input. Prompt lengths are counted offline with ``token_counter`` (an OpenAI
tokenizer, so a local model's own count differs a little; the backend's
reported usage is what the records keep).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from lyra_lab._registry import ConfigError

if TYPE_CHECKING:
    from lyra_lab.corpus import Corpus

_WORDS = ("the", "garden", "meeting", "Tuesday", "sister", "recipe", "trip", "Lisbon", "budget", "doctor",
          "weekend", "project", "deadline", "bike", "coffee", "friend", "concert", "rain", "train", "book",
          "moved", "planned", "forgot", "bought", "called", "finished", "started", "liked", "after", "before",
          "with", "because", "again", "later", "quickly", "new", "old", "small", "long", "quiet")


@dataclass(frozen=True)
class BenchPrompt:
    """One benchmark request: chat messages and their locally counted prompt length.

    Attributes:
        id: stable id (``"<session id>"`` or ``"synthetic-<i>"``).
        messages: the chat messages sent.
        prompt_tokens: tokens of the message contents, counted offline.
    """

    id: str
    messages: tuple[Mapping[str, str], ...] = field(hash=False)
    prompt_tokens: int


def _counter() -> Callable[[str], int]:
    from lyra_lab.backends import token_counter

    return token_counter("gpt-4o-mini")


def _fit(text: str, budget: int, count: Callable[[str], int]) -> str:
    """The longest prefix of ``text`` made of whole lines within ``budget`` tokens (else a character cut)."""
    if count(text) <= budget:
        return text
    kept: list[str] = []
    used = 0
    for line in text.splitlines(keepends=True):
        n = count(line)
        if used + n > budget:
            break
        kept.append(line)
        used += n
    if kept:
        return "".join(kept)
    # A single line longer than the budget: cut it by characters (binary search on the count).
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if count(text[:mid]) <= budget else (lo, mid - 1)
    return text[:lo]


def corpus_prompts(corpus: Corpus, n: int, *, prompt_tokens: int = 300, seed: int = 0) -> list[BenchPrompt]:
    """``n`` summarization prompts, one per session of ``corpus`` (cycled if it has fewer).

    Each is lyra-lab's default single-pass summarization prompt over the
    session's transcript (``render_turns``), cut at a line boundary to about
    ``prompt_tokens`` tokens. Sessions are shuffled with ``seed``.

    Raises:
        ConfigError: ``n`` or ``prompt_tokens`` < 1, or a corpus with no turns.
    """
    from lyra_lab.chunking import render_turns
    from lyra_lab.summarize import DEFAULT_PROMPTS

    _check(n, prompt_tokens)
    sessions = [s for conv in corpus.conversations for s in conv.sessions if s.turns]
    if not sessions:
        raise ConfigError(f"corpus {corpus.name!r} has no session with turns to prompt with")
    random.Random(seed).shuffle(sessions)
    count = _counter()
    instruction = DEFAULT_PROMPTS.messages("single", transcript="")[-1]["content"]
    budget = max(1, prompt_tokens - count(instruction))
    out = []
    for i in range(n):
        session = sessions[i % len(sessions)]
        transcript = _fit(render_turns(session.turns), budget, count)
        messages = DEFAULT_PROMPTS.messages("single", transcript=transcript)
        pid = session.id if i < len(sessions) else f"{session.id}#{i // len(sessions)}"
        out.append(BenchPrompt(pid, tuple(messages), sum(count(m["content"]) for m in messages)))
    return out


def synthetic_prompts(n: int, *, prompt_tokens: int = 300, seed: int = 0) -> list[BenchPrompt]:
    """``n`` prompts of seeded filler sentences, about ``prompt_tokens`` tokens each, asking for a summary.

    Raises:
        ConfigError: ``n`` or ``prompt_tokens`` < 1.
    """
    _check(n, prompt_tokens)
    count = _counter()
    instruction = "\nSummarize the text above in two sentences."
    budget = max(1, prompt_tokens - count(instruction))
    out = []
    for i in range(n):
        rng = random.Random(f"{seed}:{i}")
        sentences: list[str] = []
        while count(" ".join(sentences)) < budget:
            words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 14))]
            sentences.append(" ".join(words).capitalize() + ".")
        text = _fit(" ".join(sentences), budget, count)
        messages = ({"role": "user", "content": text + instruction},)
        out.append(BenchPrompt(f"synthetic-{i}", messages, count(messages[0]["content"])))
    return out


def prompts_sha256(prompts: Sequence[BenchPrompt]) -> str:
    """A hash of the prompts' messages, so two runs can show they sent the same input."""
    h = hashlib.sha256()
    for p in prompts:
        for m in p.messages:
            h.update(f"{m['role']}\x00{m['content']}\x01".encode())
    return h.hexdigest()


def _check(n: int, prompt_tokens: int) -> None:
    if not isinstance(n, int) or n < 1:
        raise ConfigError(f"number of prompts must be an integer >= 1, got {n!r}")
    if not isinstance(prompt_tokens, int) or prompt_tokens < 1:
        raise ConfigError(f"prompt_tokens must be an integer >= 1, got {prompt_tokens!r}")
