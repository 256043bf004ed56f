"""Histories in one language for planting tests: a generic-JSONL export of dated sessions, written to a file.

``FRENCH`` is a French user's requests and the assistant's replies, written by hand; the
committed fixture ``tests/fixtures/corpus/french_history.jsonl`` is ``write_history`` over it
(regenerate with ``python -m tests.helpers.histories``).  Other languages' histories are made
from their phrasebook's ordinary chat (``exchanges_of``), so every supported language has one.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from lyra_lab.synthetic._phrasebook import Phrasebook

FRENCH_FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "french_history.jsonl"
FRENCH: tuple[tuple[str, str], ...] = (
    ("Tu peux m'aider à écrire un mail à mon propriétaire ? Le chauffage est encore en panne depuis lundi.",
     "Bien sûr. Commence par rappeler la date de la panne, puis demande une intervention avant la fin de la semaine."),
    ("Je voulais partir randonner ce week-end mais il va pleuvoir. Qu'est-ce que je peux faire à la place ?",
     "Un musée, une piscine couverte ou une longue balade en ville avec un bon café au milieu."),
    ("Comment cuire des lentilles sans qu'elles deviennent de la purée ? Je n'ai pas le temps de les faire tremper.",
     "Les lentilles vertes n'ont pas besoin de trempage : vingt minutes à petit frémissement, et du sel à la fin."),
    ("Explique-moi la différence entre une liste et un tuple en Python, simplement.",
     "Une liste peut changer après sa création ; un tuple non, ce qui le rend plus sûr pour des données fixes."),
    ("J'ai du mal à me concentrer l'après-midi au bureau. Tu as des astuces ?",
     "Marche cinq minutes après le déjeuner, bois de l'eau et garde les tâches faciles pour la fin de journée."),
    ("Quel livre me conseillerais-tu pour reprendre la lecture après des mois sans lire ?",
     "Choisis un roman court et rythmé ; l'important, c'est de retrouver le plaisir, pas de finir un classique."),
    ("Je dois préparer une présentation de dix minutes pour jeudi. Par où commencer ?",
     "Écris d'abord le message principal en une phrase, puis trois arguments, et seulement après les diapositives."),
    ("Mon ordinateur portable est devenu très lent. Je fais quoi avant d'en racheter un ?",
     "Regarde les programmes qui démarrent tout seuls, libère de la place sur le disque et fais les mises à jour."),
    ("Est-ce que c'est une bonne idée de courir tous les jours quand on débute ?",
     "Mieux vaut trois sorties par semaine au début, avec des jours de repos pour laisser le corps s'adapter."),
    ("Aide-moi à faire une liste de courses pour la semaine avec un petit budget.",
     "Pâtes, riz, œufs, légumes de saison, une boîte de pois chiches et du fromage râpé : ça couvre beaucoup de repas."),
    ("Je n'arrive pas à m'endormir avant deux heures du matin. Des conseils ?",
     "Éteins les écrans une heure avant, garde la chambre fraîche et lève-toi à la même heure chaque jour."),
    ("Peux-tu corriger cette phrase : « je me suis permis de vous relancer concernant ma candidature » ?",
     "Elle est correcte ; tu peux ajouter « envoyée le 3 mars » pour que ton interlocuteur la retrouve facilement."),
)


def exchanges_of(book: Phrasebook, seed: int = 0, count: int = 40) -> list[tuple[str, str]]:
    """``count`` distinct (user, assistant) exchanges from ``book``'s ordinary chat, slots filled."""
    rng, out = random.Random(seed), list[tuple[str, str]]()
    while len(out) < count:
        topic = rng.choice(book.topics)
        user, reply = rng.choice(topic.exchanges)
        fill = {slot: rng.choice(book.slots[slot]) for slot in topic.slots}
        pair = (user.format(**fill), reply.format(**fill))
        if pair not in out or len(out) > 200:
            out.append(pair)
    return out


def write_history(path: Path, exchanges: tuple[tuple[str, str], ...] | list[tuple[str, str]], sessions: int = 150,
                  seed: int = 7, per_session: tuple[int, ...] = (1, 1, 2)) -> Path:
    """``sessions`` dated sessions one to three days apart, each of one of ``per_session`` exchanges, as JSONL."""
    rng = random.Random(seed)
    lines, clock, mid = [], datetime(2024, 1, 3, 9, tzinfo=UTC), 0
    for s in range(sessions):
        clock += timedelta(days=rng.randint(1, 3), hours=rng.randint(0, 6))
        at = clock
        for _ in range(rng.choice(per_session)):
            user, reply = rng.choice(exchanges)
            for role, text in (("user", user), ("assistant", reply)):
                mid += 1
                lines.append({"session_id": f"chat-{s:03d}", "role": role, "content": text,
                              "timestamp": at.isoformat(), "id": f"m{mid:05d}"})
                at += timedelta(seconds=rng.randint(20, 200))
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in lines) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":
    print(write_history(FRENCH_FIXTURE, FRENCH))
