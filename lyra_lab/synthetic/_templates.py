"""Ordinary chat for the synthetic corpus: the filler that planted facts hide in.

Each topic is a narrow kind of request (what to cook with an ingredient, how to
survive a deadline) so that any of its assistant replies follows any of its user
lines.  Slots (``{dish}``) are filled from ``SLOTS`` by the seeded RNG, which turns
a few dozen templates into several hundred distinct lines: retrieval has to
work past many near-duplicates that share words with the questions.

Filler never states a personal fact of the kinds in ``_facts`` (pets,
relatives, hometown, …): a question about an unplanted fact must really have no
answer.  The generator checks the abstention terms against the rendered text
anyway, so a slip here costs an abstention candidate, never a wrong probe.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Topic:
    """A kind of ordinary exchange: (user line, assistant reply) templates sharing slots."""

    title: str
    slots: tuple[str, ...]
    exchanges: tuple[tuple[str, str], ...]


SLOTS: dict[str, tuple[str, ...]] = {
    "ingredient": ("leeks", "chickpeas", "butternut squash", "tofu", "cauliflower", "lentils",
                   "spinach", "aubergine", "mushrooms", "sweet potatoes", "halloumi", "fennel"),
    "dish": ("risotto", "traybake", "curry", "frittata", "soup", "stir-fry", "gratin", "pie", "pasta bake",
             "salad"),  # all take "a"
    "place": ("Kyoto", "Lyon", "Tbilisi", "Oaxaca", "Edinburgh", "Vienna", "Hanoi", "Cape Town",
              "Bruges", "Seville", "Krakow", "Naples"),
    "span": ("a long weekend", "four days", "a week", "ten days", "two nights"),
    "task": ("the quarterly report", "the budget review", "a client presentation", "the migration plan",
             "the hiring rubric", "the onboarding doc", "a grant application", "the sprint retro"),
    "who": ("team lead", "department head", "client", "new hire", "director", "project sponsor"),
    "show": ("Severance", "The Bear", "Slow Horses", "Shogun", "Only Murders in the Building",
             "Detectorists", "Succession", "Taskmaster"),
    "exercise": ("squats", "planks", "lunges", "push-ups", "deadlifts", "burpees", "yoga flows"),
    "plant": ("basil", "rosemary", "thyme", "mint", "lavender", "coriander", "parsley", "oregano", "sage",
              "lemon balm"),
    "gadget": ("laptop", "printer", "router", "smart speaker", "tablet", "e-reader", "old desktop"),
    "symptom": ("keeps disconnecting", "won't turn on", "is really slow", "makes a clicking noise",
                "keeps freezing", "won't connect to anything"),
    "genre": ("jazz", "ambient", "bossa nova", "old soul records", "lo-fi beats", "baroque music",
              "afrobeat", "post-rock"),
    "expense": ("groceries", "eating out", "subscriptions", "the electricity bill", "taxis",
                "birthday presents", "the phone bill"),
    "amount": ("40", "65", "90", "120", "150", "200"),
    "skill": ("touch typing", "knitting", "watercolour", "calligraphy", "Spanish verbs", "juggling",
              "sketching", "speed reading"),
    "weather": ("grey and drizzly", "weirdly warm", "freezing", "windy", "muggy", "bright but cold"),
    "errand": ("the weekly shop", "the laundry", "the dry cleaning", "the recycling", "a parcel return",
               "some batch cooking", "the ironing"),
}

TOPICS: tuple[Topic, ...] = (
    Topic("Cooking ideas", ("ingredient", "dish"), (
        ("I have a pile of {ingredient} to use up. Any ideas?",
         "Try a {dish}: it is forgiving, scales well, and {ingredient} holds up when reheated."),
        ("What can I make tonight with {ingredient}? Nothing too fancy.",
         "Keep it simple: {ingredient}, garlic, a tin of tomatoes and whatever herbs you have."),
        ("Thinking of making a {dish} with {ingredient}. Does that work?",
         "A {dish} with {ingredient} sounds great: soften an onion, add the {ingredient}, season well, finish with lemon."),
        ("I want a {dish} that's ready in thirty minutes, ideally with {ingredient}.",
         "Roast the {ingredient} hot and fast while you prep the rest; the {dish} will be on the table in half an hour."),
        ("Is a {dish} with {ingredient} something I can batch cook for the week?",
         "Yes, cooked {ingredient} keeps three to four days in a sealed box, so a {dish} batch cooks well."),
        ("My {dish} with {ingredient} tasted a bit flat last time. What's missing?",
         "Usually acid or salt: a spoon of miso or a squeeze of lime will wake up the {dish}."),
        ("Got home late and all I've got is {ingredient}, rice and an onion. Help.",
         "Fry the onion, add the {ingredient} and a spice you like, then serve it over the rice. Done."),
    )),
    Topic("Trip planning", ("place", "span"), (
        ("I might go to {place} for {span}. Is that enough time?",
         "{span} in {place} is plenty if you pick one area and explore it on foot."),
        ("What should I not miss in {place}?",
         "In {place} I'd book the one museum you care about ahead and leave the rest loose."),
        ("Any tips for getting around {place} without hiring a car?",
         "Public transport in {place} is decent; a day pass usually pays for itself."),
        ("Is {place} worth it in the off season?",
         "Shoulder season in {place} means fewer crowds and cheaper rooms, just pack layers."),
        ("Trying to budget {span} in {place}. Roughly what should I expect?",
         "Accommodation is the big cost; for {span} in {place}, price that first and add a daily food budget."),
        ("Where would you stay in {place} for {span} if you like walking everywhere?",
         "Stay central in {place}; for {span} the time you save on transit is worth the price."),
        ("Do I need to book much in advance for {place}?",
         "Book trains and rooms early; restaurants in {place} you can mostly walk into."),
    )),
    Topic("Work stress", ("task", "who"), (
        ("I'm drowning in {task} and it's due Friday.",
         "Break {task} into three chunks and do the ugliest one first thing tomorrow."),
        ("My {who} just moved the deadline for {task} forward. Again.",
         "Annoying! Ask your {who} which parts of {task} matter most by the new date."),
        ("How do I tell my {who} that {task} won't be ready in time?",
         "Tell your {who} early: give a new date and say what you need to hit it."),
        ("Spent the whole day on {task} and barely made progress.",
         "That sounds draining. Write down what's left on {task} so your brain can let go tonight."),
        ("I keep procrastinating on {task}. Any tricks?",
         "Try twenty-five minute blocks on {task} with the chat apps closed."),
        ("Had a tense meeting with my {who} about {task}.",
         "Tense meetings happen; a short written follow-up to your {who} usually clears the air."),
        ("Can you help me structure {task}? I don't know where to start.",
         "Open {task} with one page: the goal, the open questions, and who decides."),
    )),
    Topic("Weather and mood", ("weather", "errand"), (
        ("It's {weather} again and I have zero motivation.",
         "A short walk at lunch helps more than it should, even when it's {weather}."),
        ("Weather's {weather} so I'm staying in and doing {errand} instead.",
         "A {weather} day is a fine time for {errand}, then tea and a slow afternoon."),
        ("How do people stay cheerful when it's {weather} for weeks?",
         "Light, movement, and one thing to look forward to: that's the usual recipe for {weather} spells."),
        ("Forecast says {weather} all weekend. Ugh.",
         "Maybe plan something cosy indoors, since it's going to be {weather}."),
        ("Got {errand} done before the weather turned {weather}. Small win.",
         "Small wins count! Getting {errand} done is a good use of the day."),
    )),
    Topic("TV recommendations", ("show",), (
        ("Just finished {show}. What should I watch next?",
         "If you liked {show}, try something with a similar tone but a shorter season."),
        ("Is {show} worth starting? Everyone keeps mentioning it.",
         "{show} takes a couple of episodes to click; give it until episode three."),
        ("I'm halfway through {show} and can't tell if I like it.",
         "Halfway is a fair point to decide; if you're not curious what happens, drop it."),
        ("Need something light tonight, something like {show}.",
         "Something light like {show}? A panel show or a short comedy would suit."),
        ("Rewatching {show} for the third time, is that bad?",
         "Rewatching {show} is comfort viewing, nothing wrong with that."),
    )),
    Topic("Workouts", ("exercise",), (
        ("My knees hurt after {exercise}. Am I doing them wrong?",
         "Pain in the knees often means form: film yourself doing {exercise} and check alignment."),
        ("How many {exercise} should a beginner do?",
         "Start with three sets of eight {exercise} and focus on slow, controlled form."),
        ("I want a ten minute routine with {exercise} I can do before work.",
         "Warm up for two minutes, then alternate forty seconds of {exercise} with twenty seconds of rest."),
        ("Skipped my workout again. Is doing {exercise} at night okay?",
         "Doing {exercise} in the evening is fine; just leave an hour before bed."),
        ("Is it fine to do {exercise} every day?",
         "Give muscles a rest day between hard sessions, even for {exercise}."),
        ("Finally managed twenty {exercise} without stopping!",
         "Nice progress! Add a few {exercise} each week rather than big jumps."),
    )),
    Topic("Gardening", ("plant",), (
        ("My {plant} looks droopy. Too much water?",
         "Droopy {plant} is usually overwatering: let the top few centimetres dry out between waterings."),
        ("When should I repot my {plant}?",
         "Repot your {plant} in spring, one pot size up, with fresh compost."),
        ("Can I grow {plant} on a north-facing windowsill?",
         "North light is tricky for {plant}; a grow light or the brightest window will help."),
        ("The leaves on my {plant} are going yellow at the edges.",
         "Yellow edges often mean a nutrient issue or a draught; feed your {plant} lightly and move it."),
        ("Is it too late in the season to plant {plant}?",
         "You can usually still start {plant} indoors and move it out once nights warm up."),
    )),
    Topic("Tech help", ("gadget", "symptom"), (
        ("My {gadget} {symptom}. Any idea why?",
         "First try a full power cycle: unplug it for thirty seconds and check for updates."),
        ("Ugh, my {gadget} {symptom} right before a call.",
         "Worst timing! For now use your phone for the call, then reset the {gadget} afterwards."),
        ("Should I just replace my {gadget}? It {symptom}.",
         "Before replacing the {gadget}, a factory reset is worth a try; it often fixes this."),
        ("Tried restarting but my {gadget} still {symptom}.",
         "If the {gadget} still misbehaves after a restart, look at power-saving settings, then the battery or cable."),
    )),
    Topic("Music", ("genre",), (
        ("I need some {genre} to focus while working.",
         "For focus, {genre} without vocals works well; make a long playlist and don't skip."),
        ("Been listening to a lot of {genre} lately. Recommend me something?",
         "Try a radio-style mix of {genre}; it's a good way to find new names."),
        ("What's a good entry point into {genre}?",
         "Start with a well-loved compilation of {genre}, then follow the artists you like."),
        ("Is {genre} too sleepy for a dinner party?",
         "Played quietly, {genre} works well as a dinner backdrop; switch to something livelier later."),
    )),
    Topic("Money", ("expense", "amount"), (
        ("I spent {amount} euros on {expense} this month. Is that a lot?",
         "{amount} on {expense} isn't outrageous, but tracking it for a month will show patterns."),
        ("How do I cut down on {expense}? I'd like to keep it under {amount} euros.",
         "Pick one rule for {expense}, like a weekly cap, rather than cutting everything."),
        ("Setting a budget of {amount} a month for {expense}. Realistic?",
         "A budget of {amount} for {expense} is realistic if you review it weekly, not just monthly."),
        ("Checked my statement and {expense} is way over {amount} euros.",
         "Statements are sobering! Categorise the last two months and see what stands out."),
    )),
    Topic("Learning something new", ("skill",), (
        ("I want to get better at {skill}. How long does it take?",
         "Fifteen minutes of {skill} a day beats one long weekly session; expect a few months."),
        ("Practised {skill} for an hour today and my brain is fried.",
         "That fried feeling means you're learning; rest and come back to {skill} tomorrow."),
        ("Any good way to stay consistent with {skill}?",
         "Tie {skill} to something you already do daily, like after breakfast."),
        ("Is it silly to learn {skill} at my age?",
         "It's never silly; adults learn {skill} fine, they just need patience."),
    )),
)

OPENERS_USER: tuple[str, ...] = (
    "Hey!", "Hi again.", "Long day, but hi.", "Hello hello.", "Hey, got a minute?",
    "Hi! Quick chat?", "Back again, sorry.", "Hiya.", "Hey there.", "Hello, me again.",
)
OPENERS_ASSISTANT: tuple[str, ...] = (
    "Hi! What's on your mind today?", "Hello! Always happy to chat.", "Hey, good to see you. How are things?",
    "Hi there, what's up?", "Of course, I'm here. What's going on?",
    "Welcome back! How's your week going?",
)
CLOSERS_USER: tuple[str, ...] = (
    "Thanks, that's all for now.", "Okay, I'm off. Thanks!", "Great, talk later.",
    "That helps, cheers.", "Right, back to it.", "Thanks, you're a star.", "Cool, I'll try that.",
)
CLOSERS_ASSISTANT: tuple[str, ...] = (
    "Anytime. Talk soon!", "Good luck with everything!", "Take care, see you next time.",
    "Happy to help. Enjoy the rest of your day.", "Bye for now!",
)
