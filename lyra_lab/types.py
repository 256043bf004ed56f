"""The shared vocabulary of lyra-lab, importable from one place.

Each name is defined in the package that owns it and re-exported here from that
package's face, so ``from lyra_lab.types import Turn, Hit, Backend`` is the same
object as ``from lyra_lab.corpus import Turn`` and so on:

- conversations (``lyra_lab.corpus``): ``Turn``, ``Session``, ``Conversation``,
  ``Corpus``, ``Probe``, ``Role``, and ``CorpusFormatError`` for a file that
  cannot be imported;
- memory (``lyra_lab.memory``): ``MemoryEntry`` (one raw turn, summary or digest
  held in a ``MemoryStore``);
- chunks and hits (``lyra_lab.chunking``, ``lyra_lab.recall``): ``Chunk``, ``Hit``;
- models (``lyra_lab.backends``): the ``Backend`` and ``Embedder`` protocols, the
  ``Message`` a backend is sent, the ``Completion`` it returns with its ``Usage``
  (tokens and cost, adding up with ``+``), and ``BackendError``;
- ``ConfigError``: a bad strategy, experiment or backend setting;
- ``Degradation``: one fallback a strategy took (what stood in, where, why), and
  ``DegradationTally``, their counts per ``degraded.<stage>.<kind>`` (``failed.<stage>.<recurs>`` for
  those whose failed call would fail again), adding up with ``+``.

>>> from lyra_lab.types import Turn
>>> from lyra_lab.corpus import Turn as CorpusTurn
>>> Turn is CorpusTurn
True
"""

from lyra_lab._degradation import Degradation, DegradationTally
from lyra_lab._registry import ConfigError
from lyra_lab.backends import Backend, BackendError, Completion, Embedder, Message, Usage
from lyra_lab.chunking import Chunk
from lyra_lab.corpus import Conversation, Corpus, CorpusFormatError, Probe, Role, Session, Turn
from lyra_lab.memory import MemoryEntry
from lyra_lab.recall import Hit

__all__ = [
    "Backend",
    "BackendError",
    "Chunk",
    "Completion",
    "ConfigError",
    "Conversation",
    "Corpus",
    "CorpusFormatError",
    "Degradation",
    "DegradationTally",
    "Embedder",
    "Hit",
    "MemoryEntry",
    "Message",
    "Probe",
    "Role",
    "Session",
    "Turn",
    "Usage",
]
