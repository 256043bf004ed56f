"""The chunker registry: names → chunker classes, so experiments can say ``{"name": "token_budget"}``."""

from lyra_lab._registry import Registry

CHUNKERS: Registry = Registry("chunker")
