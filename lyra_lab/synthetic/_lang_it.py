"""Italian planted sentences (Faker ``it_IT``): ``‹il mio amico|la mia amica›`` and participles by gender.

``finish`` elides the article before a date that starts with a vowel sound (``l'8 marzo``, ``l'11``)
and writes ``ad`` before a place starting with *a* (``ad Alvignano``).
"""

from __future__ import annotations

import re
from datetime import date

from lyra_lab.synthetic._phrasebook import Changed, Happened, Phrasebook, Said, Told
from lyra_lab.synthetic._templates import Topic

MONTHS = ("gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre", "ottobre",
          "novembre", "dicembre")
ELIDED = re.compile(r"\bil (8|11) ")
BEFORE_A = re.compile(r"\ba (?=[Aa]\w)")


def _date(day: date) -> str:
    return f"{'1º' if day.day == 1 else day.day} {MONTHS[day.month - 1]}"


def finish(text: str) -> str:
    """``il 8 marzo`` → ``l'8 marzo`` (and ``l'11``); ``a Alvignano`` → ``ad Alvignano``."""
    return BEFORE_A.sub("ad ", ELIDED.sub(r"l'\1 ", text))


SLOTS: dict[str, tuple[str, ...]] = {
    "ingredient": ("ceci", "zucchine", "funghi", "spinaci", "lenticchie", "melanzane", "carote"),
    "dish": ("uno stufato", "una vellutata", "un curry", "una torta salata", "un risotto", "una frittata"),
    "place": ("Lisbona", "Porto", "Siviglia", "Cracovia", "Edimburgo", "Vienna", "Marsiglia"),
    "span": ("un weekend lungo", "quattro giorni", "una settimana", "dieci giorni"),
    "task": ("il rapporto trimestrale", "la presentazione per il cliente", "il bilancio dell'anno", "il bando"),
}
TOPICS: tuple[Topic, ...] = (
    Topic("Idee in cucina", ("ingredient", "dish"), (
        ("Ho un sacco di {ingredient} da finire. Hai qualche idea?",
         "Prova {dish}: è facile, si riscalda bene e si conserva per qualche giorno."),
        ("Cosa posso preparare stasera con {ingredient} senza complicarmi la vita?",
         "Soffriggi una cipolla, aggiungi aglio e una scatola di pomodori, e in venti minuti è pronto."),
        ("Vorrei fare {dish} in meno di mezz'ora. Si può?",
         "Sì, se tagli tutto piccolo e cuoci a fuoco vivo mentre prepari il resto."))),
    Topic("Viaggi", ("place", "span"), (
        ("Sto pensando di andare a {place} per {span}. Secondo te basta?",
         "Basta e avanza se scegli un quartiere e lo giri a piedi."),
        ("Cosa non devo perdermi a {place}?",
         "Prenota prima il museo che ti interessa di più e lascia libero il resto del tempo."),
        ("Come mi sposto a {place} senza noleggiare una macchina?",
         "I mezzi pubblici funzionano bene; un abbonamento giornaliero si ripaga subito."))),
    Topic("Lavoro", ("task",), (
        ("Devo consegnare {task} domani e sono solo a metà.",
         "Comincia dalla parte più importante e chiedi con sincerità un po' più di tempo per il resto."),
        ("Mi hanno chiesto di nuovo di rifare {task}. Sono sfinito.",
         "Scrivi le nuove richieste e fattele confermare: così eviti altri giri."),
        ("Mi aiuti a organizzare la settimana intorno a {task}?",
         "Blocca due mattine senza riunioni per quello e lascia i pomeriggi per il resto."))),
)

