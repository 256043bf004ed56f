"""Korean planted sentences (Faker ``ko_KR``), polite 해요체; particles chosen by the word's final consonant.

A template writes a particle whose form depends on the word before it as both forms
(``이/가``, ``은/는``, ``을/를``, ``과/와``) or with the optional syllable in brackets
(``(으)로``, ``(이)에요``, ``(이)라는``, ``(이)랑``); ``finish`` picks the form from the
last syllable's final consonant (받침): ``서산시로``, ``영월군으로`` (ㄹ takes ``로``: ``서울로``),
``지혜예요``, ``민준이에요``.
"""

from __future__ import annotations

import re
from datetime import date

from lyra_lab.synthetic._chat_ko import SLOTS, TOPICS
from lyra_lab.synthetic._phrasebook import Changed, Happened, Phrasebook, Said, Told

PARTICLE = re.compile(r"(\S?)(이/가|은/는|을/를|과/와|\(으\)로|\(이\)에요|\(이\)라는|\(이\)랑)")
RIEUL = 8  # the final consonant ㄹ's index in a Hangul syllable


def final_consonant(syllable: str) -> int:
    """The index of ``syllable``'s final consonant (0: none, also for anything not a Hangul syllable)."""
    code = ord(syllable) - 0xAC00 if syllable else -1
    return code % 28 if 0 <= code < 11172 else 0


def particle(word_end: str, marker: str) -> str:
    """The form of ``marker`` (``이/가``, ``(으)로`` …) after a word ending in ``word_end``."""
    last = final_consonant(word_end)
    if marker == "(으)로":
        return "으로" if last and last != RIEUL else "로"
    if marker == "(이)에요":
        return "이에요" if last else "예요"
    if marker.startswith("(이)"):
        return ("이" if last else "") + marker[3:]
    with_final, without = marker.split("/")
    return with_final if last else without


def finish(text: str) -> str:
    """``text`` with every particle marker in the form its word takes."""
    return PARTICLE.sub(lambda m: m.group(1) + particle(m.group(1), m.group(2)), text)


def _date(day: date) -> str:
    return f"{day.month}월 {day.day}일"


