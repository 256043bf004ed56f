"""The memory store that pipelines write and recallers read."""

from lyra_lab.memory._store import MemoryEntry, MemoryStore

__all__ = ["MemoryEntry", "MemoryStore"]
