"""lyra-lab: a research harness for the long-term memory of chat assistants."""

from lyra_lab._params import Strategy, param
from lyra_lab._registry import ConfigError, Registry
from lyra_lab.corpus import (
    FORMATS,
    Conversation,
    Corpus,
    CorpusFormatError,
    Probe,
    Session,
    Turn,
    load,
    load_probes,
)

__version__ = "0.1.0"

__all__ = [
    "FORMATS",
    "ConfigError",
    "Conversation",
    "Corpus",
    "CorpusFormatError",
    "Probe",
    "Registry",
    "Session",
    "Strategy",
    "Turn",
    "__version__",
    "load",
    "load_probes",
    "param",
]