BOOK = Phrasebook(
    code="ko", locale="ko_KR", title="근황 이야기", date=_date, family_first=True, finish=finish,
    lives_in=Said(("제 친구 {p} 씨는 요즘 {v}에 살아서 주로 전화로 이야기해요.",
                   "{p} 씨랑 오래 통화했는데, 요즘 {v}에서 지낸대요. 거기 날씨가 별로래요."),
                  ("{p} 씨는 어디에 살아요?", "{p} 씨는 어느 도시에 살아요?"),
                  ("멀리 있어도 연락하고 지내는 게 참 좋네요.", "오랜 친구랑 길게 통화하면 힘이 나죠.")),
    works_at=Said(("제 친구 {p} 씨는 {v}에서 일하는데 만나면 회사 얘기만 해요.",
                   "오늘 {p} 씨가 다니는 {v} 사무실을 구경했어요. 회사를 좋아하는 것 같아요."),
                  ("{p} 씨는 어디에서 일해요?", "{p} 씨는 어느 회사에 다녀요?"),
                  ("일이 꽤 바쁜가 봐요!", "친구가 어떻게 지내는지 보는 것도 재미있죠.")),
    birthday=Said(("잊지 말아야지. {p} 씨 생일은 {v}(이)에요.", "{p} 씨가 {v}에 생일 파티를 작게 한대요."),
                  ("{p} 씨 생일이 언제예요?", "{p} 씨 생일은 몇 월 며칠이에요?"),
                  ("며칠 전에 미리 알려 드릴게요.", "작은 파티가 제일 즐겁죠.")),
    cat=Said(("{p} 씨가 고양이를 입양했는데 이름은 {v}(이)에요. 벌써 집주인 행세를 한대요.",
              "{p} 씨네 집에 갔는데 고양이 {v}한테 완전히 무시당했어요."),
             ("{p} 씨네 고양이 이름이 뭐예요?", "{p} 씨가 키우는 고양이 이름이 뭐예요?"),
             ("고양이는 금방 집을 접수하죠.", "고양이한테 무시당하는 건 거의 칭찬이에요.")),
    children=Said(("{p} 씨는 아이가 {v}명인데도 매일 아침 달리기를 해요.",
                   "{p} 씨네 집 저녁은 정말 정신없었어요. 아이 {v}명에 강아지까지 있어요."),
                  ("{p} 씨는 아이가 몇 명이에요?", "{p} 씨네 아이는 몇 명이에요?"),
                  ("체력이 정말 대단하시네요.", "시끌벅적한 저녁이었겠어요!")),
    moved=Changed(("제 친구 {p} 씨는 {v}에 살아요. 역 바로 앞이에요.", "{p} 씨가 자꾸 {v}에 놀러 오래요. 거기 살거든요."),
                  ("{p} 씨가 {old}에서 {new}(으)로 이사했대요!", "{p} 씨 소식 들었어요. 이제 {new}에 산대요."),
                  ("{p} 씨는 지금 어디에 살아요?", "{p} 씨는 요즘 어느 도시에 살아요?"),
                  ("살기 좋은 곳 같네요.", "언젠가 한번 놀러 가 보세요."),
                  ("큰 변화네요! 새집은 마음에 든대요?", "새 출발이네요. 잘됐어요.")),
    new_employer=Changed(("{p} 씨는 {v}에서 몇 년째 일하고 있어요.", "{p} 씨가 {v}에서 이번 주에도 야근했대요."),
                         ("{p} 씨가 {old}을/를 그만두고 월요일부터 {new}에 출근해요.",
                          "{p} 씨가 이직했어요. 이제 {new}에 다녀요."),
                         ("{p} 씨는 지금 어디에서 일해요?", "{p} 씨는 요즘 어느 회사에 다녀요?"),
                         ("한 곳에서 오래 일하는 것도 쉽지 않죠.", "야근이 잦으면 정말 지치죠."),
                         ("잘됐네요. 새 직장은 큰 결심이었겠어요.", "변화가 좋은 기회가 되면 좋겠어요.")),
    events=(Happened(("{when} {p} 씨랑 점심을 먹었어요. 정말 오랜만이었어요.",), "제가 언제 {p} 씨랑 점심을 먹었어요?",
                     ("오랜만에 만나서 반가웠겠어요.",)),
            Happened(("{when} {p} 씨랑 한 시간 동안 통화했어요.",), "제가 언제 {p} 씨랑 한 시간 동안 통화했어요?",
                     ("마음 맞는 사람이랑은 한 시간도 금방이죠.",)),
            Happened(("{when} {p} 씨네 부엌 페인트칠을 도와줬어요. 팔이 너무 아파요.",),
                     "제가 언제 {p} 씨네 부엌 페인트칠을 도와줬어요?", ("페인트칠은 진짜 운동이에요!",))),
    moving_to=Told(("{name} 씨가 봄에 {v}(으)로 이사 간대요.", "{name} 씨가 곧 {v}(으)로 옮긴다고 했어요."),
                   "{rel}은/는 어디로 이사 가요?", ("큰 변화네요! 놀러 갈 곳이 하나 생겼어요.",)),
    adopted=Told(("{name} 씨가 강아지를 입양했대요. 이름은 {v}(이)에요!", "{name} 씨가 새로 데려온 강아지 {v} 사진을 보내 줬어요."),
                 "{rel}이/가 입양한 강아지 이름이 뭐예요?", ("강아지라니, 좋은 소식이네요!",)),
    relation="{company}에 다니는 동료",
    introductions=("참, {rel} 이름은 {name}(이)에요.", "드디어 {rel} {name} 씨랑 커피를 마셨어요."),
    intro_replies=("좋은 시간이었겠어요!", "잘 맞는 동료가 있다니 다행이에요."),
    when=(("오늘", 0), ("오늘 아침에", 0), ("아까", 0), ("어제", 1)), topics=TOPICS, slots=SLOTS)
