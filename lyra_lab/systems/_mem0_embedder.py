"""mem0's OpenAI embedder, adapted in place: query-aware searches and a replay's passages in batches.

mem0 embeds one text per request: ``add(infer=False)`` asks for each stored turn on its own, so
a 212-turn conversation made 212 requests to lyra-lab's endpoint.  ``embed_ahead`` sends a
flush's passages first through mem0's own ``embed_batch`` (one request per 100 texts, the same
texts mem0 would send, newlines made spaces as its ``embed`` does); the adds that follow take
their vectors from there.  Searches go out as model ``…:query`` so query-aware embedders (e5)
embed questions as queries, as lyra-lab's dense recaller does.
"""

from __future__ import annotations

from typing import Protocol, Sequence

from lyra_lab.systems._endpoint import QUERY_SUFFIX


class _EmbedderConfig(Protocol):
    model: str


class Mem0Embedder(Protocol):
    """mem0's OpenAI embedder (``mem0.embeddings.openai.OpenAIEmbedding``): a config, ``embed`` and ``embed_batch``."""

    config: _EmbedderConfig

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        """The vector of ``text``; ``memory_action`` is ``add``, ``search`` or ``update``."""
        ...

    def embed_batch(self, texts: list[str], memory_action: str = "add") -> list[list[float]]:
        """The vectors of ``texts``, in mem0's batches of at most 100 a request."""
        ...


#: passages embedded ahead, by the text mem0 sends (newlines made spaces)
Ahead = dict[str, list[float]]


def adapt(embedding_model: Mem0Embedder, ahead: Ahead) -> None:
    """Make mem0's embedder query-aware on searches and take an ``add``'s vector from ``ahead`` (in place)."""
    base = type(embedding_model)

    class Adapted(base):  # type: ignore[misc, valid-type]
        def embed(self, text: str, memory_action: str | None = None) -> list[float]:
            if memory_action == "add":
                vector = ahead.get(text.replace("\n", " "))
                if vector is not None:
                    return vector
            if memory_action != "search":
                return super().embed(text, memory_action)
            model = self.config.model
            self.config.model = model + QUERY_SUFFIX
            try:
                return super().embed(text, memory_action)
            finally:
                self.config.model = model

    embedding_model.__class__ = Adapted


def embed_ahead(embedding_model: Mem0Embedder, ahead: Ahead, texts: Sequence[str]) -> None:
    """Embed ``texts`` as passages in mem0's batches into ``ahead``, for the ``add`` calls that follow."""
    todo = [t for t in dict.fromkeys(text.replace("\n", " ") for text in texts) if t not in ahead]
    if todo:
        ahead.update(zip(todo, embedding_model.embed_batch(todo, "add")))
