"""Every place a run's conversation text can reach, asked of its cells (``CellKind.needs``), for the plan and consent.

A cell's text reaches its backends and embedders (the cell's own, the answering model, the
judges; a memory system's, through lyra-lab's endpoint), the services a system names (an
``http`` system's URL) and the processes a system starts (an MCP server's command line, a
``serve-memory`` process and the presets it builds).  ``destinations`` lists them, each
with where the text goes and whether that is this machine; consent asks before text goes
anywhere that is not (``Destination.local`` false).  Nothing here opens a connection or
starts anything: backends and embedders are described by their clients' declared endpoints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

from lyra_lab.backends import BackendSpec, EmbedderSpec
from lyra_lab.experiments.cells import Cell, CellSetup
from lyra_lab.experiments.grid import Injected, spec_label
from lyra_lab.experiments.forecast._dry_run import backend_facts

Role = Literal["backend", "embedder", "service", "process"]


@dataclass(frozen=True)
class Destination:
    """One place conversation text can reach.

    Attributes:
        role: ``backend``, ``embedder``, ``service`` (a system's URL) or ``process`` (a command it starts).
        label: the backend's or embedder's label, the service's URL, the process's command line.
        where: the endpoint that receives the text (a URL without credentials), or ``this process`` /
            ``a process on this machine``.
        local: ``where`` is this machine.
    """

    role: Role
    label: str
    where: str
    local: bool

    def describe(self) -> str:
        """``backend openai/gpt-4o-mini → https://api.openai.com/v1``."""
        return f"{self.role} {self.label}" + ("" if self.where == self.label else f" → {self.where}")


def destinations(cells: Sequence[Cell], setup: CellSetup, injected: Injected | None = None) -> tuple[Destination, ...]:
    """Every place the text of ``cells`` can reach (each once, in the order first met)."""
    from lyra_lab.probes import is_local_endpoint

    injected = injected or Injected()
    out: dict[tuple[str, str], Destination] = {}
    for cell in cells:
        needs = cell.kind.needs(cell, setup)
        found = [*(_backend(b, injected) for b in needs.backends), *(_embedder(e, injected) for e in needs.embedders),
                 *(Destination("service", url, url, is_local_endpoint(url)) for url in needs.urls),
                 *(Destination("process", cmd, "a process on this machine", True) for cmd in needs.processes)]
        for d in found:
            if d is not None:
                out.setdefault((d.role, d.label), d)
    return tuple(out.values())


def _backend(spec: BackendSpec, injected: Injected) -> Destination:
    facts = backend_facts(spec, injected)
    return Destination("backend", facts.label, facts.endpoint or "this process", facts.local)


def _embedder(spec: EmbedderSpec, injected: Injected) -> Destination | None:
    from lyra_lab.backends import make_embedder
    from lyra_lab.probes import is_local_endpoint

    if spec in (None, "none"):
        return None
    label = spec_label(spec)
    given = injected.embedders.get(label)
    # a named embedder other than OpenAI's endpoint runs in this process: no model is loaded to say so
    if given is None and isinstance(spec, str) and spec.partition("/")[0] != "openai":
        return Destination("embedder", label, "this process", True)
    url = dict((given or make_embedder(spec)).identity()).get("base_url")
    where = url if isinstance(url, str) else None
    return Destination("embedder", label, where or "this process", is_local_endpoint(where))
