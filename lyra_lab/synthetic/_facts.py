"""The facts the synthetic corpus plants, and the questions that probe them.

Every kind lists its values, several user statements (paraphrases: some avoid the
question's key word, so lexical recall alone is not enough), assistant replies
that do not repeat the value (so the evidence is the user's turn alone), and the
words that name its topic (``terms``): an unplanted kind becomes an abstention
probe when none of its terms or values occur anywhere in the conversation.

Value pools are disjoint from each other and from the filler slots where a
clash would make a question ambiguous (the cities a user lives in are not the
travel destinations of the filler, for example).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FactKind:
    """A static fact stated once ("single_fact")."""

    key: str
    values: tuple[str, ...]
    statements: tuple[str, ...]  # "{v}" is the value
    questions: tuple[str, ...]
    replies: tuple[str, ...]
    terms: tuple[str, ...]


@dataclass(frozen=True)
class UpdateKind:
    """A fact stated, then changed weeks later ("updated_fact"); the newer value is the answer."""

    key: str
    values: tuple[str, ...]
    statements: tuple[str, ...]  # "{v}"
    updates: tuple[str, ...]  # "{old}" (optional) and "{new}"
    questions: tuple[str, ...]
    replies: tuple[str, ...]
    update_replies: tuple[str, ...]


@dataclass(frozen=True)
class EventKind:
    """Something that happened on a day ("temporal"); ``{when}`` ends each statement."""

    key: str
    statements: tuple[str, ...]
    question: str
    replies: tuple[str, ...]


@dataclass(frozen=True)
class LinkKind:
    """Half of a two-session fact ("multi_hop"): "{name}" gets an attribute "{v}"."""

    key: str
    values: tuple[str, ...]
    statements: tuple[str, ...]  # "{name}" and "{v}", never the relation
    question: str  # "{rel}"
    replies: tuple[str, ...]


# (phrase, days before the session day)
WHEN: tuple[tuple[str, int], ...] = (("today", 0), ("earlier today", 0), ("this morning", 0), ("yesterday", 1))

FACTS: tuple[FactKind, ...] = (
    FactKind("dog_name", ("Biscuit", "Juniper", "Mochi", "Waffles", "Ziggy", "Bramble"),
             ("Ugh, my dog {v} chewed through another shoe today. How do I stop that?",
              "Oh, I never told you: my dog is called {v}. Total menace, I love him.",
              "Took {v} to the groomer and he came back looking like a poodle. Still the best boy."),
             ("What is my dog's name?", "What's my dog called?"),
             ("Chewing is often boredom: a puzzle feeder and a longer walk usually help.",
              "Ha, sounds like a character. Menaces are the best kind."),
             ("dog", "puppy")),
    FactKind("sister_job", ("marine biologist", "tax lawyer", "paediatric nurse", "train driver", "sommelier"),
             ("My sister is a {v}, so she never has a free weekend.",
              "Had dinner with my sister; being a {v} sounds exhausting the way she tells it.",
              "My big sis works as a {v} and somehow still finds time to call me daily."),
             ("What does my sister do for a living?", "What is my sister's job?"),
             ("That sounds like a demanding job. It's nice that you two stay close.",
              "She sounds dedicated! Do you get to see her often?"),
             ("sister",)),
    FactKind("allergy", ("shellfish", "peanuts", "penicillin", "kiwi fruit", "sesame"),
             ("Just so you know, I'm allergic to {v}, so keep that in mind for recipes.",
              "Found out the hard way years ago that {v} and I do not get along. Hives everywhere.",
              "Reminder to self and to you: no {v} for me, ever. Allergy."),
             ("What am I allergic to?", "Which allergy do I have?"),
             ("Noted, I'll keep that in mind whenever we talk about food.",
              "That sounds scary. Do you carry anything for emergencies?"),
             ("allergic", "allergy", "allergies")),
    FactKind("hometown", ("Tromsø", "Galway", "Valparaíso", "Ljubljana", "Dunedin", "Bilbao"),
             ("I grew up in {v}, so this so-called cold snap is nothing to me.",
              "Whenever I smell the sea I'm ten years old again, back in {v} where I was a kid.",
              "My hometown is {v}. I still miss it sometimes."),
             ("Where did I grow up?", "What is my hometown?"),
             ("Childhood places stick with you. What do you miss most?",
              "Ha, a real local's toughness. Do you visit much?"),
             ("grew up", "hometown")),
    FactKind("grandmother_name", ("Rosa", "Aiko", "Margit", "Dolores", "Wilhelmina"),
             ("My grandmother {v} turns ninety this year and still beats me at cards.",
              "Called Grandma {v} tonight; she wants the recipe for the cake I made.",
              "My gran, {v}, taught me to knit when I was six."),
             ("What is my grandmother's name?", "What's my gran called?"),
             ("She sounds wonderful. Ninety and still sharp!",
              "That's lovely. Those calls mean a lot to grandparents."),
             ("grandmother", "grandma", "gran")),
    FactKind("favourite_book", ("Middlemarch", "Piranesi", "The Left Hand of Darkness", "Stoner",
                                "The Remains of the Day"),
             ("My all-time favourite book is {v}. I reread it every winter.",
              "If I could only keep one novel it would be {v}.",
              "Started {v} again for maybe the fifth time. Never gets old."),
             ("What is my favourite book?", "Which novel do I love most?"),
             ("A yearly reread is a lovely ritual.",
              "Books you can reread forever are rare. What keeps pulling you back?"),
             ("favourite book", "novel")),
    FactKind("instrument", ("cello", "banjo", "clarinet", "ukulele", "trombone"),
             ("I've played the {v} since I was nine, though I'm rusty now.",
              "Dusted off my {v} tonight. My fingers remember more than I expected.",
              "The neighbours must love me, I practised the {v} for two hours."),
             ("What instrument do I play?", "Which instrument have I played since childhood?"),
             ("Muscle memory is amazing. Playing even ten minutes a day brings it back.",
              "Two hours is dedication! How did it sound?"),
             ("instrument", "play the")),
    FactKind("fear", ("heights", "deep water", "moths", "thunderstorms", "escalators"),
             ("Weird confession: I'm terrified of {v}. Always have been.",
              "My biggest phobia is {v}, and yes I know it's irrational.",
              "Today proved again that {v} and I will never be friends. Pure panic."),
             ("What am I afraid of?", "What is my phobia?"),
             ("Lots of people have a fear like that; it's nothing to be embarrassed about.",
              "Phobias aren't about logic. Gentle exposure can help, if you ever want to try."),
             ("afraid", "terrified", "phobia", "scared")),
    FactKind("degree", ("geology", "art history", "linguistics", "economics", "marine engineering"),
             ("I studied {v} at university, not that I use it much now.",
              "Funny, my degree is in {v} and here I am doing something totally different.",
              "Back when I was a {v} student I pulled so many all-nighters."),
             ("What did I study at university?", "What is my degree in?"),
             ("Degrees leave their mark even when the career goes elsewhere.",
              "All-nighters are a rite of passage. Do you miss student life?"),
             ("university", "degree", "studied")),
    FactKind("plant_name", ("Gerald", "Fernanda", "Sir Leafalot", "Kevin", "Bartholomew"),
             ("I named my fiddle-leaf fig {v}. He is dramatic about light.",
              "{v}, my fiddle-leaf fig, dropped another leaf. Drama queen.",
              "My fig tree is called {v} and he has a new leaf!"),
             ("What did I name my fiddle-leaf fig?", "What is my fig tree called?"),
             ("Fiddle-leaf figs are famously fussy. Keep him away from draughts.",
              "A new leaf is a great sign; he likes where he is."),
             ("fig",)),
    FactKind("birthday", ("12 October", "3 April", "29 July", "18 January", "6 December"),
             ("My birthday is on {v}, in case you want to put it in your imaginary calendar.",
              "I'm a {v} baby, and I always want cake, not presents.",
              "Planning something small for my birthday, {v}. Nothing fancy."),
             ("When is my birthday?", "What date is my birthday?"),
             ("Noted! Cake over presents is a strong philosophy.",
              "Small birthdays are often the best ones."),
             ("birthday",)),
    FactKind("favourite_band", ("Khruangbin", "Big Thief", "Fleet Foxes", "Bonobo", "Beach House"),
             ("My favourite band is {v}; I've seen them live three times.",
              "Honestly nobody comes close to {v} for me. Best band around.",
              "Got tickets to see {v} again! Fourth time!"),
             ("What is my favourite band?", "Which band do I love most?"),
             ("Three times live is real devotion!", "Fourth time! You must know every song by now."),
             ("band",)),
)

UPDATES: tuple[UpdateKind, ...] = (
    UpdateKind("home_city", ("Lisbon", "Porto", "Utrecht", "Leeds", "Montréal", "Gdańsk", "Aarhus"),
               ("I live in {v} these days, right by the river.",
                "Rent in {v} is getting ridiculous; that's where I live, for context."),
               ("Big news: I've moved from {old} to {new}! Boxes everywhere.",
                "Officially a {new} resident now, the movers came on Tuesday.",
                "Settling into {new} after leaving {old}. The new flat is tiny but bright."),
               ("Which city do I live in?", "Where do I live now?"),
               ("Sounds like a nice spot. Is it quiet?", "That's rough. Cities everywhere are getting pricey."),
               ("Congratulations on the move! Unpack the kettle first.", "A fresh start! How's the new place?")),
    UpdateKind("wedding_month", ("May", "June", "September", "October"),
               ("We finally booked the wedding for {v}!",
                "Wedding planning update: it's happening in {v}, the venue is confirmed."),
               ("Actually the wedding moved to {new}, the venue double-booked {old}.",
                "Change of plans: the wedding is now in {new}. Long story."),
               ("When is my wedding?", "Which month is my wedding in?"),
               ("Congratulations! That's exciting.", "Wonderful news, a confirmed venue is a big step."),
               ("Annoying, but at least it's settled now.", "Plans change! Is everyone able to make the new date?")),
    UpdateKind("job", ("junior accountant", "barista", "data analyst", "UX researcher", "lab technician"),
               ("I work as a {v} at the moment, it pays the bills.",
                "Long shift today. Being a {v} is more tiring than people think."),
               ("I got the new job! I'm a {new} now, no longer a {old}.",
                "First week as a {new} done. So different from my old role."),
               ("What is my job?", "What do I do for work now?"),
               ("Paying the bills matters. Do you enjoy it?", "Rest up, long shifts take it out of you."),
               ("Congratulations! That's a big change.", "A whole new role! How are your new colleagues?")),
    UpdateKind("hair_colour", ("teal", "copper", "platinum blonde", "lilac", "jet black"),
               ("I dyed my hair {v} last weekend and I'm obsessed.",
                "Everyone at work keeps commenting on my {v} hair."),
               ("Dyed my hair again: goodbye {old}, hello {new}.",
                "New look! My hair is {new} now."),
               ("What colour is my hair?", "What colour did I dye my hair most recently?"),
               ("Bold! A change like that can feel great.", "Sounds like it's a hit."),
               ("Ha, you like to keep things fresh.", "Fun! How long did it take?")),
    UpdateKind("commute", ("bike", "tram", "bus", "ferry"),
               ("I commute by {v}, about forty minutes each way.",
                "My commute is by {v}, which is fine until it rains."),
               ("No more {old} for me, I commute by {new} now.",
                "Switched my commute to the {new} this week and I'm a new person."),
               ("How do I get to work?", "How do I commute?"),
               ("Forty minutes is manageable with good music.", "Rain makes every commute worse."),
               ("A better commute really changes your day.", "Nice, a change of routine can be refreshing.")),
    UpdateKind("summer_trip", ("Iceland", "Japan", "Morocco", "Chile", "Norway"),
               ("We're planning a summer trip to {v}, so excited.",
                "Booked the flights: {v} this summer!"),
               ("Change of plan, the summer trip is to {new} now, not {old}.",
                "We swapped the summer holiday destination to {new}."),
               ("Where am I going on my summer trip?", "What is my summer holiday destination?"),
               ("How exciting! Summer will come fast.", "Flights booked makes it real!"),
               ("Still exciting, just different!", "Good choice, have you started planning?")),
    UpdateKind("book_club_day", ("Monday", "Tuesday", "Thursday", "Sunday"),
               ("Book club meets on {v} evenings, it's my favourite night of the week.",
                "Can't do anything on {v} nights, that's book club."),
               ("Book club switched from {old} to {new}, which suits me better.",
                "Heads up, book club is on {new} evenings from now on."),
               ("Which day does my book club meet?", "What evening is book club on?"),
               ("A weekly ritual with friends is good for the soul.", "Protected evenings are important."),
               ("Good that it suits you better.", "Noted. Does the new day work for everyone?")),
)

EVENTS: tuple[EventKind, ...] = (
    EventKind("pottery", ("I started a pottery class {when}! My bowl looks like a hat.",
                          "First lesson at the ceramics studio {when}. Clay everywhere."),
              "When did I start the pottery class?",
              ("Everyone's first bowl looks like a hat. It gets better fast!",)),
    EventKind("parkrun", ("I ran my first parkrun {when}, didn't even walk once!",
                          "Did the free Saturday 5k in the park for the first time {when}, no walking!"),
              "When did I run my first parkrun?", ("That's brilliant! How did you feel at the finish?",)),
    EventKind("glasses", ("Picked up my new glasses {when} and the world is so sharp.",
                          "Collected my new specs {when}; turns out trees have individual leaves."),
              "When did I get my new glasses?", ("Amazing how much difference a new prescription makes.",)),
    EventKind("passport", ("Finally renewed my passport {when}, one less thing to worry about.",),
              "When did I renew my passport?", ("Great, that's a chore off the list.",)),
    EventKind("bouldering", ("I tried bouldering for the first time {when}. My forearms are dead.",
                             "Went to the climbing wall for the very first time {when}. My forearms are dead."),
              "When did I first try bouldering?", ("Forearm pump is the classic first-session souvenir!",)),
    EventKind("interview", ("Had a job interview at the aquarium {when}. Fingers crossed.",),
              "When was my interview at the aquarium?", ("Fingers crossed! How do you think it went?",)),
    EventKind("tomatoes", ("I planted the tomato seedlings {when}. Operation salad has begun.",
                           "Put the little tomato plants in the veg patch {when}. Operation salad has begun."),
              "When did I plant the tomato seedlings?", ("Operation salad! Keep them warm at night.",)),
    EventKind("flu_jab", ("Got my flu jab {when}, arm's a bit sore.",
                          "Had my winter vaccination {when}, arm's a bit sore."),
              "When did I get my flu jab?", ("A sore arm is normal; it should ease in a day or two.",)),
    EventKind("food_bank", ("Did my first volunteer shift at the food bank {when}. Felt good.",),
              "When did I do my first shift at the food bank?", ("That's a lovely thing to do.",)),
    EventKind("sourdough", ("Baked my first sourdough loaf {when}! It's a bit flat but edible.",
                            "Baked my first loaf from my own starter {when}! It's a bit flat but edible."),
              "When did I bake my first sourdough loaf?", ("Flat but edible is a win for a first loaf.",)),
)

RELATIONS: tuple[str, ...] = ("best friend", "cousin", "manager", "neighbour", "flatmate", "mentor")
PEOPLE: tuple[str, ...] = ("Saoirse", "Dmitri", "Anouk", "Tariq", "Wren", "Mateus", "Yuki", "Folake",
                           "Henrik", "Lucía", "Nikhil", "Greta")
# introduce "{rel}" as "{name}"; the link statement then names only the person
INTRODUCTIONS: tuple[str, ...] = (
    "I'm meeting my {rel} {name} for lunch on Sunday.",
    "My {rel}, {name}, says hi by the way.",
    "Spent the afternoon helping my {rel} {name} paint a fence.",
)
INTRO_REPLIES: tuple[str, ...] = ("That sounds nice!", "Say hi back from me!", "Lovely way to spend a day.")

LINKS: tuple[LinkKind, ...] = (
    LinkKind("new_job", ("park ranger", "sound engineer", "florist", "pilot"),
             ("{name} just got a job as a {v}!", "Guess what, {name} is going to be a {v}."),
             "What job did my {rel} just get?", ("Good for them, what a change!",)),
    LinkKind("moving_to", ("Reykjavík", "Hobart", "Tallinn", "Marseille"),
             ("{name} is moving to {v} in the spring.", "{name} told me they're relocating to {v}."),
             "Where is my {rel} moving to?", ("Big move! You'll have somewhere new to visit.",)),
    LinkKind("new_hobby", ("fencing", "falconry", "glassblowing", "archery"),
             ("{name} has taken up {v}, of all things.", "{name} won't stop talking about {v} lessons."),
             "What hobby has my {rel} taken up?", ("That's an unusual hobby, fun though!",)),
    LinkKind("baby_name", ("Isla", "Noor", "Maren", "Ottilie"),
             ("{name} had a baby girl called {v}!", "{name} sent photos of baby {v}, she's tiny."),
             "What is the name of my {rel}'s baby?", ("Congratulations to them! Lovely name.",)),
)

# questions about kinds of fact this generator never plants
NEVER: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("What is my horse called?", ("horse", "pony")),
    ("Which marathon did I run last year?", ("marathon",)),
    ("What colour is my motorbike?", ("motorbike", "motorcycle")),
    ("What is my tattoo of?", ("tattoo",)),
    ("What did I name my boat?", ("boat", "sailing")),
    ("Which chess club do I belong to?", ("chess",)),
    ("What is my daughter's name?", ("daughter",)),
    ("Where does my brother live?", ("brother",)),
    ("What brand of saxophone do I own?", ("saxophone",)),
    ("Where did I go skydiving?", ("skydiving", "skydive", "parachute")),
    ("What is my podcast called?", ("podcast",)),
    ("What is my blood type?", ("blood type",)),
)

USER_NAMES: tuple[str, ...] = ("Maya", "Jonas", "Ama", "Ruairi", "Sofia", "Kenji", "Beatriz", "Olu")
ASSISTANT_NAME = "Lyra"
