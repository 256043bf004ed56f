"""Portuguese planted sentences (Brazilian, Faker ``pt_BR``): ``‹meu amigo|minha amiga›`` by the person's gender."""

from __future__ import annotations

from datetime import date

from lyra_lab.synthetic._phrasebook import Changed, Happened, Phrasebook, Said, Told
from lyra_lab.synthetic._templates import Topic

MONTHS = ("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro",
          "novembro", "dezembro")


def _date(day: date) -> str:
    return f"{day.day} de {MONTHS[day.month - 1]}"


SLOTS: dict[str, tuple[str, ...]] = {
    "ingredient": ("grão-de-bico", "abobrinha", "cogumelos", "espinafre", "lentilha", "berinjela", "cenoura"),
    "dish": ("um ensopado", "uma sopa", "um curry", "uma torta", "um refogado", "um risoto"),
    "place": ("Lisboa", "Nápoles", "Porto", "Cracóvia", "Edimburgo", "Viena", "Marselha"),
    "span": ("um fim de semana prolongado", "quatro dias", "uma semana", "dez dias"),
    "task": ("o relatório trimestral", "a apresentação para o cliente", "o orçamento do ano", "o projeto de pesquisa"),
}
TOPICS: tuple[Topic, ...] = (
    Topic("Ideias de cozinha", ("ingredient", "dish"), (
        ("Tenho um monte de {ingredient} para usar. Alguma ideia?",
         "Experimente {dish}: é fácil, esquenta bem e dura alguns dias na geladeira."),
        ("O que eu posso fazer hoje à noite com {ingredient} sem complicar?",
         "Refogue uma cebola, junte alho e uma lata de tomate, e em vinte minutos está pronto."),
        ("Quero fazer {dish} em menos de meia hora. Dá?",
         "Dá, sim, se você cortar tudo pequeno e cozinhar em fogo alto enquanto prepara o resto."))),
    Topic("Viagem", ("place", "span"), (
        ("Estou pensando em ir para {place} por {span}. Você acha que é suficiente?",
         "É mais do que suficiente se você escolher um bairro e explorar a pé."),
        ("O que eu não posso perder em {place}?",
         "Reserve antes o museu que mais te interessa e deixe o resto do tempo livre."),
        ("Como eu me desloco em {place} sem alugar carro?",
         "O transporte público funciona bem; um passe diário compensa rápido."))),
    Topic("Trabalho", ("task",), (
        ("Preciso entregar {task} amanhã e só fiz metade.",
         "Comece pelo mais importante e peça com sinceridade um pouco mais de prazo para o resto."),
        ("Pediram de novo para eu refazer {task}. Estou exausto.",
         "Anote as mudanças por escrito e peça confirmação; assim você evita mais idas e vindas."),
        ("Você me ajuda a organizar a semana em torno de {task}?",
         "Reserve duas manhãs sem reuniões para isso e deixe as tardes para o resto."))),
)

