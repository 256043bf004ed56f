"""The one conversation data model (turns, sessions, conversations, probes) and its importers.

``load(path)`` sniffs and imports any supported format (``FORMATS``: ChatGPT and
Claude exports, LoCoMo, LongMemEval, generic JSONL, a Lyra SQLite memory DB,
lyra-lab's own JSONL) into a ``Corpus``; a bad file raises ``CorpusFormatError``
naming the file, the place and the problem.  ``load_probes`` attaches a probe
file to a corpus.  Synthetic corpora and planted probes are ``lyra_lab.synthetic``.
"""

from lyra_lab.corpus._model import (
    ROLES,
    Conversation,
    Corpus,
    CorpusFormatError,
    Probe,
    Role,
    Session,
    Turn,
    as_utc,
)
from lyra_lab.corpus._load import FORMATS, load
from lyra_lab.corpus._probes import load_probes

__all__ = [
    "FORMATS",
    "ROLES",
    "Conversation",
    "Corpus",
    "CorpusFormatError",
    "Probe",
    "Role",
    "Session",
    "Turn",
    "as_utc",
    "load",
    "load_probes",
]
