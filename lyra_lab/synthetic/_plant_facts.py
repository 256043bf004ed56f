"""Which facts to plant in one user's history, and when: the synthetic generator's kinds, reused.

Each planted statement gets its own short session at a free moment between the
user's real sessions (see ``_plant_slots``).  A kind whose topic words already
occur in the user's real turns is skipped, so a planted fact never contradicts
one the user really stated ("my dog Rex" against a planted dog "Biscuit").
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from lyra_lab.synthetic._plant_slots import Moments
from lyra_lab.synthetic._corpus import mentions
from lyra_lab.synthetic._plan import MIN_UPDATE_GAP, Plant, ProbeDraft, natural_date
from lyra_lab.synthetic._plant_templates import PlantTemplates
from lyra_lab.synthetic._facts import FactKind

EVIDENCE_KINDS: tuple[str, ...] = ("single_fact", "updated_fact", "temporal", "multi_hop")


@dataclass(eq=False)
class Placed:
    """A planted statement and the start of the session that carries it."""

    at: datetime
    plant: Plant
    category: str


def capacity(real_text: str, t: PlantTemplates) -> dict[str, int]:
    """How many probes of each evidence kind one conversation can take (abstention is counted later)."""
    return {"single_fact": len(_free_facts(real_text, t)), "updated_fact": len(t.updates),
            "temporal": len(t.events), "multi_hop": min(len(t.links), len(t.relations), len(t.people))}


def _free_facts(real_text: str, t: PlantTemplates) -> list[FactKind]:
    return [k for k in t.facts if not any(mentions(real_text, term) for term in k.terms)]


def plan_facts(rng: random.Random, moments: Moments, counts: dict[str, int],
               real_text: str, t: PlantTemplates) -> tuple[list[Placed], list[ProbeDraft]]:
    """Choose the facts of each evidence kind and the moments that state them, written from ``t``.

    Kinds take turns, one probe each, so that when the free moments run out every
    kind has had its share; the caller counts what was planted.
    """
    placed: list[Placed] = []
    drafts: list[ProbeDraft] = []

    def put(at: datetime, plant: Plant, category: str) -> Plant:
        placed.append(Placed(at, plant, category))
        return plant

    def single_facts() -> Iterator[None]:
        for kind in rng.sample(_free_facts(real_text, t), counts.get("single_fact", 0)):
            at = moments.take(rng)
            if at is None:
                return
            value, paraphrase = rng.choice(kind.values), rng.randrange(len(kind.statements))
            said = put(at, Plant(kind.statements[paraphrase].format(v=value), rng.choice(kind.replies)),
                       "single_fact")
            drafts.append(ProbeDraft("single_fact", rng.choice(kind.questions), value, [said],
                                     meta={"fact_key": kind.key, "paraphrase": paraphrase}))
            yield

    def updated_facts() -> Iterator[None]:
        for kind in rng.sample(t.updates, counts.get("updated_fact", 0)):
            pair = moments.take_pair(rng, MIN_UPDATE_GAP) or moments.take_pair(rng, timedelta(hours=1))
            if pair is None:
                return
            old, new = rng.sample(kind.values, 2)
            was = put(pair[0], Plant(rng.choice(kind.statements).format(v=old), rng.choice(kind.replies)),
                      "updated_fact")
            now = put(pair[1], Plant(rng.choice(kind.updates).format(old=old, new=new),
                                     rng.choice(kind.update_replies)), "updated_fact")
            drafts.append(ProbeDraft("updated_fact", rng.choice(kind.questions), new, [now], [was],
                                     meta={"fact_key": kind.key, "old_value": old}))
            yield

    def temporal() -> Iterator[None]:
        for kind in rng.sample(t.events, counts.get("temporal", 0)):
            at = moments.take(rng)
            if at is None:
                return
            when, days_before = rng.choice(t.when)
            paraphrase = rng.randrange(len(kind.statements))
            day = at.date() - timedelta(days=days_before)
            said = put(at, Plant(kind.statements[paraphrase].format(when=when), rng.choice(kind.replies)),
                       "temporal")
            drafts.append(ProbeDraft("temporal", kind.question, day.isoformat(), [said],
                                     meta={"fact_key": kind.key, "paraphrase": paraphrase,
                                           "natural": natural_date(day), "relative": when,
                                           "days_before": days_before}))
            yield

    def multi_hop() -> Iterator[None]:
        hops = counts.get("multi_hop", 0)
        # a relation and its person are drawn together: the relation's gender agrees with the person's
        for (relation, name), kind in zip(rng.sample(list(zip(t.relations, t.people)), hops),
                                          rng.sample(t.links, hops)):
            pair = moments.take_pair(rng, timedelta(hours=1))
            if pair is None:
                return
            value = rng.choice(kind.values)
            intro = put(pair[0], Plant(rng.choice(t.introductions).format(rel=relation, name=name),
                                       rng.choice(t.intro_replies)), "multi_hop")
            link = put(pair[1], Plant(rng.choice(kind.statements).format(name=name, v=value),
                                      rng.choice(kind.replies)), "multi_hop")
            drafts.append(ProbeDraft("multi_hop", kind.question.format(rel=relation), value, [intro, link],
                                     meta={"fact_key": kind.key, "relation": relation, "person": name}))
            yield

    turns = [single_facts(), updated_facts(), temporal(), multi_hop()]
    while turns:
        turns = [kind for kind in turns if next(kind, StopIteration) is not StopIteration]
    return placed, drafts
