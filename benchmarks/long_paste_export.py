"""Conversations shaped like issue 29's real Claude export: ~1,000 turns, ~1.5 M characters, long pastes.

That export had a median turn of 607 characters and a longest of 155,885 (pasted documents and
code), 1.49 M characters over 1,011 turns.  This builds a seeded stand-in from the synthetic
generator (no one's real conversations): each turn's own text, padded with sentences of other
synthetic turns to a log-normal length around the median, and a few user turns carrying pasted
documents (prose and code) whose lengths fall off from the longest, so that the total is the
requested size.  ``big_export_grid.py --shape long-paste`` writes it as a ChatGPT export.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np

from lyra_lab.corpus import Conversation
from lyra_lab.synthetic import generate_synthetic

MEDIAN_CHARS = 607
LONGEST_CHARS = 155_885
PASTES = 24


def long_paste_conversations(seed: int = 0, turns: int = 1000, chars: float = 1.5e6) -> list[Conversation]:
    """One conversation of about ``turns`` turns and ``chars`` characters (see the module docstring)."""
    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    conv = next(iter(generate_synthetic(seed, conversations=1, months=12, sessions=60, exchanges=(6, 12)).conversations))
    sessions, count = [], 0
    for s in conv.sessions:
        if count >= turns:
            break
        sessions.append(s)
        count += len(s.turns)
    pool = [t.text for t in generate_synthetic(seed + 1, conversations=3).turns()]
    all_turns = [t for s in sessions for t in s.turns]
    targets = np.clip(nprng.lognormal(np.log(MEDIAN_CHARS), 0.6, len(all_turns)), 40, 6000).astype(int)
    texts = {t.id: _pad(t.text, int(n), pool, rng) for t, n in zip(all_turns, targets)}
    users = [t for t in all_turns if t.role == "user"]
    pasted = rng.sample(users, min(PASTES, len(users)))
    left = max(0.0, chars - sum(len(v) for v in texts.values()) - LONGEST_CHARS)
    weights = np.array([1 / (i + 1) for i in range(len(pasted) - 1)])
    sizes = [LONGEST_CHARS] + [int(w) for w in left * weights / weights.sum()]
    for turn, size in zip(pasted, sizes):
        texts[turn.id] += "\n\nHere is the document:\n\n" + _document(size, pool, rng)
    new_sessions = tuple(dataclasses.replace(s, turns=tuple(dataclasses.replace(t, text=texts[t.id]) for t in s.turns))
                         for s in sessions)
    return [dataclasses.replace(conv, sessions=new_sessions)]


def _pad(text: str, target: int, pool: list[str], rng: random.Random) -> str:
    parts = [text]
    length = len(text)
    while length < target:
        sentence = rng.choice(pool)
        parts.append(sentence)
        length += len(sentence) + 1
    return " ".join(parts)


def _document(size: int, pool: list[str], rng: random.Random) -> str:
    """Prose paragraphs and code blocks, about ``size`` characters."""
    out: list[str] = []
    length = 0
    while length < size:
        if rng.random() < 0.4:
            name = rng.choice(["parse", "load", "score", "render", "merge", "flush"]) + f"_{rng.randrange(1000)}"
            lines = [f"def {name}(items, limit={rng.randrange(1, 64)}):",
                     f'    """{rng.choice(pool)}"""',
                     "    out = []",
                     "    for i, item in enumerate(items):",
                     f"        if i >= limit or item is None:  # {rng.choice(pool)[:60]}",
                     "            break",
                     f"        out.append(item.{rng.choice(['text', 'id', 'value', 'score'])})",
                     "    return out"]
            block = "```python\n" + "\n".join(lines) + "\n```"
        else:
            block = " ".join(rng.choice(pool) for _ in range(rng.randrange(3, 9)))
        out.append(block)
        length += len(block) + 2
    return "\n\n".join(out)
