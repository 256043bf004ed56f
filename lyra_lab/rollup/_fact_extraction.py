"""Fact extraction: short atomic ``subject: fact`` entries per batch of turns, newest fact wins.

Facts sit beside the raw turns (kind ``fact``, level 1); their provenance is
the batch of turns they were extracted from.  A fact whose normalized text is
already known is skipped; a fact on a known subject supersedes the older one
(removed; its id, and what *it* superseded, go into ``meta["supersedes"]``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import NamedTuple, Sequence

from lyra_lab.memory import EntryKind, MemoryEntry
from lyra_lab.rollup import _prompts
from lyra_lab.rollup._base import ROLLUPS, BaseRollup, Compaction, Edit, short_hash, skip, transcript
from lyra_lab._params import param

_BULLET = re.compile(r"^\s*(?:[-*•]+|\d+[.)])\s*")
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
_NEVER = datetime.min.replace(tzinfo=timezone.utc)


def normalize(text: str) -> str:
    """Lowercase words joined by single spaces: the key for de-duplication and subjects.

    >>> normalize("  Alice's JOB:  nurse!! ")
    'alice s job nurse'
    """
    return " ".join(_NON_WORD.sub(" ", text.lower()).split())


class FactLine(NamedTuple):
    """One fact line of an LLM reply, and its normalized subject (the part before ``:``) if it has one."""

    subject: str | None
    line: str


def parse_facts(text: str) -> list[FactLine]:
    r"""``(normalized subject or None, fact line)`` for each fact line of an LLM reply.

    >>> parse_facts("- Alice job: nurse\nNONE\n2. likes tea")
    [FactLine(subject='alice job', line='Alice job: nurse'), FactLine(subject=None, line='likes tea')]
    """
    facts: list[FactLine] = []
    for raw in text.splitlines():
        line = _BULLET.sub("", raw).strip()
        if not line or normalize(line) in ("none", "no facts"):
            continue
        subject, sep, rest = line.partition(":")
        if sep and normalize(subject) and rest.strip():
            facts.append(FactLine(normalize(subject), f"{subject.strip()}: {rest.strip()}"))
        elif normalize(line):
            facts.append(FactLine(None, line))
    return facts


def _turn_key(entry: MemoryEntry) -> tuple[str, str]:
    return ((entry.end or _NEVER).isoformat(), entry.id)


@ROLLUPS.register("fact_extraction")
@dataclass(frozen=True)
class FactExtraction(BaseRollup):
    """Extract facts from each full batch of ``batch_turns`` new raw turns (one LLM call per batch).

    Turns are taken in time order after the watermark (``meta["watermark"]``,
    the last turn already processed) that facts carry.  A trailing partial
    batch waits for more turns.  A batch that yields no fact leaves no
    watermark, so it is offered again next time.  Raw turns stay, so the
    budget is not enforced here.  A failed LLM call changes nothing: the
    report's ``unchanged`` degradation names the batch (``facts batch 2/3``),
    and every batch is offered again at the next compaction.
    """

    batch_turns: int = param(10, ge=1, doc="new raw turns per extraction call.")
    max_tokens: int = param(200, ge=1, doc="the completion limit of each extraction call.")

    def step(self, compaction: Compaction) -> Edit:
        before = compaction.before
        facts = {e.id: e for e in before if e.kind == EntryKind.FACT}
        marks = [tuple(f.meta["watermark"]) for f in facts.values() if f.meta.get("watermark")]
        mark = max(marks) if marks else ("", "")
        turns = sorted((e for e in before if e.kind == EntryKind.TURN and _turn_key(e) > mark), key=_turn_key)
        n_batches = len(turns) // self.batch_turns
        if n_batches == 0:
            return skip(f"fewer than {self.batch_turns} new turns")
        batches = [turns[i * self.batch_turns:(i + 1) * self.batch_turns] for i in range(n_batches)]
        watermark = list(_turn_key(batches[-1][-1]))
        written: dict[str, MemoryEntry] = {}
        for k, batch in enumerate(batches, 1):
            completion = compaction.ask(_prompts.FACTS.format(content=transcript(batch)), self.max_tokens,
                                        f"facts batch {k}/{len(batches)}")
            for fact in parse_facts(completion.text):
                self._merge(facts, written, fact, batch, watermark)
        removed = [e.id for e in before if e.kind == EntryKind.FACT and e.id not in facts]
        new = [f for f in written.values() if f.id in facts]
        return Edit(f"{len(new)} new fact(s), {len(removed)} superseded", add=new, remove=removed)

    @staticmethod
    def _merge(facts: dict[str, MemoryEntry], written: dict[str, MemoryEntry], fact_line: FactLine,
               batch: Sequence[MemoryEntry], watermark: list[str]) -> None:
        """Add a fact from ``batch`` unless known; it supersedes the facts of the same subject."""
        subject, line = fact_line
        norm = normalize(line)
        if any(f.meta.get("norm") == norm for f in facts.values()):
            return  # already known
        older = [f for f in facts.values() if subject is not None and f.meta.get("subject") == subject]
        supersedes: list[str] = []
        for old in older:
            supersedes += [*old.meta.get("supersedes", ()), old.id]
            del facts[old.id]
        conversation_id = batch[0].conversation_id
        turn_ids = tuple(t for e in batch for t in e.turn_ids)
        fact = MemoryEntry(
            id=f"fact:{conversation_id}:{short_hash(conversation_id, norm, turn_ids)}",
            conversation_id=conversation_id,
            kind=EntryKind.FACT,
            text=line,
            turn_ids=turn_ids,
            session_ids=tuple(sorted({s for e in batch for s in e.session_ids})),
            start=min((e.start for e in batch if e.start), default=None),
            end=max((e.end for e in batch if e.end), default=None),
            level=1,
            meta={"rollup": "fact_extraction", "subject": subject, "norm": norm,
                  "supersedes": supersedes, "watermark": watermark},
        )
        facts[fact.id] = written[fact.id] = fact
