"""The summarizer registry: names → summarizer classes (``{"name": "map_reduce", ...}``)."""

from lyra_lab._registry import Registry

SUMMARIZERS: Registry = Registry("summarizer")
