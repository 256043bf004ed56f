"""``AnswerRoom``: the context tokens the answerer's window leaves beside its prompt, question and answer.

The ``full_context`` ceiling is the whole history up to the answerer's window, so its context
budget is this room, not ``[grid] context_tokens``.  For one probe::

    room = floor((window - CHAT_TOKENS - answer) / safety) - prompt

* ``window``: ``backends.context_window`` of the answering model's spec;
* ``answer``: the largest answer cap of the prompts asked (a prompt's own cap, else
  ``[qa] max_tokens``), which the server reserves in its window;
* ``prompt``: the tokens of the longest of those prompts rendered over an empty context with
  the probe's question, counted as the context is (the pipeline's tokenizer, o200k by default);
* ``CHAT_TOKENS``: the chat template around the one user message, in the model's tokens
  (SmolLM2's, with the default system line it adds: 30 tokens, measured; 40 allowed);
* ``safety``: the context and prompt are counted with o200k (bpe-openai), the model with its
  own tokenizer, which splits digits one by one.  The bundled SmolLM2-135M GGUF's tokenizer
  (``llama_cpp.Llama(vocab_only=True)``) gives 1.17x o200k's tokens on ``short_v1`` over each LoCoMo
  conversation's whole history rendered as turn lines (1.15-1.20 by conversation, all 10); one-turn
  chunks, whose lines carry two dates, came to 1.28x (the server's prompt tokens less the template,
  ``examples/locomo_split.toml``, both conversations).  ``SAFETY`` = 1.35 covers both.

>>> from lyra_lab.backends import token_counter
>>> from lyra_lab.corpus import Probe
>>> room = AnswerRoom(window=2048, prompts=("short_v1",), max_tokens=32)
>>> room.answer_tokens, room.tokens(Probe("p", "c", "Where did Mel go?", "Paris"), token_counter())
(32, 1412)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lyra_lab._registry import ConfigError
from lyra_lab.backends import TokenCount
from lyra_lab.corpus import Probe
from lyra_lab.measures._qa import get_answer_prompt

SAFETY = 1.35  # SmolLM2's tokens per o200k token on LoCoMo: 1.17 on turn lines, 1.28 on dated chunks
CHAT_TOKENS = 40  # the chat template around the user message (SmolLM2's: 30 measured)


@dataclass(frozen=True)
class AnswerRoom:
    """The context budget an answerer's window leaves for one probe (see the module docstring).

    Attributes:
        window: tokens the answering model's window holds (``backends.context_window``).
        prompts: the answer prompts asked (names in ``ANSWER_PROMPTS``); the longest bounds the room.
        max_tokens: the answer cap of a prompt that sets none of its own (``[qa] max_tokens``).
        safety: the model's tokens per token of the context's counter, at most.
    """

    window: int
    prompts: tuple[str, ...]
    max_tokens: int
    safety: float = SAFETY

    def __post_init__(self) -> None:
        if not self.prompts:
            raise ConfigError("answer room: no answer prompt")
        if self.window < 1 or self.max_tokens < 1 or not self.safety >= 1.0:
            raise ConfigError(f"answer room: window and max_tokens must be positive and safety >= 1, got "
                              f"{self.window}, {self.max_tokens}, {self.safety}")
        for name in self.prompts:
            get_answer_prompt(name)  # an unknown name fails here, in one line

    @property
    def answer_tokens(self) -> int:
        """The largest answer cap among the prompts (what the server keeps free for the answer)."""
        return max(get_answer_prompt(p).max_tokens or self.max_tokens for p in self.prompts)

    def tokens(self, probe: Probe, count: TokenCount) -> int:
        """The context tokens (counted by ``count``) that fit beside ``probe``'s longest prompt (0: none)."""
        prompt = max(count(get_answer_prompt(p).render(probe, "")) for p in self.prompts)
        usable = math.floor((self.window - CHAT_TOKENS - self.answer_tokens) / self.safety)
        return max(0, usable - prompt)
