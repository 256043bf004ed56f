"""French planted sentences (Faker ``fr_FR``): ``mon ami‹|e›`` and participles agree with the person's gender.

``finish`` elides and contracts where a filled-in name asks for it: ``de Antoine`` → ``d'Antoine``,
``à Le Havre`` → ``au Havre``, ``à Les Sables`` → ``aux Sables``, ``de Le`` → ``du``.
"""

from __future__ import annotations

import re
from datetime import date

from lyra_lab.synthetic._phrasebook import Changed, Happened, Phrasebook, Said, Told
from lyra_lab.synthetic._templates import Topic

MONTHS = ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
          "novembre", "décembre")


ELIDED = re.compile(r"\b([Dd])e (?=[AEIOUYÉÈÊÂÎÔaeiouyéèêâîô])")
CONTRACTED = (("à Le ", "au "), ("à Les ", "aux "), ("de Le ", "du "), ("de Les ", "des "))


def finish(text: str) -> str:
    """``text`` with ``de`` elided before a vowel and ``à``/``de`` contracted with a name's article."""
    for written, said in CONTRACTED:
        text = text.replace(written, said)
    return ELIDED.sub(r"\1'", text)


def _date(day: date) -> str:
    return f"{'1er' if day.day == 1 else day.day} {MONTHS[day.month - 1]}"


SLOTS: dict[str, tuple[str, ...]] = {
    "ingredient": ("poireaux", "pois chiches", "champignons", "épinards", "lentilles", "courgettes", "carottes"),
    "dish": ("un gratin", "une soupe", "un curry", "une quiche", "une poêlée", "un risotto"),
    "place": ("Lisbonne", "Naples", "Séville", "Cracovie", "Édimbourg", "Vienne", "Porto"),
    "span": ("un long week-end", "quatre jours", "une semaine", "dix jours"),
    "task": ("le rapport trimestriel", "la présentation client", "le budget de l'année", "le dossier de subvention"),
}
TOPICS: tuple[Topic, ...] = (
    Topic("Idées de cuisine", ("ingredient", "dish"), (
        ("J'ai plein de {ingredient} à finir. Tu as une idée ?",
         "Essaie {dish} : c'est simple, ça se réchauffe bien et ça tient plusieurs jours."),
        ("Qu'est-ce que je peux faire ce soir avec des {ingredient}, sans me compliquer la vie ?",
         "Fais revenir un oignon, ajoute-les avec de l'ail et une boîte de tomates, et c'est prêt."),
        ("Je voudrais préparer {dish} en moins de trente minutes. C'est possible ?",
         "Oui, si tu coupes tout petit et que tu cuis à feu vif pendant que tu prépares le reste."))),
    Topic("Voyage", ("place", "span"), (
        ("Je pense partir à {place} pour {span}. Ça suffit, à ton avis ?",
         "C'est largement assez si tu choisis un quartier et que tu l'explores à pied."),
        ("Qu'est-ce qu'il ne faut pas rater à {place} ?",
         "Réserve le musée qui t'intéresse le plus et garde le reste du temps libre pour flâner."),
        ("Comment se déplacer à {place} sans louer de voiture ?",
         "Les transports en commun suffisent ; un pass à la journée est vite rentabilisé."))),
    Topic("Travail", ("task",), (
        ("Je dois rendre {task} demain et je n'en suis qu'à la moitié.",
         "Commence par ce qui compte le plus et demande un délai pour le reste, franchement."),
        ("On m'a encore demandé de refaire {task}. Je suis épuisé.",
         "Note les nouvelles demandes par écrit et fais-les valider : ça évite les allers-retours."),
        ("Tu peux m'aider à organiser ma semaine autour de {task} ?",
         "Bloque deux matinées sans réunion pour ça, et garde les après-midi pour le reste."))),
)