BOOK = Phrasebook(
    code="pt", locale="pt_BR", title="Colocando o papo em dia", date=_date,
    lives_in=Said(("‹Meu amigo|Minha amiga› {p} agora mora em {v}, então a gente se fala mais por telefone.",
                   "Conversei um tempão com {p}, que está morando em {v} há pouco tempo; disse que lá chove sem parar."),
                  ("Onde {p} mora?", "Em que cidade {p} mora?"),
                  ("Que bom que vocês continuam em contato mesmo de longe.",
                   "Conversa longa com amigo antigo faz muito bem.")),
    works_at=Said(("‹Meu amigo|Minha amiga› {p} trabalha na {v} e só fala do trabalho.",
                   "Hoje {p} me mostrou o escritório da {v}; ‹ele|ela› parece feliz lá."),
                  ("Onde {p} trabalha?", "Em que empresa {p} trabalha?"),
                  ("Parece um trabalho bem puxado!", "É legal conhecer um pouco do dia a dia dos amigos.")),
    birthday=Said(("Lembrete: o aniversário de {p} é dia {v}, este ano não posso esquecer.",
                   "{p} vai comemorar o aniversário no dia {v} com uma festinha."),
                  ("Quando é o aniversário de {p}?", "Que dia é o aniversário de {p}?"),
                  ("Anotado, um lembrete alguns dias antes ajudaria.", "Festas pequenas costumam ser as melhores.")),
    cat=Said(("{p} adotou um gato chamado {v}, e ele já manda na casa toda.",
              "Passei a noite na casa de {p} e o gato {v} me ignorou completamente."),
             ("Como se chama o gato de {p}?", "Qual é o nome do gato de {p}?"),
             ("Gatos assumem o comando rapidinho, todo mundo sabe.", "Ser ignorado por um gato é quase um elogio.")),
    children=Said(("{p} tem {v} filhos e mesmo assim corre todas as manhãs.",
                   "O jantar na casa de {p} foi uma bagunça boa: {v} crianças e um cachorro."),
                  ("Quantos filhos {p} tem?", "{p} tem quantos filhos?"),
                  ("Que energia!", "Deve ter sido um jantar bem animado!")),
    moved=Changed(("‹Meu amigo|Minha amiga› {p} mora em {v}, bem perto da estação.",
                   "{p} vive me chamando para visitar {v}, onde ‹ele|ela› mora."),
                  ("{p} acabou de se mudar de {old} para {new}!", "Novidade de {p}: agora ‹ele|ela› mora em {new}."),
                  ("Onde {p} mora agora?", "Em que cidade {p} mora agora?"),
                  ("Parece um lugar bonito.", "Você devia aceitar o convite um dia."),
                  ("Que mudança grande!", "Um recomeço, que bom.")),
    new_employer=Changed(("{p} trabalha na {v} há anos.", "{p} teve mais uma semana puxada na {v}."),
                         ("{p} saiu da {old} e começa na {new} na segunda.",
                          "{p} mudou de emprego: agora ‹ele|ela› está na {new}."),
                         ("Onde {p} trabalha agora?", "Em que empresa {p} trabalha agora?"),
                         ("Hoje em dia é raro ficar tantos anos no mesmo lugar.", "Semanas puxadas cansam qualquer um."),
                         ("Que bom, emprego novo é um passo grande.", "Uma mudança pode fazer muito bem.")),
    events=(Happened(("Almocei com {p} {when}, fazia séculos que a gente não se via.",), "Quando almocei com {p}?",
                     ("Nada como um almoço para colocar o papo em dia.",)),
            Happened(("Fiquei uma hora no telefone com {p} {when}.",), "Quando fiquei uma hora no telefone com {p}?",
                     ("Uma hora passa voando com as pessoas certas.",)),
            Happened(("Ajudei {p} a pintar a cozinha {when}. Meus braços estão moídos.",),
                     "Quando ajudei {p} a pintar a cozinha?", ("Pintar parede é um esporte!",))),
    moving_to=Told(("{name} vai se mudar para {v} na primavera.", "{name} me contou que vai morar em {v}."),
                   "Para onde {rel} vai se mudar?", ("Que mudança! Você vai ter um lugar novo para visitar.",)),
    adopted=Told(("{name} adotou um filhote chamado {v}!", "{name} me mandou fotos do filhote novo, {v}."),
                 "Como se chama o filhote que {rel} adotou?", ("Um filhote, que notícia boa!",)),
    relation="‹meu colega|minha colega› da {company}",
    introductions=("Aliás, {rel} se chama {name}.", "Finalmente tomei um café com {rel}, {name}."),
    intro_replies=("Que legal!", "Que bom que vocês se dão bem."),
    when=(("hoje", 0), ("hoje de manhã", 0), ("agora há pouco", 0), ("ontem", 1)), topics=TOPICS, slots=SLOTS)
