"""Conversation data model and importers."""

from lyra_lab.corpus._model import (
    ROLES,
    Conversation,
    Corpus,
    CorpusFormatError,
    Probe,
    Session,
    Turn,
    as_utc,
)

__all__ = ["ROLES", "Conversation", "Corpus", "CorpusFormatError", "Probe", "Session", "Turn", "as_utc"]
