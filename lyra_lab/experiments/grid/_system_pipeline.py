"""External memory systems as pipelines of the grid: ``[grid] systems``.

An experiment file lists the memory systems lyra-lab does not build beside its
own pipelines::

    [grid]
    chunkers = [{ name = "turn_window", max_turns = 1 }]    # lyra-lab's pipelines, as always
    recallers = ["bm25"]
    systems = [{ name = "mem0", infer = false }, "mcp"]     # each a pipeline of its own

Each system spec (a registered name of ``lyra_lab.systems.SYSTEMS`` or a table
of its parameters) becomes one ``SystemPipeline`` per ``[grid] context_tokens``
value: the system, and how a context is rendered from its hits (the context
budget, ``[run] tokenizer``), as a lyra-lab pipeline renders its recall.  Its cells
are crossed with backends, embedders, seeds and conversations like every
pipeline's (a system that needs no backend or embedder builds none).  Its label
in rows is the system's (``mem0:raw``, ``mcp:server-memory``,
``served-http:turn_window+bm25``), with the parameters that tell two systems of
the same label apart and ``+ctx=B`` when the context budgets vary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from lyra_lab._registry import ConfigError, Registry
from lyra_lab.replay import flatten_params
from lyra_lab.systems import SYSTEMS, MemorySystem


@dataclass(frozen=True)
class SystemPipeline:
    """A memory system as a pipeline of the grid.

    Attributes:
        system: the memory system (a registered, frozen spec).
        context_budget: tokens of the context block rendered from its hits (what QA reads).
        tokenizer: the encoding budgets are counted in.
    """

    system: MemorySystem
    context_budget: int = 1000
    tokenizer: str = "o200k_base"

    def to_dict(self) -> dict[str, Any]:
        """The resolved spec: the system with all of its parameters, the context budget and the tokenizer."""
        return {"system": Registry.spec(self.system), "context_budget": self.context_budget,
                "tokenizer": self.tokenizer}

    def params(self) -> dict[str, Any]:
        """Flat columns for tidy rows: ``system``, ``system.<param>``, ``traces_turns``, ``pipeline.context_budget``."""
        return {"system": self.system.label(), **flatten_params("system", self.system),
                "traces_turns": bool(self.system.traces()), "pipeline.context_budget": self.context_budget}


def system_pipelines(specs: Sequence[Any], context_tokens: Sequence[Any], tokenizer: str) -> tuple[SystemPipeline, ...]:
    """The ``SystemPipeline`` of every system spec × context budget (``ConfigError`` naming a bad one)."""
    systems = []
    for i, spec in enumerate(specs):
        if not isinstance(spec, (str, Mapping)):
            raise ConfigError(f"[grid] systems[{i}] must be a system name or a table, got {type(spec).__name__}")
        try:
            systems.append(SYSTEMS.build(spec))
        except ConfigError as exc:
            raise ConfigError(f"in table [grid] systems: {exc}") from None
    for budget in context_tokens:
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise ConfigError(f"[grid] context_tokens must be positive integers (tokens), got {budget!r}")
    out = tuple(SystemPipeline(s, b, tokenizer) for s in systems for b in context_tokens)
    if len(set(out)) != len(out):
        raise ConfigError("[grid] lists the same system twice")
    return out


def system_labels(pipelines: Sequence[SystemPipeline]) -> dict[SystemPipeline, str]:
    """A row label per system pipeline.

    The system's label, the parameters that tell equal labels apart, and ``+ctx=B`` when context
    budgets vary.
    """
    specs = [Registry.spec(p.system) for p in pipelines]
    bases = [p.system.label() for p in pipelines]
    budgets = {p.context_budget for p in pipelines}
    out: dict[SystemPipeline, str] = {}
    for p, spec, base in zip(pipelines, specs, bases):
        same = [s for s, b in zip(specs, bases) if b == base and s != spec]
        differing = [k for k in spec if k != "name" and any(o.get(k) != spec[k] for o in same)]
        label = base + (f"[{','.join(f'{k}={_short(spec[k])}' for k in differing)}]" if differing else "")
        out[p] = label + (f"+ctx={p.context_budget}" if len(budgets) > 1 else "")
    return out


def _short(value: object) -> str:
    text = str(value)
    return text if len(text) <= 24 else text[:21] + "..."

