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
from lyra_lab.corpus._load import FORMATS, load
from lyra_lab.corpus._plant import plant_probes, planted_counts
from lyra_lab.corpus._probes import load_probes
from lyra_lab.corpus._synthetic_corpus import generate_synthetic

__all__ = [
    "FORMATS",
    "ROLES",
    "Conversation",
    "Corpus",
    "CorpusFormatError",
    "Probe",
    "Session",
    "Turn",
    "as_utc",
    "generate_synthetic",
    "load",
    "load_probes",
    "plant_probes",
    "planted_counts",
]
