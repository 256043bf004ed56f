"""Summarization prompts as data: templates a user can override one by one.

Templates are ``str.format`` strings with named fields only.  The defaults put
the transcript and the instruction in ONE user message, the instruction last,
with no system message: the bundled SmolLM2-135M only summarizes that way.
Tried on a LoCoMo excerpt, it merely continued the dialogue when the
instruction came first, or when it was longer ("Keep names, dates, numbers,
facts…") or said "a few sentences"; "Summarize the conversation above in two
sentences." worked.  Larger models may want richer prompts: override any
template by name.  ``{focus}`` becomes the ``focus`` template filled with the
caller's focus instruction, or nothing.  Literal braces in a template are
written ``{{`` and ``}}``.

>>> p = Prompts.coerce({"merge": "Merge: {partials}"})
>>> p.messages("merge", partials="a; b")
[{'role': 'user', 'content': 'Merge: a; b'}]
"""

from __future__ import annotations

import string
from dataclasses import dataclass, fields
from typing import Any, Mapping

# template name → (fields it must use, fields it may use)
FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "single": (frozenset({"transcript"}), frozenset({"transcript", "focus"})),
    "chunk": (frozenset({"transcript"}), frozenset({"transcript", "focus", "i", "n"})),
    "merge": (frozenset({"partials"}), frozenset({"partials", "focus", "n"})),
    "refine": (frozenset({"summary", "transcript"}), frozenset({"summary", "transcript", "focus", "i", "n"})),
    "focus": (frozenset({"focus"}), frozenset({"focus"})),
    "partial": (frozenset({"text"}), frozenset({"text", "i", "n"})),
}

@dataclass(frozen=True)
class Prompts:
    """The templates every summarizer fills.

    Attributes:
        single: one call over the whole transcript (``{transcript}``, ``{focus}``).
        chunk: one part of a longer conversation (``{transcript}``, ``{focus}``, ``{i}``, ``{n}``).
        merge: the partial summaries into one (``{partials}``, ``{focus}``, ``{n}``).
        refine: a running summary folded with the next part (``{summary}``, ``{transcript}``…).
        focus: how a focus instruction is phrased where ``{focus}`` appears.
        partial: how one partial summary is listed inside ``{partials}`` (``{text}``, ``{i}``, ``{n}``).
        system: an optional system message (None: none, the default).
    """

    single: str = "{transcript}\nSummarize the conversation above in two sentences.{focus}"
    chunk: str = "{transcript}\nSummarize the conversation above in two sentences.{focus}"
    merge: str = ("{partials}\n\nCombine the summaries above into one summary of two or three "
                  "sentences. Keep names and dates.{focus}")
    refine: str = ("Earlier: {summary}\n\n{transcript}\nSummarize the conversation above, including "
                   "what happened earlier, in a few sentences.{focus}")
    focus: str = " Focus on: {focus}"
    partial: str = "Part {i}: {text}"
    system: str | None = None

    def __post_init__(self) -> None:
        for name, (required, allowed) in FIELDS.items():
            _check_template(name, getattr(self, name), required, allowed)
        if self.system is not None and not isinstance(self.system, str):
            raise ValueError(f"prompts.system must be a string or None, got {type(self.system).__name__}")

    @classmethod
    def coerce(cls, value: "Prompts | Mapping[str, Any] | None") -> "Prompts":
        """A ``Prompts`` from itself, from a dict of overrides of the defaults, or None (defaults)."""
        if value is None:
            return DEFAULT_PROMPTS
        if isinstance(value, Prompts):
            return value
        if isinstance(value, Mapping):
            known = {f.name for f in fields(cls)}
            unknown = sorted(set(value) - known)
            if unknown:
                raise ValueError(f"prompts: unknown template {unknown[0]!r}; "
                                 f"known: {', '.join(sorted(known))}")
            return cls(**dict(value))
        raise ValueError(f"prompts must be a Prompts or a dict of templates, got {type(value).__name__}")

    def focus_text(self, focus: str | None) -> str:
        """What ``{focus}`` becomes: the focus template filled, or ``""`` without a focus."""
        return self.focus.format(focus=focus) if focus else ""

    def partials_text(self, partials: list[str]) -> str:
        """The partial summaries listed for the merge prompt, one paragraph each."""
        n = len(partials)
        return "\n\n".join(self.partial.format(text=t, i=i, n=n) for i, t in enumerate(partials, 1))

    def messages(self, template: str, *, focus: str | None = None, **values: object) -> list[dict[str, str]]:
        """The chat messages for ``template`` filled with ``values`` (and the focus)."""
        content = getattr(self, template).format(focus=self.focus_text(focus), **values)
        out = [{"role": "system", "content": self.system}] if self.system else []
        return out + [{"role": "user", "content": content}]


def _check_template(name: str, template: object, required: frozenset[str], allowed: frozenset[str]) -> None:
    if not isinstance(template, str):
        raise ValueError(f"prompts.{name} must be a string, got {type(template).__name__}")
    try:
        used = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    except ValueError as exc:
        raise ValueError(f"prompts.{name}: {exc} (write literal braces as {{{{ and }}}})") from None
    bad = sorted(f for f in used if f not in allowed)
    if bad:
        raise ValueError(f"prompts.{name}: unknown field {{{bad[0]}}}; allowed: "
                         + ", ".join("{" + f + "}" for f in sorted(allowed)))
    missing = sorted(required - used)
    if missing:
        raise ValueError(f"prompts.{name} must contain {{{missing[0]}}}")


DEFAULT_PROMPTS = Prompts()