BOOK = Phrasebook(
    code="fr", locale="fr_FR", title="Des nouvelles", date=_date, finish=finish,
    lives_in=Said(("Mon ami‹|e› {p} habite maintenant à {v}, alors on se parle surtout au téléphone.",
                   "Longue discussion avec {p} ce soir : ‹il|elle› s'est installé‹|e› à {v} et trouve qu'il y pleut "
                   "tout le temps."),
                  ("Où habite {p} ?", "Dans quelle ville vit {p} ?"),
                  ("C'est bien de garder le contact, même de loin.", "Les longues discussions entre vieux amis, ça fait du bien.")),
    works_at=Said(("Mon ami‹|e› {p} travaille chez {v} et ne parle que de son boulot.",
                   "{p} m'a fait visiter ses bureaux chez {v} aujourd'hui ; ‹il|elle› a l'air de s'y plaire."),
                  ("Où travaille {p} ?", "Pour quelle entreprise travaille {p} ?"),
                  ("Ça a l'air d'être un travail prenant !", "C'est chouette de voir le quotidien d'un ami.")),
    birthday=Said(("Note pour moi : l'anniversaire de {p} est le {v}, je ne dois surtout pas l'oublier cette année.",
                   "{p} organise une petite fête pour son anniversaire, le {v}."),
                  ("Quand est l'anniversaire de {p} ?", "C'est quel jour, l'anniversaire de {p} ?"),
                  ("Noté, un rappel quelques jours avant serait utile.", "Les petites fêtes sont souvent les meilleures.")),
    cat=Said(("{p} a adopté un chat qui s'appelle {v}, et il fait déjà la loi dans tout l'appartement.",
              "J'ai passé la soirée chez {p} et son chat {v} m'a complètement ignoré toute la soirée."),
             ("Comment s'appelle le chat de {p} ?", "Quel est le nom du chat de {p} ?"),
             ("Les chats prennent vite le pouvoir, c'est bien connu.", "Être ignoré par un chat, c'est presque un compliment.")),
    children=Said(("{p} a {v} enfants et trouve quand même le temps d'aller courir tous les matins.",
                   "Le dîner chez {p} était un joyeux chaos : {v} enfants et un chien."),
                  ("Combien d'enfants a {p} ?", "{p} a combien d'enfants ?"),
                  ("Quelle énergie, franchement !", "Ça devait être une soirée animée !")),
    moved=Changed(("Mon ami‹|e› {p} habite à {v}, juste à côté de la gare.",
                   "{p} m'invite sans arrêt à venir ‹le|la› voir à {v}, où ‹il|elle› habite."),
                  ("Grande nouvelle : {p} a quitté {old} et s'est installé‹|e› à {new} !",
                   "Des nouvelles de {p} : ‹il|elle› habite maintenant à {new}."),
                  ("Où habite {p} maintenant ?", "Dans quelle ville vit {p} maintenant ?"),
                  ("Ça a l'air d'être un bel endroit.", "Tu devrais accepter l'invitation un jour."),
                  ("Un grand changement, c'est excitant !", "Un nouveau départ, c'est chouette.")),
    new_employer=Changed(("{p} travaille chez {v} depuis des années.", "{p} a encore eu une semaine chargée chez {v}."),
                         ("{p} a quitté {old} et commence lundi chez {new}.",
                          "{p} a changé de travail : ‹il|elle› est maintenant chez {new}."),
                         ("Où travaille {p} maintenant ?", "Pour quelle entreprise travaille {p} maintenant ?"),
                         ("Rester des années au même endroit, c'est rare aujourd'hui.",
                          "Les semaines chargées, ça épuise tout le monde."),
                         ("Tant mieux, un nouveau travail, c'est une grande étape.", "Un changement peut faire du bien.")),
    events=(Happened(("J'ai déjeuné avec {p} {when}, ça faisait une éternité.",), "Quand ai-je déjeuné avec {p} ?",
                     ("Rien de tel qu'un déjeuner pour se retrouver.",)),
            Happened(("J'ai passé une heure au téléphone avec {p} {when}.",),
                     "Quand ai-je passé une heure au téléphone avec {p} ?", ("Une heure passe vite avec les bonnes personnes.",)),
            Happened(("J'ai aidé {p} à repeindre sa cuisine {when}. J'ai mal aux bras.",),
                     "Quand ai-je aidé {p} à repeindre sa cuisine ?", ("La peinture, c'est un vrai sport !",))),
    moving_to=Told(("{name} va s'installer à {v} au printemps.", "{name} m'a annoncé son départ pour {v}."),
                   "Où va s'installer {rel} ?", ("Un grand changement ! Tu auras un nouvel endroit à visiter.",)),
    adopted=Told(("{name} a adopté un chiot qui s'appelle {v} !", "{name} m'a envoyé des photos de son nouveau chiot, {v}."),
                 "Comment s'appelle le chiot qu'a adopté {rel} ?", ("Un chiot, quelle bonne nouvelle !",)),
    relation="‹mon collègue|ma collègue› de chez {company}",
    introductions=("Au fait, {rel} s'appelle {name}.", "J'ai enfin pris un café avec {rel}, {name}."),
    intro_replies=("Ça a l'air sympa !", "Tant mieux si le courant passe entre vous."),
    when=(("aujourd'hui", 0), ("ce matin", 0), ("tout à l'heure", 0), ("hier", 1)), topics=TOPICS, slots=SLOTS)
