"""Load an experiment's corpus and cut it to size: conversations, sessions, probes.

Cutting sessions must not leave unanswerable probes behind: a probe whose
evidence lies (partly) in a dropped session is dropped too, and counted.
Probes without evidence (abstention: "never mentioned") stay.  ``max_probes``
takes probes round-robin over categories, in file order, so a small sample
still covers every category.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lyra_lab.corpus import Corpus, Probe

if TYPE_CHECKING:
    from lyra_lab.experiments.grid._spec import CorpusSpec


@dataclass(frozen=True)
class Selection:
    """The corpus as replayed, and what the cut left out."""

    corpus: Corpus
    dropped_probes: int = 0
    dropped_sessions: int = 0


def load_corpus(spec: CorpusSpec) -> Corpus:
    """``lyra_lab.corpus.load`` of ``spec.path`` (and ``spec.probes``) with a readable missing-file error."""
    from lyra_lab.corpus import load, load_probes

    if not spec.path.exists():
        raise FileNotFoundError(f"corpus file {spec.path} does not exist")
    corpus = load(spec.path, format=spec.format, include_attachments=spec.include_attachments)
    if spec.probes is not None:
        if not spec.probes.exists():
            raise FileNotFoundError(f"probes file {spec.probes} does not exist")
        corpus = corpus.with_probes(tuple(load_probes(spec.probes, corpus)))
    return corpus


def select(corpus: Corpus, spec: CorpusSpec) -> Selection:
    """Apply ``conversations``, ``max_sessions``, ``categories`` and ``max_probes`` of a ``CorpusSpec``."""
    conversations = list(corpus.conversations)
    if isinstance(spec.conversations, tuple):
        known = {c.id for c in conversations}
        missing = [c for c in spec.conversations if c not in known]
        if missing:
            from lyra_lab._registry import ConfigError

            raise ConfigError(f"[corpus] conversations: no conversation {missing[0]!r} in {corpus.source or corpus.name}")
        conversations = [corpus.conversation(c) for c in spec.conversations]
    elif isinstance(spec.conversations, int):
        conversations = conversations[: spec.conversations]
    dropped_sessions = 0
    if spec.max_sessions is not None:
        cut = []
        for conv in conversations:
            kept = tuple(s for s in conv.sessions if s.turns)[: spec.max_sessions]
            dropped_sessions += len(conv.sessions) - len(kept)
            cut.append(dataclasses.replace(conv, sessions=kept))
        conversations = cut
    turn_ids = {t.id for c in conversations for t in c.turns()}
    conv_ids = {c.id for c in conversations}
    probes: list[Probe] = []
    dropped = 0
    for probe in corpus.probes:
        if probe.conversation_id not in conv_ids:
            continue
        if any(e not in turn_ids for e in probe.evidence):
            dropped += 1
            continue
        if spec.categories is not None and str(probe.category) not in spec.categories:
            continue
        probes.append(probe)
    if spec.max_probes is not None:
        probes = _sample(probes, spec.max_probes)
    out = Corpus(corpus.name, tuple(conversations), tuple(probes), corpus.source, corpus.sha256, corpus.format)
    return Selection(out, dropped, dropped_sessions)


def _sample(probes: list[Probe], per_conversation: int) -> list[Probe]:
    """Up to ``per_conversation`` probes of each conversation, round-robin over categories."""
    by_conv: "OrderedDict[str, OrderedDict[str, list[Probe]]]" = OrderedDict()
    for p in probes:
        by_conv.setdefault(p.conversation_id, OrderedDict()).setdefault(str(p.category), []).append(p)
    chosen: set[tuple[str, str]] = set()
    for cats in by_conv.values():
        queues = [list(v) for v in cats.values()]
        taken = 0
        while taken < per_conversation and any(queues):
            for q in queues:
                if q and taken < per_conversation:
                    p = q.pop(0)
                    chosen.add((p.conversation_id, p.id))
                    taken += 1
    return [p for p in probes if (p.conversation_id, p.id) in chosen]
