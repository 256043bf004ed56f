"""The replay engine: conversations fed through a memory pipeline on a virtual clock.

``replay_iter`` yields each probe's outcomes (``ProbeOutcome``: every recaller's hits, context
and deeper ranking) while the memory is as the probe found it; ``replay`` runs to the end.

``PipelineMemory`` builds the same memory live, one turn at a time (for serving a pipeline), as its
``LiveSetup`` says.
"""

from lyra_lab._moved import moved_names
from lyra_lab.replay._ask import ContextRoom, MemoryTally
from lyra_lab.replay._engine import EventLog, ReplayResult, ReplayRun, ReplaySetup, by_name, replay, replay_iter
from lyra_lab.replay._ranking import DeepRanking
from lyra_lab.replay._live import LiveSetup, PipelineMemory
from lyra_lab.replay._meter import MeteredEmbedder, PhaseMeter
from lyra_lab.replay._pipeline import Pipeline, Registries, flatten_params, strategy_spec
from lyra_lab.replay._plan import Step, clock_order, plan
from lyra_lab.replay._triggers import TRIGGERS, EveryTurns, IdleGap, SessionEnd, Trigger
from lyra_lab.replay._types import MemoryState, PhaseCost, ProbeOutcome

__all__ = [
    "ContextRoom",
    "DeepRanking",
    "EventLog",
    "EveryTurns",
    "IdleGap",
    "LiveSetup",
    "MemoryState",
    "MemoryTally",
    "MeteredEmbedder",
    "PhaseCost",
    "PhaseMeter",
    "Pipeline",
    "PipelineMemory",
    "ProbeOutcome",
    "Registries",
    "ReplayResult",
    "ReplayRun",
    "ReplaySetup",
    "SessionEnd",
    "Step",
    "TRIGGERS",
    "by_name",
    "Trigger",
    "clock_order",
    "flatten_params",
    "plan",
    "replay",
    "replay_iter",
    "strategy_spec",
]

# names that moved away keep importing from here for one release, with a DeprecationWarning (lyra_lab._moved)
__getattr__ = moved_names(__name__)
