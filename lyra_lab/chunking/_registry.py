"""The chunker registry: names → chunker classes, so experiments can say ``{"name": "token_budget"}``."""

from lyra_lab._registry import Registry
from lyra_lab.chunking._types import Chunker

CHUNKERS: Registry[Chunker] = Registry("chunker")
