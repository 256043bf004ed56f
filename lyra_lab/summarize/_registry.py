"""The summarizer registry: names → summarizer classes (``{"name": "map_reduce", ...}``)."""

from lyra_lab._registry import Registry
from lyra_lab.summarize._types import Summarizer

SUMMARIZERS: Registry[Summarizer] = Registry("summarizer")