BOOK = Phrasebook(
    code="it", locale="it_IT", title="Due chiacchiere", date=_date, finish=finish,
    lives_in=Said(("‹Il mio amico|La mia amica› {p} adesso abita a {v}, quindi ci sentiamo quasi sempre per telefono.",
                   "Ho fatto una lunga telefonata con {p}, che da poco si è trasferit‹o|a› a {v}; dice che lì piove "
                   "sempre."),
                  ("Dove abita {p}?", "In quale città vive {p}?"),
                  ("Che bello che restiate in contatto anche da lontano.",
                   "Le lunghe chiacchierate con i vecchi amici fanno bene.")),
    works_at=Said(("‹Il mio amico|La mia amica› {p} lavora presso {v} e parla solo di lavoro.",
                   "Oggi {p} mi ha fatto vedere il suo ufficio presso {v}; sembra content‹o|a› lì."),
                  ("Dove lavora {p}?", "Per quale azienda lavora {p}?"),
                  ("Sembra un lavoro impegnativo!", "È bello conoscere un po' la giornata di un amico.")),
    birthday=Said(("Promemoria: il compleanno di {p} è il {v}, quest'anno non devo dimenticarlo.",
                   "{p} festeggia il compleanno il {v} con una piccola festa."),
                  ("Quando è il compleanno di {p}?", "Che giorno è il compleanno di {p}?"),
                  ("Segnato, un promemoria qualche giorno prima sarebbe utile.",
                   "Le feste piccole sono spesso le più belle.")),
    cat=Said(("{p} ha adottato un gatto che si chiama {v}, e ormai comanda lui in casa.",
              "Ho passato la serata da {p} e il suo gatto {v} mi ha ignorato tutto il tempo."),
             ("Come si chiama il gatto di {p}?", "Qual è il nome del gatto di {p}?"),
             ("I gatti prendono il comando in fretta, si sa.", "Essere ignorati da un gatto è quasi un complimento.")),
    children=Said(("{p} ha {v} figli e trova comunque il tempo di correre ogni mattina.",
                   "La cena da {p} è stata un caos bellissimo: {v} bambini e un cane."),
                  ("Quanti figli ha {p}?", "{p} quanti figli ha?"),
                  ("Che energia!", "Dev'essere stata una serata vivace!")),
    moved=Changed(("‹Il mio amico|La mia amica› {p} abita a {v}, proprio vicino alla stazione.",
                   "{p} mi invita sempre a {v}, dove abita."),
                  ("{p} si è appena trasferit‹o|a› da {old} a {new}!", "Novità da {p}: adesso abita a {new}."),
                  ("Dove abita {p} adesso?", "In quale città vive {p} adesso?"),
                  ("Sembra un bel posto.", "Dovresti accettare l'invito prima o poi."),
                  ("Che grande cambiamento!", "Un nuovo inizio, che bello.")),
    new_employer=Changed(("{p} lavora presso {v} da anni.", "{p} ha avuto un'altra settimana pesante presso {v}."),
                         ("{p} ha lasciato {old} e lunedì comincia presso {new}.",
                          "{p} ha cambiato lavoro: adesso è presso {new}."),
                         ("Dove lavora {p} adesso?", "Per quale azienda lavora {p} adesso?"),
                         ("Oggi è raro restare tanti anni nello stesso posto.", "Le settimane pesanti stancano chiunque."),
                         ("Che bello, un lavoro nuovo è un grande passo.", "Un cambiamento può fare bene.")),
    events=(Happened(("Ho pranzato con {p} {when}, non ci vedevamo da secoli.",), "Quando ho pranzato con {p}?",
                     ("Niente come un pranzo per aggiornarsi.",)),
            Happened(("Ho passato un'ora al telefono con {p} {when}.",), "Quando ho passato un'ora al telefono con {p}?",
                     ("Un'ora vola con le persone giuste.",)),
            Happened(("Ho aiutato {p} a dipingere la cucina {when}. Ho le braccia a pezzi.",),
                     "Quando ho aiutato {p} a dipingere la cucina?", ("Dipingere è un vero sport!",))),
    moving_to=Told(("{name} si trasferisce a {v} in primavera.", "{name} mi ha detto che va a vivere a {v}."),
                   "Dove si trasferisce {rel}?", ("Che cambiamento! Avrai un posto nuovo da visitare.",)),
    adopted=Told(("{name} ha adottato un cucciolo che si chiama {v}!", "{name} mi ha mandato le foto del nuovo cucciolo, {v}."),
                 "Come si chiama il cucciolo che ha adottato {rel}?", ("Un cucciolo, che bella notizia!",)),
    relation="‹il mio collega|la mia collega› di {company}",
    introductions=("A proposito, {rel} si chiama {name}.", "Finalmente ho preso un caffè con {rel}, {name}."),
    intro_replies=("Che bello!", "Sono contento che andiate d'accordo."),
    when=(("oggi", 0), ("stamattina", 0), ("poco fa", 0), ("ieri", 1)), topics=TOPICS, slots=SLOTS)
