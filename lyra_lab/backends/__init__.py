"""LLM and embedding backends: every call leaves a record of latency, tokens and cost."""

from lyra_lab.backends._fakes import FakeLLM, HashingEmbedder
from lyra_lab.backends._tokens import TokenCounter, count_tokens, encoding_name_for, token_counter
from lyra_lab.backends._types import Backend, BackendError, Completion, Embedder, Message, Usage

__all__ = [
    "Backend",
    "BackendError",
    "Completion",
    "Embedder",
    "FakeLLM",
    "HashingEmbedder",
    "Message",
    "TokenCounter",
    "Usage",
    "count_tokens",
    "encoding_name_for",
    "token_counter",
]
