"""German planted sentences (Faker ``de_DE``): ``Mein‹|e› Freund‹|in›`` by gender; relations only in the nominative.

The relation (``mein Kollege bei …``) is written in the nominative, so every template
puts it where the nominative belongs (``Übrigens heißt {rel} …``, ``Wohin zieht {rel}?``).
"""

from __future__ import annotations

from datetime import date

from lyra_lab.synthetic._phrasebook import Changed, Happened, Phrasebook, Said, Told
from lyra_lab.synthetic._templates import Topic

MONTHS = ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
          "November", "Dezember")


def _date(day: date) -> str:
    return f"{day.day}. {MONTHS[day.month - 1]}"


SLOTS: dict[str, tuple[str, ...]] = {
    "ingredient": ("Kichererbsen", "Zucchini", "Pilze", "Spinat", "Linsen", "Auberginen", "Lauch"),
    "dish": ("einen Eintopf", "eine Suppe", "ein Curry", "einen Auflauf", "eine Pfanne", "ein Risotto"),
    "place": ("Lissabon", "Neapel", "Porto", "Krakau", "Edinburgh", "Wien", "Marseille"),
    "span": ("ein langes Wochenende", "vier Tage", "eine Woche", "zehn Tage"),
    "task": ("den Quartalsbericht", "die Kundenpräsentation", "das Jahresbudget", "den Förderantrag"),
}
TOPICS: tuple[Topic, ...] = (
    Topic("Kochideen", ("ingredient", "dish"), (
        ("Ich habe noch jede Menge {ingredient} übrig. Hast du eine Idee?",
         "Versuch {dish}: Das ist einfach, lässt sich gut aufwärmen und hält ein paar Tage."),
        ("Was kann ich heute Abend mit {ingredient} kochen, ohne viel Aufwand?",
         "Eine Zwiebel anbraten, Knoblauch und eine Dose Tomaten dazu, und in zwanzig Minuten ist es fertig."),
        ("Ich möchte {dish} in unter einer halben Stunde machen. Geht das?",
         "Ja, wenn du alles klein schneidest und bei hoher Hitze kochst, während du den Rest vorbereitest."))),
    Topic("Reisen", ("place", "span"), (
        ("Ich überlege, für {span} nach {place} zu fahren. Reicht das?",
         "Das reicht völlig, wenn du dir ein Viertel aussuchst und es zu Fuß erkundest."),
        ("Was sollte ich in {place} auf keinen Fall verpassen?",
         "Buch das Museum, das dich am meisten interessiert, vorher und lass den Rest offen."),
        ("Wie komme ich in {place} ohne Mietwagen herum?",
         "Die öffentlichen Verkehrsmittel sind gut; eine Tageskarte lohnt sich schnell."))),
    Topic("Arbeit", ("task",), (
        ("Ich muss morgen {task} abgeben und bin erst bei der Hälfte.",
         "Fang mit dem Wichtigsten an und bitte ehrlich um etwas mehr Zeit für den Rest."),
        ("Ich soll schon wieder {task} überarbeiten. Ich bin völlig erledigt.",
         "Schreib die neuen Wünsche auf und lass sie dir bestätigen; das spart weiteres Hin und Her."),
        ("Hilfst du mir, meine Woche um {task} herum zu planen?",
         "Blockier dir zwei Vormittage ohne Termine dafür und nimm die Nachmittage für den Rest."))),
)

