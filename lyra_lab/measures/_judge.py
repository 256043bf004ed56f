"""An optional LLM judge: is a generated answer correct given the gold answer?

The judge backend and the judge prompt are experiment variables (judge scores
move a lot with the prompt), so the prompt is named and recorded with results.
A judge returns 1 or 0 and its raw text.  Each prompt (``JUDGE_PROMPTS``,
``lyra_lab.measures._judge_prompts``) says what it asks of the reply: its length
(``JudgeReply.max_tokens``, a judge's default and minimum), its format and the rule
that reads it (``lyra_lab.measures._verdicts``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from lyra_lab.backends import Backend, Completion
from lyra_lab.corpus import Probe
from lyra_lab.measures._judge_prompts import DEFAULT_JUDGE_PROMPT, JUDGE_PROMPTS, JudgePrompt, TypedJudgePrompt
from lyra_lab.measures._named import look_up


def check_judge_tokens(prompt: JudgePrompt | TypedJudgePrompt, max_tokens: int) -> None:
    """Refuse a reply length below what ``prompt`` needs: one line naming the minimum.

    >>> from lyra_lab.measures import JUDGE_PROMPTS
    >>> check_judge_tokens(JUDGE_PROMPTS["mem0_locomo"], 8)
    Traceback (most recent call last):
    ...
    lyra_lab._errors.ConfigError: judge 'mem0_locomo': max_tokens = 8 is below its prompt's minimum of 128
    """
    from lyra_lab._registry import ConfigError

    need = prompt.reply.max_tokens
    if max_tokens < need:
        raise ConfigError(f"judge {prompt.name!r}: max_tokens = {max_tokens} is below its prompt's minimum of {need}")


@dataclass(frozen=True, repr=False)
class JudgeConfig:
    """One judge of a run: a named prompt on a backend (``[qa] judges`` lists several).

    Attributes:
        prompt: a name in ``JUDGE_PROMPTS``.
        backend: the judge model: a preset name or a backend table, as in ``[run] backends``.
        max_tokens: the judge's reply length cap; default (None) the prompt's need
            (``JudgeReply.max_tokens``), and a cap below that need is refused.
        name: the judge's label in result rows (column ``judge``); default ``<prompt>@<backend>``.
        controls: also send this judge, for each judged probe, answers whose truth is known (the gold
            itself, and wrong but on-topic ones built from the conversation: ``lyra_lab.measures.judge_controls``),
            so the report gives its true- and false-positive rates; false: no control calls.
        corrected: report this judge's accuracy also corrected for its measured error rates
            (Rogan–Gladen: ``(J - FPR) / (TPR - FPR)``, clipped to [0, 1]); needs ``controls``.
    """

    prompt: str = DEFAULT_JUDGE_PROMPT
    backend: str | Mapping[str, Any] = ""  # a preset name or a backend table; required (checked below)
    max_tokens: int | None = None  # None: the prompt's need (resolved below, so reprs show the number)
    name: str | None = None
    controls: bool = True
    corrected: bool = False

    def __post_init__(self) -> None:
        from lyra_lab._registry import ConfigError

        prompt = look_up(JUDGE_PROMPTS, self.prompt, "judge prompt")
        if self.max_tokens is None:
            object.__setattr__(self, "max_tokens", prompt.reply.max_tokens)
        if not self.backend:
            raise ConfigError(f"judge {self.prompt!r} needs a 'backend' (the judge model is a named variable)")
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ConfigError(f"judge {self.prompt!r}: max_tokens must be a positive integer, got {self.max_tokens!r}")
        check_judge_tokens(prompt, self.max_tokens)
        if self.name is not None and (not isinstance(self.name, str) or not self.name.strip()):
            raise ConfigError(f"judge {self.prompt!r}: name must be a non-empty string, got {self.name!r}")
        for key in ("controls", "corrected"):
            if not isinstance(getattr(self, key), bool):
                raise ConfigError(f"judge {self.prompt!r}: {key} must be true or false, got {getattr(self, key)!r}")
        if self.corrected and not self.controls:
            raise ConfigError(f"judge {self.prompt!r}: corrected = true needs controls = true "
                              "(the correction uses the error rates the controls measure)")

    def __repr__(self) -> str:
        # Cell ids hash this repr: the fields added later appear only when set away from their
        # defaults, so the cells of runs from before them keep their ids.
        shown = ["prompt", "backend", "max_tokens", "name"]
        shown += [k for k, default in (("controls", True), ("corrected", False)) if getattr(self, k) != default]
        return f"JudgeConfig({', '.join(f'{k}={getattr(self, k)!r}' for k in shown)})"

    @property
    def label(self) -> str:
        """The judge's name in rows and reports."""
        return self.name or f"{self.prompt}@{backend_label(self.backend)}"


def backend_label(spec: object) -> str:
    """A short name for a backend spec, as in the ``backend`` column: a string as it is, a table by its name/preset and model."""
    if isinstance(spec, str):
        from lyra_lab.backends import redact

        # a URL preset (llamacpp/http://user:pw@host/v1) must not carry its credentials into rows
        preset, _, url = spec.partition("/")
        return f"{preset}/{redact(url)}" if "://" in url else redact(spec)
    if isinstance(spec, Mapping):
        name = str(spec.get("name") or spec.get("preset") or "custom")
        return f"{name}/{spec['model']}" if spec.get("model") and "/" not in name else name
    return spec.name if isinstance(spec, Backend) else type(spec).__name__


@dataclass(frozen=True)
class JudgeResult:
    """A judgement: ``score`` 1 or 0, the judge's ``raw`` reply, whether it was ``parsed``."""

    score: int
    raw: str
    parsed: bool
    prompt: str
    completion: Completion | None = None


def judge_answer(
    probe: Probe,
    answer: str,
    backend: Backend,
    prompt: str | JudgePrompt | TypedJudgePrompt = DEFAULT_JUDGE_PROMPT,
    *,
    max_tokens: int | None = None,
) -> JudgeResult:
    """Ask the judge ``backend`` whether ``answer`` is correct for ``probe`` (temperature 0).

    The call is sent as the prompt asks (``JudgeReply``: ``max_tokens``, default the prompt's
    need, and any ``response_format``) and its reply read by the prompt's verdict rule.

    Raises:
        ConfigError: ``max_tokens`` below what the prompt needs.
    """
    if not isinstance(prompt, (JudgePrompt, TypedJudgePrompt)):
        prompt = look_up(JUDGE_PROMPTS, prompt, "judge prompt")
    tokens = prompt.reply.max_tokens if max_tokens is None else max_tokens
    check_judge_tokens(prompt, tokens)
    message = {"role": "user", "content": prompt.render(probe, answer)}
    params: dict[str, object] = {"max_tokens": tokens, "temperature": 0.0, **prompt.reply.params()}
    completion = backend.complete([message], deadline=None, **params)
    score, parsed = prompt.reply.read(completion.text)
    return JudgeResult(score=score, raw=completion.text, parsed=parsed, prompt=prompt.name, completion=completion)
