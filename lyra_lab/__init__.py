"""lyra-lab: a research harness for the long-term memory of chat assistants."""

from lyra_lab._degradation import Degradation, DegradationTally
from lyra_lab._params import Strategy, param
from lyra_lab._records import RecordError, Schema, from_record, record, to_record
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
    "Degradation",
    "DegradationTally",
    "Probe",
    "RecordError",
    "Registry",
    "Schema",
    "Session",
    "Strategy",
    "Turn",
    "__version__",
    "from_record",
    "load",
    "load_probes",
    "param",
    "record",
    "to_record",
]
