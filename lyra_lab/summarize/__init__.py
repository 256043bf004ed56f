"""Summarizers: chunks in, one summary out, with every backend call it made.

Prompts are data (``Prompts``; override any template by name), progress is a
stream of events to an optional callback, and failures fall back as each
strategy documents.  Build one by name::

    SUMMARIZERS.build({"name": "map_reduce", "max_concurrency": 3})
"""

from lyra_lab.summarize._common import BaseSummarizer, Run
from lyra_lab.summarize._events import STAGES, ProgressBar, emit, log_events
from lyra_lab.summarize._map_reduce import MapReduceSummarizer
from lyra_lab.summarize._prompts import DEFAULT_PROMPTS, Prompts
from lyra_lab.summarize._refine import RefineSummarizer
from lyra_lab.summarize._registry import SUMMARIZERS
from lyra_lab.summarize._single_pass import SinglePassSummarizer
from lyra_lab.summarize._types import ProgressCallback, ProgressEvent, Stage, Summarizer, Summary

__all__ = [
    "BaseSummarizer",
    "DEFAULT_PROMPTS",
    "STAGES",
    "SUMMARIZERS",
    "MapReduceSummarizer",
    "ProgressBar",
    "ProgressCallback",
    "ProgressEvent",
    "Prompts",
    "RefineSummarizer",
    "Run",
    "SinglePassSummarizer",
    "Stage",
    "Summarizer",
    "Summary",
    "emit",
    "log_events",
]
