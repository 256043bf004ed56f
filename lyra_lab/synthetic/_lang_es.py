"""Spanish planted sentences (Faker ``es_ES``): ``mi amig‹o|a›`` and adjectives agree with the person's gender."""

from __future__ import annotations

from datetime import date

from lyra_lab.synthetic._phrasebook import Changed, Happened, Phrasebook, Said, Told
from lyra_lab.synthetic._templates import Topic

MONTHS = ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
          "noviembre", "diciembre")


def _date(day: date) -> str:
    return f"{day.day} de {MONTHS[day.month - 1]}"


SLOTS: dict[str, tuple[str, ...]] = {
    "ingredient": ("garbanzos", "calabacines", "champiñones", "espinacas", "lentejas", "berenjenas", "puerros"),
    "dish": ("un guiso", "una crema", "un curry", "una tortilla", "un salteado", "un arroz al horno"),
    "place": ("Lisboa", "Nápoles", "Oporto", "Cracovia", "Edimburgo", "Viena", "Marsella"),
    "span": ("un fin de semana largo", "cuatro días", "una semana", "diez días"),
    "task": ("el informe trimestral", "la presentación para el cliente", "el presupuesto del año", "la memoria anual"),
}
TOPICS: tuple[Topic, ...] = (
    Topic("Ideas de cocina", ("ingredient", "dish"), (
        ("Tengo un montón de {ingredient} que gastar. ¿Alguna idea?",
         "Prueba {dish}: es fácil, se recalienta bien y aguanta varios días en la nevera."),
        ("¿Qué puedo hacer esta noche con {ingredient} sin complicarme mucho?",
         "Sofríe una cebolla, añade ajo y un bote de tomate, y en veinte minutos lo tienes."),
        ("Quiero preparar {dish} en menos de media hora. ¿Es posible?",
         "Sí, si cortas todo pequeño y cocinas a fuego fuerte mientras preparas lo demás."))),
    Topic("Viajes", ("place", "span"), (
        ("Estoy pensando en ir a {place} {span}. ¿Crees que es suficiente?",
         "Es más que suficiente si eliges un barrio y lo recorres a pie."),
        ("¿Qué no me puedo perder en {place}?",
         "Reserva con antelación el museo que más te interese y deja el resto del tiempo libre."),
        ("¿Cómo me muevo por {place} sin alquilar un coche?",
         "El transporte público funciona bien; un abono de un día se amortiza enseguida."))),
    Topic("Trabajo", ("task",), (
        ("Tengo que entregar {task} mañana y solo llevo la mitad.",
         "Empieza por lo más importante y pide sinceramente un poco más de plazo para el resto."),
        ("Me han vuelto a pedir que rehaga {task}. Estoy agotado.",
         "Apunta los cambios por escrito y pide que te los confirmen; así evitas más idas y vueltas."),
        ("¿Me ayudas a organizar la semana alrededor de {task}?",
         "Reserva dos mañanas sin reuniones para eso y deja las tardes para lo demás."))),
)

