"""English planted sentences (Faker ``en_US``); the padding chat is the synthetic generator's own."""

from __future__ import annotations

from datetime import date

from lyra_lab.synthetic._facts import WHEN
from lyra_lab.synthetic._phrasebook import Changed, Happened, Phrasebook, Said, Told
from lyra_lab.synthetic._plan import MONTH_NAMES
from lyra_lab.synthetic._templates import SLOTS, TOPICS


def _date(day: date) -> str:
    return f"{day.day} {MONTH_NAMES[day.month - 1]}"


BOOK = Phrasebook(
    code="en", locale="en_US", title="Catching up", date=_date,
    lives_in=Said(("My friend {p} lives in {v} now, so we mostly talk on the phone.",
                   "Had a long call with {p}, who is based in {v} these days; the weather there sounds grim."),
                  ("Where does {p} live?", "Which city does {p} live in?"),
                  ("It's good that you keep in touch even from far away.",
                   "Long calls with old friends are worth a lot.")),
    works_at=Said(("My friend {p} works at {v} and can't stop talking about it.",
                   "{p} gave me a tour of ‹his|her› office at {v} today, ‹he|she› seems happy there."),
                  ("Where does {p} work?", "Which company does {p} work for?"),
                  ("Sounds like a job that keeps them busy!", "It's nice to get a glimpse of a friend's day.")),
    birthday=Said(("Note to self: {p}'s birthday is on {v}, I must not forget it this year.",
                   "{p} is throwing a small party for ‹his|her› birthday on {v}."),
                  ("When is {p}'s birthday?", "On what date is {p}'s birthday?"),
                  ("Noted, a reminder a few days before would help.", "A small party is often the best kind.")),
    cat=Said(("{p} adopted a cat called {v}, and it already rules the flat.",
              "Spent the evening at {p}'s place being ignored by ‹his|her› cat, {v}."),
             ("What is the name of {p}'s cat?", "What is {p}'s cat called?"),
             ("Cats take over fast, that's well known.", "Being ignored by a cat is practically a compliment.")),
    children=Said(("{p} has {v} children and still finds time to run every morning.",
                   "Dinner at {p}'s was chaos in the best way: {v} kids and a dog."),
                  ("How many children does {p} have?", "How many kids does {p} have?"),
                  ("That's impressive energy.", "Sounds like a lively evening!")),
    moved=Changed(("My friend {p} lives in {v}, right by the station.",
                   "{p} keeps inviting me to {v}, where ‹he|she› lives."),
                  ("{p} just moved from {old} to {new}!", "Big news from {p}: ‹he|she›'s moved to {new}."),
                  ("Where does {p} live now?", "Which city does {p} live in now?"),
                  ("Sounds like a nice spot.", "You should take ‹him|her› up on it one day."),
                  ("A big move! Exciting for ‹him|her›.", "A fresh start, how lovely.")),
    new_employer=Changed(("{p} works at {v}, has done for years.", "{p} had another long week at {v}."),
                         ("{p} left {old} and starts at {new} on Monday.",
                          "{p} changed jobs: ‹he|she› is at {new} now."),
                         ("Where does {p} work now?", "Which company does {p} work for now?"),
                         ("Years in one place is rare these days.", "Long weeks take it out of anyone."),
                         ("Good for ‹him|her›, a new job is a big step.", "A change can do wonders.")),
    events=(Happened(("I had lunch with {p} {when}, first time in ages.",), "When did I have lunch with {p}?",
                     ("Catching up over lunch is the best.",)),
            Happened(("Spent an hour on the phone with {p} {when}.",), "When did I spend an hour on the phone with {p}?",
                     ("An hour flies by with the right person.",)),
            Happened(("I helped {p} paint ‹his|her› kitchen {when}. My arms are dead.",),
                     "When did I help {p} paint the kitchen?", ("Painting is a real workout!",))),
    moving_to=Told(("{name} is moving to {v} in the spring.", "{name} told me they're relocating to {v}."),
                   "Where is {rel} moving to?", ("Big move! You'll have somewhere new to visit.",)),
    adopted=Told(("{name} adopted a puppy called {v}!", "{name} sent me photos of their new puppy, {v}."),
                 "What is the name of the puppy {rel} adopted?", ("A puppy! Lovely news.",)),
    relation="my colleague from {company}",
    introductions=("By the way, {rel} is called {name}.", "I finally had coffee with {rel}, {name}."),
    intro_replies=("That sounds nice!", "Good to hear you two get along."),
    when=WHEN, topics=TOPICS, slots=SLOTS)
