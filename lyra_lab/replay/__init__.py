"""The replay engine: conversations fed through a memory pipeline on a virtual clock.

``PipelineMemory`` builds the same memory live, one turn at a time (for serving a pipeline).
"""

from lyra_lab.replay._engine import ReplayResult, replay
from lyra_lab.replay._live import PipelineMemory
from lyra_lab.replay._meter import MeteredEmbedder, PhaseMeter
from lyra_lab.replay._pipeline import Pipeline, Registries, flatten_params, strategy_spec
from lyra_lab.replay._plan import Step, clock_order, plan
from lyra_lab.replay._triggers import TRIGGERS, EveryTurns, IdleGap, SessionEnd, Trigger
from lyra_lab.replay._types import PhaseCost, ProbeOutcome

__all__ = [
    "EveryTurns",
    "IdleGap",
    "MeteredEmbedder",
    "PhaseCost",
    "PhaseMeter",
    "Pipeline",
    "PipelineMemory",
    "ProbeOutcome",
    "Registries",
    "ReplayResult",
    "SessionEnd",
    "Step",
    "TRIGGERS",
    "Trigger",
    "clock_order",
    "flatten_params",
    "plan",
    "replay",
    "strategy_spec",
]
