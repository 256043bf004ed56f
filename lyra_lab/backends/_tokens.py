"""Exact, offline token counts.

OpenAI models are counted exactly with the BPE tables that ``bpe-openai``
ships (tiktoken itself downloads them on first use, which fails offline).
Other models are counted with ``o200k_base`` as an *estimate*, and the counter
says so (``exact=False``); for a local model, pass the server's own tokenizer.
A backend's reported usage is always the ground truth; these counts are for
budgets, chunking and servers that report no usage.

Long texts (a memory of megabytes) are encoded in bounded pieces, never at
once: ``bpe-openai`` refuses inputs of a million characters or more.  Pieces
end where the OpenAI pre-tokenizers (``cl100k_base``, ``o200k_base``) always
split, after a newline followed by a character other than whitespace and ``/``, or before a space that
follows a non-space character, so counts and encodings stay exact; only a
run of ``PIECE_CHARS`` characters with neither (no whitespace at all) is cut
blindly, which can change its count by a token at the cut.  For a server's
tokenizer the same pieces are used, and counts there may differ by a token or
two per piece from one whole-text call.

>>> count_tokens("hello world", "gpt-4o-mini")
2
>>> token_counter("gpt-4").encoding
'cl100k_base'
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:
    import bpe_openai


DEFAULT_ENCODING = "o200k_base"
# Characters encoded at once: far below bpe-openai's 1,000,000-character limit, and at
# most 4 tokens per character keeps a piece under its 200,000-token chunk limit.
PIECE_CHARS = 40_000
# Positions where cl100k/o200k pre-tokenization always starts a new pre-token (see the module docstring).
SAFE_CUT = re.compile(r"(?<=\n)(?=[^\s/])|(?<=\S)(?= )")

# Prefix → encoding, longest prefix first, for model families bpe-openai's own
# table does not list yet (its list stops at gpt-4.1-mini).
_PREFIXES: tuple[tuple[str, str], ...] = (
    ("gpt-4o", "o200k_base"),
    ("chatgpt-4o", "o200k_base"),
    ("gpt-4.1", "o200k_base"),
    ("gpt-4.5", "o200k_base"),
    ("gpt-5", "o200k_base"),
    ("gpt-oss", "o200k_base"),
    ("o1", "o200k_base"),
    ("o3", "o200k_base"),
    ("o4", "o200k_base"),
    ("gpt-4", "cl100k_base"),
    ("gpt-3.5", "cl100k_base"),
    ("gpt-35", "cl100k_base"),
    ("text-embedding-3", "cl100k_base"),
    ("text-embedding-ada-002", "cl100k_base"),
)


def encoding_name_for(model: str) -> str | None:
    """The OpenAI encoding of ``model`` (an encoding name is accepted too), or None if unknown."""
    name = model.split("/")[-1].lower()
    for prefix, encoding in _PREFIXES:
        if name.startswith(prefix):
            return encoding
    import bpe_openai

    if name in bpe_openai.list_encoding_names():
        return name
    try:
        return bpe_openai.encoding_name_for_model(name)
    except (KeyError, ValueError, bpe_openai.UnsupportedModelError):
        return None


_ENCODINGS: dict[str, bpe_openai.Encoding] = {}
_ENCODINGS_LOCK = threading.Lock()


def _encoding(name: str) -> bpe_openai.Encoding:
    """The BPE table ``name``, built once per process (20–70 ms each), even when threads first ask at once.

    An ``lru_cache`` built it once per thread that missed together: a grid's cells starting
    side by side built it four times (a py-spy profile of ``benchmarks/fast_server.py``'s grid).
    """
    found = _ENCODINGS.get(name)
    if found is None:
        with _ENCODINGS_LOCK:
            found = _ENCODINGS.get(name)
            if found is None:
                import bpe_openai

                found = _ENCODINGS[name] = bpe_openai.get_encoding(name)
    return found


@runtime_checkable
class TokenCount(Protocol):
    r"""Counts a text's tokens, and says what else it can do (declared here, never probed).

    Attributes:
        lines_add_up: ``count(a + "\n" + b) == count(a + "\n") + count(b)`` whenever ``b`` starts with a
            character other than whitespace and ``/`` (such as every ``[label] text`` memory line), so a
            renderer may add up line counts.  True for the OpenAI encodings, whose pre-tokenizers always
            split there; False for a server's tokenizer or a plain function.
        decodes: ``encode``, ``decode`` and ``token_bytes`` work, so a context line can be cut on a token
            boundary; False: cut on word boundaries.
    """

    @property
    def lines_add_up(self) -> bool:
        """Whether counts of ``[label] text`` lines add up over newlines (see above)."""
        ...

    @property
    def decodes(self) -> bool:
        """Whether ``encode``/``decode`` cut text on token boundaries (see above)."""
        ...

    def __call__(self, text: str) -> int:
        """The number of tokens of ``text``."""
        ...

    def encode(self, text: str) -> Sequence[int]:
        """The token ids of ``text`` (only when ``decodes``)."""
        ...

    def decode(self, tokens: Sequence[int]) -> str:
        """The text of ``tokens`` (only when ``decodes``)."""
        ...

    def token_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """Each token's bytes: the text's first ``m`` tokens are ``b"".join(them[:m])`` (only when ``decodes``)."""
        ...


@dataclass(frozen=True)
class PlainCount:
    """A plain ``text -> int`` function as a ``TokenCount``: its counts neither add up by line nor decode.

    >>> PlainCount(lambda text: len(text.split()))("two words")
    2
    """

    count: Callable[[str], int]
    lines_add_up: bool = field(default=False, init=False)
    decodes: bool = field(default=False, init=False)

    def __call__(self, text: str) -> int:
        """``count(text)``."""
        return self.count(text)

    def encode(self, text: str) -> Sequence[int]:
        """Not available: a plain function only counts."""
        raise NotImplementedError("a plain counting function cannot encode")

    def decode(self, tokens: Sequence[int]) -> str:
        """Not available: a plain function only counts."""
        raise NotImplementedError("a plain counting function cannot decode")

    def token_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """Not available: a plain function only counts."""
        raise NotImplementedError("a plain counting function has no tokens")


def as_count(count: "TokenCount | Callable[[str], int]") -> TokenCount:
    """``count`` as a ``TokenCount`` (a plain function is wrapped in ``PlainCount``)."""
    if isinstance(count, (TokenCounter, LineMemoCounter, PlainCount)):  # the usual ones, without a protocol check
        return count
    return count if isinstance(count, TokenCount) else PlainCount(count)


@dataclass(frozen=True)
class TokenCounter:
    """A ``TokenCount`` for a model: exact for OpenAI encodings, or through a server's tokenizer.

    Attributes:
        model: the model counted for.
        encoding: the BPE table used, or ``"server"`` for a server's tokenizer.
        exact: false when the count is an estimate (unknown model).
        tokenize: a server's tokenizer (``text -> token ids``), None for the OpenAI encodings.
    """

    model: str
    encoding: str
    exact: bool
    tokenize: Callable[[str], Sequence[int]] | None = None

    @property
    def lines_add_up(self) -> bool:
        """True for the OpenAI encodings (see ``TokenCount``); a server's tokenizer promises nothing."""
        return self.tokenize is None

    @property
    def decodes(self) -> bool:
        """True for the OpenAI encodings; a server's tokenizer is only asked to encode."""
        return self.tokenize is None

    def __call__(self, text: str) -> int:
        """The number of tokens of ``text`` (long texts in pieces, see the module docstring)."""
        if len(text) <= PIECE_CHARS:
            return len(self._encode(text))
        return sum(len(self._encode(piece)) for piece in pieces(text))

    def encode(self, text: str) -> Sequence[int]:
        """The token ids of ``text``."""
        if len(text) <= PIECE_CHARS:
            return self._encode(text)
        out: list[int] = []
        for piece in pieces(text):
            out.extend(self._encode(piece))
        return out

    def _encode(self, text: str) -> Sequence[int]:
        if self.tokenize is not None:
            return self.tokenize(text)
        # Special-token text in a conversation ("<|endoftext|>") is plain text here.
        return _encoding(self.encoding).encode_ordinary(text)

    def decode(self, tokens: Sequence[int]) -> str:
        """The text of ``tokens`` (OpenAI encodings only)."""
        if self.tokenize is not None:
            raise NotImplementedError("a server tokenizer counter cannot decode")
        return str(_encoding(self.encoding).decode(list(tokens)))

    def token_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """Each token's bytes (OpenAI encodings only)."""
        if self.tokenize is not None:
            raise NotImplementedError("a server tokenizer counter cannot decode")
        return list(_encoding(self.encoding).decode_tokens_bytes(list(tokens)))


def _lines(text: str) -> list[str]:
    """``text`` cut after every newline followed by a character other than whitespace and ``/``.

    (``str.isspace`` covers every Unicode ``White_Space`` character, and a few
    more where a cut is merely skipped, which keeps counts exact.)
    """
    parts = text.split("\n")
    last = len(parts) - 1
    out: list[str] = []
    for i, part in enumerate(parts):
        piece = part + "\n" if i < last else part
        if out and (not part or part[0].isspace() or part[0] == "/"):
            out[-1] += piece
        else:
            out.append(piece)
    return out


class LineMemoCounter:
    """A ``TokenCounter`` of an OpenAI encoding that counts a text line by line and remembers each line's count.

    Recall renders many contexts out of the same memory lines (every probe × recaller, and
    again while fitting a budget); encoding each distinct line once makes that linear.  Lines
    are cut only after a newline followed by a character other than whitespace and ``/``,
    where these pre-tokenizers always split, so counts are exactly the counter's.
    """

    lines_add_up = True
    decodes = True

    def __init__(self, counter: TokenCounter, max_lines: int = 200_000):
        if not counter.lines_add_up:
            raise ValueError("line-by-line counts are exact only for the OpenAI encodings, not a server tokenizer")
        self.counter = counter
        self._memo: dict[str, int] = {}
        self._max_lines = max_lines

    def __call__(self, text: str) -> int:
        """The number of tokens of ``text``: the sum of its lines' remembered counts."""
        memo = self._memo
        known = memo.get(text)
        if known is not None:  # a line counted before (most texts asked are one line)
            return known
        total = 0
        for line in _lines(text) if "\n" in text else (text,):
            n = memo.get(line)
            if n is None:
                n = self.counter(line)
                if len(memo) >= self._max_lines:
                    memo.clear()  # a bound on memory; only costs re-encoding
                memo[line] = n
            total += n
        return total

    def encode(self, text: str) -> Sequence[int]:
        """The counter's ``encode``."""
        return self.counter.encode(text)

    def decode(self, tokens: Sequence[int]) -> str:
        """The counter's ``decode``."""
        return self.counter.decode(tokens)

    def token_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The counter's ``token_bytes``."""
        return self.counter.token_bytes(tokens)


def pieces(text: str, size: int = PIECE_CHARS) -> list[str]:
    """``text`` cut into pieces of at most ``size`` characters, at safe cuts where there are any.

    >>> pieces("one two three", size=8)
    ['one two', ' three']
    """
    if size < 2:
        raise ValueError(f"size must be >= 2, got {size}")
    out, start = [], 0
    while len(text) - start > size:
        end = start + size
        cut = None
        for match in SAFE_CUT.finditer(text, start + size // 2, end + 1):
            cut = match.start()
        if cut is None or cut <= start:
            cut = end  # no whitespace in half a piece: a blind cut (see the module docstring)
        out.append(text[start:cut])
        start = cut
    out.append(text[start:])
    return out


def token_counter(model: str = "gpt-4o-mini", tokenize: Callable[[str], Sequence[int]] | None = None) -> TokenCounter:
    """A counter for ``model``: exact for OpenAI models, or through ``tokenize`` (a server's tokenizer)."""
    if tokenize is not None:
        return TokenCounter(model, "server", True, tokenize)
    encoding = encoding_name_for(model)
    if encoding is None:
        return TokenCounter(model, DEFAULT_ENCODING, False)
    return TokenCounter(model, encoding, True)


def count_tokens(text: str, model: str = "gpt-4o-mini") -> int:
    """Tokens of ``text`` for ``model`` (exact for OpenAI models; an o200k estimate otherwise)."""
    return token_counter(model)(text)
