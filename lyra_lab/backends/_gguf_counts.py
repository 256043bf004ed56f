"""Tokens as a llama.cpp server counts them for a GGUF model, without starting the server.

A plan of a run on the ``local`` preset needs the prompt and completion tokens its server will
report.  The server counts a prompt after its chat template: the GGUF's own template (SmolLM2's
adds a default system message, 30 tokens a call) tokenized by the model's own vocabulary, special
tokens included.  ``gguf_counts(path)`` loads only that vocabulary (``Llama(vocab_only=True)``,
about 0.3 s, no weights) and applies the template as ``llama_cpp``'s server does, so
``prompt(messages)`` equals the server's ``usage.prompt_tokens`` (checked against the real server
in ``tests/backends/test_gguf_counts.py``).  A GGUF without a chat template, or one that
``llama_cpp`` maps to a named built-in format, has no ``GgufCounts``: the caller estimates.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Sequence, cast

from lyra_lab.backends._types import Message

if TYPE_CHECKING:
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter
    from llama_cpp.llama_types import ChatCompletionRequestMessage


@dataclass(frozen=True)
class GgufCounts:
    """A GGUF model's token counts, as its llama.cpp server reports them.

    Attributes:
        model_path: the GGUF file.
        vocab: the model's vocabulary (a ``Llama`` loaded with ``vocab_only=True``).
        formatter: its chat template, as the server applies it.
    """

    model_path: Path
    vocab: Llama
    formatter: Jinja2ChatFormatter

    def text(self, text: str) -> int:
        """Tokens of ``text`` alone (a completion): no template, no special tokens."""
        return len(self.vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def prompt(self, messages: Sequence[Message]) -> int:
        """The server's ``prompt_tokens`` for a chat request of ``messages``."""
        chat = cast("list[ChatCompletionRequestMessage]", [dict(m) for m in messages])  # role and content, as sent
        result = self.formatter(messages=chat)
        return len(self.vocab.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True))


def gguf_counts(model_path: str | os.PathLike[str] | None = None) -> GgufCounts | None:
    """The ``GgufCounts`` of ``model_path`` (None: the bundled SmolLM2); None when it has no chat template of its own."""
    from lyra_lab.backends._local_process import bundled_model_path, check_gguf

    path = check_gguf(model_path) if model_path else bundled_model_path()
    return _load(str(path))


@functools.lru_cache(maxsize=4)
def _load(path: str) -> GgufCounts | None:
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    with _quiet_stderr():  # llama.cpp prints a context warning even with verbose=False
        vocab = Llama(model_path=path, vocab_only=True, verbose=False)
    atexit.register(vocab.close)  # freed while llama_cpp still can: at interpreter teardown its __del__ fails loudly
    template = vocab.metadata.get("tokenizer.chat_template")
    if not template or vocab.chat_format != "chat_template.default":
        return None  # the server would use a built-in format: not modelled here
    model = vocab._model  # noqa: SLF001 - llama_cpp exposes the special tokens' text only on its model

    def special(token: int) -> str:  # as the server builds its formatter: no such token, no text
        return model.token_get_text(token) if token != -1 else ""

    formatter = Jinja2ChatFormatter(template=template, eos_token=special(vocab.token_eos()),
                                    bos_token=special(vocab.token_bos()))
    return GgufCounts(Path(path), vocab, formatter)


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """File descriptor 2 to the null device for the block (what the C library writes there, too)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