BOOK = Phrasebook(
    code="es", locale="es_ES", title="Poniéndonos al día", date=_date,
    lives_in=Said(("Mi amig‹o|a› {p} vive ahora en {v}, así que casi siempre hablamos por teléfono.",
                   "Hablé un buen rato con {p}, que está instalad‹o|a› en {v} desde hace poco; dice que allí llueve "
                   "muchísimo."),
                  ("¿Dónde vive {p}?", "¿En qué ciudad vive {p}?"),
                  ("Qué bien que sigáis en contacto aunque estéis lejos.",
                   "Las charlas largas con los amigos de siempre sientan genial.")),
    works_at=Said(("Mi amig‹o|a› {p} trabaja en {v} y no para de hablar de su trabajo.",
                   "Hoy {p} me enseñó su oficina en {v}; se nota que está content‹o|a› allí."),
                  ("¿Dónde trabaja {p}?", "¿En qué empresa trabaja {p}?"),
                  ("¡Parece un trabajo muy intenso!", "Está bien conocer un poco el día a día de los amigos.")),
    birthday=Said(("Nota mental: el cumpleaños de {p} es el {v}, este año no se me puede olvidar.",
                   "{p} va a celebrar su cumpleaños el {v} con una fiesta pequeña."),
                  ("¿Cuándo es el cumpleaños de {p}?", "¿Qué día es el cumpleaños de {p}?"),
                  ("Apuntado, un recordatorio unos días antes vendría bien.", "Las fiestas pequeñas suelen ser las mejores.")),
    cat=Said(("{p} ha adoptado un gato que se llama {v}, y ya manda en toda la casa.",
              "Pasé la tarde en casa de {p} y su gato {v} me ignoró por completo."),
             ("¿Cómo se llama el gato de {p}?", "¿Cuál es el nombre del gato de {p}?"),
             ("Los gatos toman el mando enseguida, es bien sabido.", "Que un gato te ignore es casi un cumplido.")),
    children=Said(("{p} tiene {v} hijos y aun así sale a correr todas las mañanas.",
                   "La cena en casa de {p} fue un caos precioso: {v} niños y un perro."),
                  ("¿Cuántos hijos tiene {p}?", "¿{p} cuántos hijos tiene?"),
                  ("¡Qué energía!", "¡Debió de ser una cena muy animada!")),
    moved=Changed(("Mi amig‹o|a› {p} vive en {v}, justo al lado de la estación.",
                   "{p} siempre me invita a ir a {v}, donde vive."),
                  ("¡{p} se acaba de mudar de {old} a {new}!", "Noticias de {p}: ahora vive en {new}."),
                  ("¿Dónde vive {p} ahora?", "¿En qué ciudad vive {p} ahora?"),
                  ("Suena a un sitio bonito.", "Deberías aceptar la invitación algún día."),
                  ("¡Qué cambio tan grande!", "Un nuevo comienzo, qué bien.")),
    new_employer=Changed(("{p} lleva años trabajando en {v}.", "{p} ha tenido otra semana larguísima en {v}."),
                         ("{p} ha dejado {old} y el lunes empieza en {new}.",
                          "{p} ha cambiado de trabajo: ahora está en {new}."),
                         ("¿Dónde trabaja {p} ahora?", "¿En qué empresa trabaja {p} ahora?"),
                         ("Hoy en día es raro quedarse tantos años en el mismo sitio.",
                          "Las semanas largas agotan a cualquiera."),
                         ("Me alegro, un trabajo nuevo es un gran paso.", "Un cambio puede sentar muy bien.")),
    events=(Happened(("Comí con {p} {when}, hacía siglos que no nos veíamos.",), "¿Cuándo comí con {p}?",
                     ("No hay nada como una comida para ponerse al día.",)),
            Happened(("Estuve una hora al teléfono con {p} {when}.",), "¿Cuándo estuve una hora al teléfono con {p}?",
                     ("Una hora pasa volando con la gente adecuada.",)),
            Happened(("Ayudé a {p} a pintar su cocina {when}. Tengo los brazos molidos.",),
                     "¿Cuándo ayudé a {p} a pintar la cocina?", ("¡Pintar es todo un deporte!",))),
    moving_to=Told(("{name} se muda a {v} en primavera.", "{name} me ha contado que se va a vivir a {v}."),
                   "¿A dónde se muda {rel}?", ("¡Qué cambio! Tendrás un sitio nuevo que visitar.",)),
    adopted=Told(("¡{name} ha adoptado un cachorro que se llama {v}!", "{name} me mandó fotos de su cachorro nuevo, {v}."),
                 "¿Cómo se llama el cachorro que adoptó {rel}?", ("¡Un cachorro, qué buena noticia!",)),
    relation="‹mi compañero|mi compañera› de {company}",
    introductions=("Por cierto, {rel} se llama {name}.", "Por fin tomé un café con {rel}, {name}."),
    intro_replies=("¡Qué bien suena!", "Me alegro de que os llevéis bien."),
    when=(("hoy", 0), ("esta mañana", 0), ("hace un rato", 0), ("ayer", 1)), topics=TOPICS, slots=SLOTS)