BOOK = Phrasebook(
    code="de", locale="de_DE", title="Neuigkeiten", date=_date,
    lives_in=Said(("Mein‹|e› Freund‹|in› {p} wohnt jetzt in {v}, deshalb telefonieren wir meistens.",
                   "Ich habe lange mit {p} telefoniert; ‹er|sie› lebt seit Kurzem in {v} und findet das Wetter "
                   "dort furchtbar."),
                  ("Wo wohnt {p}?", "In welcher Stadt wohnt {p}?"),
                  ("Schön, dass ihr trotz der Entfernung in Kontakt bleibt.",
                   "Lange Gespräche mit alten Freunden tun einfach gut.")),
    works_at=Said(("Mein‹|e› Freund‹|in› {p} arbeitet bei {v} und redet ständig über die Arbeit.",
                   "{p} hat mir heute das Büro bei {v} gezeigt; ‹er|sie› scheint sich dort wohlzufühlen."),
                  ("Wo arbeitet {p}?", "Bei welcher Firma arbeitet {p}?"),
                  ("Das klingt nach einem anstrengenden Job!", "Schön, mal den Alltag eines Freundes zu sehen.")),
    birthday=Said(("Notiz an mich: {p} hat am {v} Geburtstag, das darf ich dieses Jahr nicht vergessen.",
                   "{p} feiert am {v} Geburtstag, nur im kleinen Kreis."),
                  ("Wann hat {p} Geburtstag?", "An welchem Tag hat {p} Geburtstag?"),
                  ("Notiert, eine Erinnerung ein paar Tage vorher wäre gut.", "Kleine Feiern sind oft die schönsten.")),
    cat=Said(("{p} hat eine Katze adoptiert, sie heißt {v} und regiert schon die ganze Wohnung.",
              "Ich war bei {p} zu Besuch und wurde von der Katze {v} den ganzen Abend ignoriert."),
             ("Wie heißt die Katze von {p}?", "Welchen Namen hat die Katze von {p}?"),
             ("Katzen übernehmen schnell das Kommando, das ist bekannt.",
              "Von einer Katze ignoriert zu werden ist fast ein Kompliment.")),
    children=Said(("{p} hat {v} Kinder und geht trotzdem jeden Morgen joggen.",
                   "Das Abendessen bei {p} war ein herrliches Chaos: {v} Kinder und ein Hund."),
                  ("Wie viele Kinder hat {p}?", "Wie viele Kinder hat {p} eigentlich?"),
                  ("Was für eine Energie!", "Das war bestimmt ein lebhafter Abend!")),
    moved=Changed(("Mein‹|e› Freund‹|in› {p} wohnt in {v}, direkt am Bahnhof.",
                   "{p} lädt mich ständig nach {v} ein, wo ‹er|sie› wohnt."),
                  ("{p} ist gerade von {old} nach {new} gezogen!", "Neuigkeiten von {p}: ‹er|sie› wohnt jetzt in {new}."),
                  ("Wo wohnt {p} jetzt?", "In welcher Stadt wohnt {p} jetzt?"),
                  ("Klingt nach einem schönen Ort.", "Du solltest die Einladung mal annehmen."),
                  ("Ein großer Umzug, wie aufregend!", "Ein Neuanfang, wie schön.")),
    new_employer=Changed(("{p} arbeitet schon seit Jahren bei {v}.", "{p} hatte wieder eine lange Woche bei {v}."),
                         ("{p} hat bei {old} gekündigt und fängt am Montag bei {new} an.",
                          "{p} hat den Job gewechselt und ist jetzt bei {new}."),
                         ("Wo arbeitet {p} jetzt?", "Bei welcher Firma arbeitet {p} jetzt?"),
                         ("Jahrelang bei derselben Firma, das ist heute selten.", "Lange Wochen schlauchen jeden."),
                         ("Schön, ein neuer Job ist ein großer Schritt.", "Ein Wechsel kann richtig guttun.")),
    events=(Happened(("Ich war {when} mit {p} Mittag essen, zum ersten Mal seit Ewigkeiten.",),
                     "Wann war ich mit {p} Mittag essen?", ("Ein Mittagessen ist perfekt, um sich auszutauschen.",)),
            Happened(("Ich habe {when} eine Stunde mit {p} telefoniert.",), "Wann habe ich eine Stunde mit {p} telefoniert?",
                     ("Mit den richtigen Leuten vergeht eine Stunde wie im Flug.",)),
            Happened(("Ich habe {p} {when} geholfen, die Küche zu streichen. Meine Arme sind fertig.",),
                     "Wann habe ich {p} geholfen, die Küche zu streichen?", ("Streichen ist echter Sport!",))),
    moving_to=Told(("{name} zieht im Frühling nach {v}.", "{name} hat mir erzählt, dass es bald nach {v} geht."),
                   "Wohin zieht {rel}?", ("Ein großer Schritt! Dann hast du einen neuen Ort zum Besuchen.",)),
    adopted=Told(("{name} hat einen Welpen adoptiert, er heißt {v}!", "{name} hat mir Fotos vom neuen Welpen {v} geschickt."),
                 "Wie heißt der Welpe, den {rel} adoptiert hat?", ("Ein Welpe, wie schön!",)),
    relation="‹mein Kollege|meine Kollegin› bei {company}",
    introductions=("Übrigens heißt {rel} {name}.", "Ach ja, {rel} heißt {name}, das wollte ich dir noch erzählen."),
    intro_replies=("Klingt nett!", "Schön, dass ihr euch gut versteht."),
    when=(("heute", 0), ("heute Morgen", 0), ("vorhin", 0), ("gestern", 1)), topics=TOPICS, slots=SLOTS)
