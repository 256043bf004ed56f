"""The main language of a history, so that planted sessions can be written in it (or say they are not).

Two steps, each dependable on its own:

1. **Script.**  Letters are counted by Unicode script (``unicodedata`` names:
   HANGUL, CJK, HIRAGANA/KATAKANA, CYRILLIC, ARABIC, LATIN, …).  A script used by one
   language names it (Hangul: Korean; kana beside CJK ideographs: Japanese; CJK
   alone: Chinese; Thai, Greek, Hebrew).
2. **Language within a script.**  Latin, Cyrillic, Arabic and Devanagari are shared
   by many languages: ``py3langid`` (langid.py's model, shipped inside the package,
   offline) classifies a sample of the text, restricted to the languages of that script.

Fewer than ``MIN_LETTERS`` letters of a shared script, or langid unsure, give ``und``
(not told).  The
sample is every user turn's text up to ``SAMPLE_CHARS`` characters, taken evenly
across the history (the user's turns are in the user's language; assistant replies
may quote code or other languages).  Deterministic: no randomness, no clock.
"""

from __future__ import annotations

import functools
import math
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

SAMPLE_CHARS = 60_000
MIN_LETTERS = 50  # fewer letters of a shared script: too little text for langid ("und")
MIN_CONFIDENCE = 0.5  # langid's normalized probability below this: "und"
NAMES = {"en": "English", "ko": "Korean", "ja": "Japanese", "zh": "Chinese", "ru": "Russian", "uk": "Ukrainian",
         "ar": "Arabic", "fa": "Persian", "de": "German", "fr": "French", "es": "Spanish", "pt": "Portuguese",
         "it": "Italian", "nl": "Dutch", "pl": "Polish", "tr": "Turkish", "vi": "Vietnamese", "id": "Indonesian",
         "th": "Thai", "el": "Greek", "he": "Hebrew", "hi": "Hindi", "sv": "Swedish", "da": "Danish",
         "no": "Norwegian", "fi": "Finnish", "cs": "Czech"}
# scripts one language owns, by the first word of a letter's Unicode name
SCRIPT_LANGUAGE = {"HANGUL": "ko", "THAI": "th", "GREEK": "el", "HEBREW": "he"}
# shared scripts: langid.py's languages written in each
SCRIPT_CANDIDATES = {
    "LATIN": ("en", "de", "fr", "es", "pt", "it", "nl", "pl", "tr", "vi", "id", "sv", "da", "no", "fi", "cs",
              "ro", "hu", "hr", "sk", "sl", "et", "lv", "lt", "ms", "tl", "sw", "ca", "eu", "gl", "af", "is",
              "ga", "cy", "eo", "az", "sq", "lb", "mt", "oc", "br", "wa", "nb", "nn", "la", "qu", "xh", "zu",
              "rw", "ht", "jv", "mg", "se", "fo", "an", "ku", "bs", "et"),
    "CYRILLIC": ("ru", "uk", "bg", "sr", "mk", "be", "kk", "ky", "mn"),
    "ARABIC": ("ar", "fa", "ur", "ps", "ug"),
    "DEVANAGARI": ("hi", "mr", "ne"),
}


@dataclass(frozen=True)
class Language:
    """A history's main language: an ISO 639-1 ``code`` (``und`` when unknown), its script and how sure.

    ``share`` is the main script's share of the sample's letters; ``letters`` how many letters were read.
    """

    code: str
    script: str
    share: float
    letters: int

    @property
    def name(self) -> str:
        """The language's English name (``Korean``), or its code when this module has no name for it."""
        return NAMES.get(self.code, self.code)


def sample_text(texts: Sequence[str], limit: int = SAMPLE_CHARS) -> str:
    """About ``limit`` characters of ``texts``: every text when they fit, else every n-th, evenly across them."""
    total = sum(len(t) for t in texts)
    stride = max(1, math.ceil(total / limit))
    return "\n".join(texts[::stride])[: 2 * limit]


def script_counts(text: str) -> Counter[str]:
    """Letters of ``text`` per script (the first word of each letter's Unicode name)."""
    counts: Counter[str] = Counter()
    for ch in text:
        if ch.isalpha():
            counts[unicodedata.name(ch, "UNKNOWN").split(" ", 1)[0]] += 1
    if counts.get("HIRAGANA") or counts.get("KATAKANA"):
        counts["KANA"] = counts.pop("HIRAGANA", 0) + counts.pop("KATAKANA", 0)
    return counts


def detect_language(texts: Sequence[str]) -> Language:
    """The main language of ``texts`` (a history's user turns), from its script and, within a shared one, langid."""
    text = sample_text(list(texts))
    counts = script_counts(text)
    letters = sum(counts.values())
    if not letters:
        return Language("und", "none", 0.0, 0)
    script, top = counts.most_common(1)[0]
    cjk = counts.get("CJK", 0) + counts.get("KANA", 0)
    if script in ("CJK", "KANA") and counts.get("HANGUL", 0) < cjk:
        # Japanese mixes kana into kanji; Chinese has none
        code = "ja" if counts.get("KANA", 0) >= 0.1 * cjk else "zh"
        return Language(code, "CJK", cjk / letters, letters)
    if script in SCRIPT_LANGUAGE:
        return Language(SCRIPT_LANGUAGE[script], script, top / letters, letters)
    if script in SCRIPT_CANDIDATES:  # a script many languages share: langid tells them apart, given enough text
        code = _langid(text, script) if top >= MIN_LETTERS else "und"
        return Language(code, script, top / letters, letters)
    return Language("und", script, top / letters, letters)


@functools.cache
def _identifier(script: str) -> Any:
    """langid.py's model (loaded once per script), limited to the languages written in ``script``."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    known = set(identifier.nb_classes)
    identifier.set_languages([c for c in dict.fromkeys(SCRIPT_CANDIDATES[script]) if c in known])
    return identifier


def _langid(text: str, script: str) -> str:
    """``py3langid``'s answer among the languages written in ``script`` (``und`` when it is unsure)."""
    code, probability = _identifier(script).classify(text)
    return str(code) if probability >= MIN_CONFIDENCE else "und"
