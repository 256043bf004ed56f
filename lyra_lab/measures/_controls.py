"""Judge controls: answers whose truth is known, sent to each judge beside the real answers.

A judge's verdict on a real answer is only as good as the judge.  To measure it, each judged
probe also gets *controls*, built deterministically from the probe and its conversation:

* ``gold``: the gold answer itself (truth: correct) — what the judge accepts measures its
  true-positive rate;
* ``shifted_date``: the gold with its year moved by one, or its month by one (truth: wrong);
* ``other_value``: the gold with its number replaced by another number of the conversation's
  turns, or a name it shares with the turns (a capitalized word mid-sentence there) by another
  such name, or else another probe's gold answer of the same conversation with no word in
  common (truth: wrong, on topic);
* ``negated``: the gold negated ("It is not …", truth: wrong).

Every probe gets ``gold`` and ``negated``; one of ``shifted_date``/``other_value`` when the gold
has a date, a number or a name to change (or the conversation another gold).  What the judge
accepts among the wrong ones measures its false-positive rate.  Probes that expect abstention
get no controls: their gold is an explanation, not a value to restate or change.  Choices among
candidates use a hash of the probe's id, so the same corpus always gives the same controls.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Iterable, Literal, Sequence

from lyra_lab.corpus import Probe
from lyra_lab.matching import expects_abstention
from lyra_lab.measures._judge import JudgeResult

ControlKind = Literal["gold", "shifted_date", "other_value", "negated"]
#: What each control is, for reports.
CONTROL_KINDS: dict[str, str] = {
    "gold": "the gold answer itself (truth: correct)",
    "shifted_date": "the gold with its year (or month) moved by one (truth: wrong)",
    "other_value": "the gold with a number or name swapped for another from the conversation (truth: wrong)",
    "negated": "the gold negated: 'It is not …' (truth: wrong)",
}

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_YEAR = re.compile(r"\b(19|20)\d\d\b")
_MONTH = re.compile(r"\b(" + "|".join(_MONTHS) + r")\b")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.]*\d)")
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:]\s+|\n)$")
_WORD = re.compile(r"\w+")
_NOT_NAMES = frozenset({*_MONTHS, "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
                        "I", "The", "A", "An", "It", "This", "That", "My", "Yes", "No", "Oh", "Hey", "Hi"})


@dataclass(frozen=True)
class JudgeControl:
    """One control answer: its ``kind`` (``CONTROL_KINDS``), its text and its ``truth`` (1 correct, 0 wrong)."""

    kind: ControlKind
    answer: str
    truth: int


@dataclass(frozen=True)
class ControlVerdict:
    """A judge's verdict on a control.

    ``corrected``: the judge's accuracy is to be reported corrected for its error rates
    (``JudgeConfig.corrected``).
    """

    judge: str
    control: JudgeControl
    result: JudgeResult
    corrected: bool = False


@dataclass(frozen=True)
class ControlPool:
    """The values of one conversation that controls swap in: numbers and names from its turns, its golds."""

    numbers: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    golds: tuple[str, ...] = ()

    @classmethod
    def from_texts(cls, turns: Iterable[str], golds: Iterable[str] = ()) -> "ControlPool":
        """The pool of a conversation from its turns' texts and its probes' gold answers (first seen first)."""
        numbers: dict[str, None] = {}
        names: dict[str, None] = {}
        for text in turns:
            numbers.update(dict.fromkeys(m.group(0) for m in _NUMBER.finditer(text) if not _YEAR.fullmatch(m.group(0))))
            names.update(dict.fromkeys(n for n in _names(text)))
        return cls(tuple(numbers), tuple(names), tuple(dict.fromkeys(str(g).strip() for g in golds if str(g).strip())))


def judge_controls(probe: Probe, pool: ControlPool) -> tuple[JudgeControl, ...]:
    """The controls of ``probe`` (see the module docstring); none for a probe that expects abstention."""
    gold = str(probe.answer).strip()
    if expects_abstention(probe) or not gold:
        return ()
    out = [JudgeControl("gold", gold, 1)]
    changed = _changed(gold, probe.id, pool)
    if changed is not None:
        out.append(changed)
    out.append(JudgeControl("negated", _negated(gold), 0))
    return tuple(out)


def _changed(gold: str, key: str, pool: ControlPool) -> JudgeControl | None:
    """The gold with its date shifted, or a number/name swapped, or another gold; None when nothing fits."""
    if (year := _YEAR.search(gold)) is not None:
        shift = 1 if _pick(key, 2) else -1
        return JudgeControl("shifted_date", _replace(gold, year, str(int(year.group(0)) + shift)), 0)
    if (month := _MONTH.search(gold)) is not None:
        i = _MONTHS.index(month.group(0))
        return JudgeControl("shifted_date", _replace(gold, month, _MONTHS[(i + 1) % 12]), 0)
    if (number := _NUMBER.search(gold)) is not None:
        others = [n for n in pool.numbers if n != number.group(0)]
        value = others[_pick(key, len(others))] if others else _bumped(number.group(0))
        return JudgeControl("other_value", _replace(gold, number, value), 0)
    here = [n for n in _names(gold, anywhere=True) if n in pool.names]  # a name the conversation uses as one
    others = [n for n in pool.names if n not in here and n not in gold]
    if here and others:
        start = gold.index(here[0])
        value = others[_pick(key, len(others))]
        return JudgeControl("other_value", gold[:start] + value + gold[start + len(here[0]):], 0)
    words = set(_WORD.findall(gold.lower()))
    unrelated = [g for g in pool.golds if not words & set(_WORD.findall(g.lower()))]
    if unrelated:
        return JudgeControl("other_value", unrelated[_pick(key, len(unrelated))], 0)
    return None


def _negated(gold: str) -> str:
    body = gold.rstrip(".")
    if len(body.split()) <= 4:
        return f"It is not {body}."
    return f"It is not true that {body[0].lower() + body[1:] if not body[:2].isupper() else body}."


def _names(text: str, anywhere: bool = False) -> list[str]:
    """Capitalized words and runs of them, not at a sentence's start (``anywhere``: there too)."""
    found = (m.group(0) for m in _NAME.finditer(text)
             if anywhere or not _SENTENCE_START.search(text[max(0, m.start() - 3):m.start()]))
    return [n for n in dict.fromkeys(found) if n not in _NOT_NAMES]


def _replace(text: str, match: re.Match[str], value: str) -> str:
    return text[:match.start()] + value + text[match.end():]


def _bumped(number: str) -> str:
    return str(float(number) + 1) if "." in number else str(int(number) + 1)


def _pick(key: str, n: int) -> int:
    """A stable index in ``range(n)`` from ``key`` (0 when ``n`` < 1)."""
    if n < 1:
        return 0
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little") % n


def control_count(probes: Sequence[Probe], pool: ControlPool) -> int:
    """How many controls ``probes`` get (each is one call per judge with controls)."""
    return sum(len(judge_controls(p, pool)) for p in probes)
