"""Where the synthetic corpus plants its facts: which session says what, and what is asked.

Planning happens before any turn is written, on session start times only; the
renderer then gives each planted statement its turn id.  The constraints that
make a probe meaningful live here: an update comes at least two weeks after the
value it replaces, a two-session fact introduces the person in an earlier
session than the one that tells something about them, and no session carries
more than a few planted statements (so most of the chat stays ordinary).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, NamedTuple

from lyra_lab._registry import ConfigError
from lyra_lab.synthetic import _facts as F

MIN_UPDATE_GAP = timedelta(days=14)
MAX_PLANTS_PER_SESSION = 3
MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
               "October", "November", "December")


@dataclass(eq=False)
class Plant:
    """A planted user statement and the assistant's reply; the renderer fills ``turn_id``."""

    user: str
    reply: str
    turn_id: str | None = None

    @property
    def rendered_id(self) -> str:
        """The id of the turn the renderer placed this plant in."""
        if self.turn_id is None:
            raise RuntimeError(f"plant {self.user[:40]!r} was never rendered into a turn")
        return self.turn_id


@dataclass(eq=False)
class ProbeDraft:
    """A probe before its evidence turns have ids."""

    category: str
    question: str
    answer: str
    evidence: list[Plant] = field(default_factory=list)
    superseded: list[Plant] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


def natural_date(day: date) -> str:
    """``2024-03-14`` → ``"14 March 2024"`` (no locale: strftime's %B would depend on it)."""
    return f"{day.day} {MONTH_NAMES[day.month - 1]} {day.year}"


class _Sessions:
    """Session start times and how many planted statements each already holds."""

    def __init__(self, starts: list[datetime]):
        self.starts = starts
        self.plants: list[list[Plant]] = [[] for _ in starts]

    def free(self, indexes: range | list[int]) -> list[int]:
        return [i for i in indexes if len(self.plants[i]) < MAX_PLANTS_PER_SESSION]

    def pick(self, rng: random.Random, candidates: list[int], what: str) -> int:
        if not candidates:
            raise ConfigError(f"not enough sessions to plant {what}: use more sessions or fewer facts")
        return rng.choice(candidates)

    def put(self, index: int, plant: Plant) -> Plant:
        self.plants[index].append(plant)
        return plant


class PlantCounts(NamedTuple):
    """How many facts of each planted category one conversation gets (abstention needs no planting)."""

    single_facts: int
    updated_facts: int
    temporal: int
    multi_hop: int


def plan_conversation(rng: random.Random, starts: list[datetime],
                      counts: PlantCounts) -> tuple[list[list[Plant]], list[ProbeDraft]]:
    """Choose the facts of one conversation and the sessions that state them.

    Returns:
        The planted statements per session (in planting order; the renderer shuffles
        them into the chat) and the probe drafts, abstention excluded (it needs the
        rendered text to know what was never said).
    """
    single_facts, updated_facts, temporal, multi_hop = counts
    plan = _Sessions(starts)
    everywhere = range(len(starts))
    drafts: list[ProbeDraft] = []

    for kind in rng.sample(F.FACTS, single_facts):
        value = rng.choice(kind.values)
        paraphrase = rng.randrange(len(kind.statements))
        at = plan.pick(rng, plan.free(everywhere), kind.key)
        said = plan.put(at, Plant(kind.statements[paraphrase].format(v=value), rng.choice(kind.replies)))
        drafts.append(ProbeDraft("single_fact", rng.choice(kind.questions), value, [said],
                                 meta={"fact_key": kind.key, "paraphrase": paraphrase}))

    for update in rng.sample(F.UPDATES, updated_facts):
        old, new = rng.sample(update.values, 2)

        def later(i: int) -> list[int]:
            # Session starts a day beyond the gap: turns sit at different offsets inside their
            # sessions, so equal-gap starts could put the two statements seconds short of it.
            return plan.free([j for j in everywhere if starts[j] - starts[i] >= MIN_UPDATE_GAP + timedelta(days=1)])

        first = plan.pick(rng, [i for i in plan.free(everywhere) if later(i)], update.key)
        second = plan.pick(rng, later(first), update.key)
        was = plan.put(first, Plant(rng.choice(update.statements).format(v=old), rng.choice(update.replies)))
        now = plan.put(second, Plant(rng.choice(update.updates).format(old=old, new=new),
                                     rng.choice(update.update_replies)))
        drafts.append(ProbeDraft("updated_fact", rng.choice(update.questions), new, [now], [was],
                                 meta={"fact_key": update.key, "old_value": old}))

    for event in rng.sample(F.EVENTS, temporal):
        when, days_before = rng.choice(F.WHEN)
        paraphrase = rng.randrange(len(event.statements))
        at = plan.pick(rng, plan.free(everywhere), event.key)
        day = starts[at].date() - timedelta(days=days_before)
        said = plan.put(at, Plant(event.statements[paraphrase].format(when=when), rng.choice(event.replies)))
        drafts.append(ProbeDraft("temporal", event.question, day.isoformat(), [said],
                                 meta={"fact_key": event.key, "paraphrase": paraphrase, "natural": natural_date(day),
                                       "relative": when, "days_before": days_before}))

    people = zip(rng.sample(F.RELATIONS, multi_hop), rng.sample(F.PEOPLE, multi_hop),
                 rng.sample(F.LINKS, multi_hop))
    for relation, name, link_kind in people:
        value = rng.choice(link_kind.values)
        first = plan.pick(rng, [i for i in plan.free(everywhere) if plan.free(range(i + 1, len(starts)))],
                          link_kind.key)
        second = plan.pick(rng, plan.free(range(first + 1, len(starts))), link_kind.key)
        intro = plan.put(first, Plant(rng.choice(F.INTRODUCTIONS).format(rel=relation, name=name),
                                      rng.choice(F.INTRO_REPLIES)))
        link = plan.put(second, Plant(rng.choice(link_kind.statements).format(name=name, v=value),
                                      rng.choice(link_kind.replies)))
        drafts.append(ProbeDraft("multi_hop", link_kind.question.format(rel=relation), value, [intro, link],
                                 meta={"fact_key": link_kind.key, "relation": relation, "person": name}))
    return plan.plants, drafts
