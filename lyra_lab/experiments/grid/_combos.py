"""Grid combinations checked at spec time: impossible ones fail, identical ones are noted.

* **Impossible**: a ``tiered`` recaller reads turns and condensed entries
  (``coarse_kinds``: gist, digest, summary, fact), never ``chunk`` entries.  A
  pipeline without a summarizer, without raw turns (``keep_raw = false``) and
  without a rollup holds only chunks, so tiered would score 0 with an empty
  context and no warning: ``ConfigError`` names the combination and the fixes.
  (A pipeline with a rollup may get digests, so it is not provably empty.)
* **Aliases**: pipelines whose resolved specs differ only in parameters the
  code provably never reads build the same memory.  Only the first of each
  group is run; the runner writes each alias's rows by copying its source
  cell's rows with the alias's identifiers (``cells.alias_rows``), so every table
  still lists every pipeline (the grid stays the product its file describes).
  They are recorded in ``spec.json`` under ``aliases`` and noted in the
  report, so identical rows are not read as a finding.  Provably unused:

  - ``budget`` when ``rollup`` is none (only a rollup reads it);
  - the chunker under ``single_pass`` when both chunkers are built in: every
    built-in chunker splits the one canonical transcript and ``joined_text``
    restores it exactly, so the single call gets the same prompt; the chunker
    only labels the summary's ``decision`` meta, which nothing reads.
    (``map_reduce`` and no summarizer do depend on the chunker.)
* **Needs**: a recaller (``needs_embedder()``) or a memory system (``needs().embedder``) that
  embeds cannot run at the grid's ``"none"`` embedder: ``check_needs`` names the key at spec time,
  so ``plan`` and ``run`` both stop in one line before anything runs.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Sequence

from lyra_lab._registry import ConfigError
from lyra_lab.backends import EmbedderSpec
from lyra_lab.memory import EntryKind
from lyra_lab.replay import Pipeline, strategy_spec

if TYPE_CHECKING:
    from lyra_lab.experiments.grid._system_pipeline import SystemPipeline

_BUDGET_WHY = "budget is only read by a rollup, and rollup is none"
_CHUNKER_WHY = ("single_pass summarizes the joined transcript, which every built-in chunker restores "
                "exactly; the chunker only labels the summary's decision")


def check_recallers(pipelines: Sequence[Pipeline], recallers: Sequence[tuple[str, object]]) -> None:
    """Raise ``ConfigError`` for a recaller that can never read a pipeline's memory."""
    for label, recaller in recallers:
        spec = strategy_spec(recaller)
        if spec["name"] != "tiered" or EntryKind.CHUNK in tuple(spec.get("coarse_kinds") or ()):
            continue
        for p in pipelines:
            if p.summarizer is None and not p.keep_raw and p.rollup is None:
                names = p.kind_names()
                raise ConfigError(
                    f"[grid] recaller {label!r} with chunker {names['chunker']!r}, summarizers = [\"none\"], "
                    "keep_raw = false and rollups = [\"none\"]: memory holds only chunk entries, which tiered "
                    "never reads (it recalls turns and summary/digest/gist/fact entries), so it would score 0. "
                    "Fix: add a summarizer, set keep_raw = true, or give tiered coarse_kinds including \"chunk\".")


def check_needs(recallers: Sequence[tuple[str, object]], systems: Sequence[SystemPipeline],
                embedders: Sequence[EmbedderSpec]) -> None:
    """Raise ``ConfigError`` for a recaller or system that needs an embedder when ``embedders`` has ``"none"``.

    Each strategy says what it needs (``BaseRecaller.needs_embedder``, ``MemorySystem.needs``); this
    asks them, never their names.
    """
    if not any(e in (None, "none") for e in embedders):
        return
    from lyra_lab.systems import PipelineRecaller

    needing = [f"recaller {label!r}" for label, recaller in recallers
               if isinstance(recaller, PipelineRecaller) and recaller.needs_embedder()]
    needing += [f"system {s.system.label()!r}" for s in systems if s.system.needs().embedder]
    if needing:
        raise ConfigError(f"[run] embedders: \"none\" gives no embedder, but [grid] {', '.join(needing)} "
                          "needs one: name an embedder there instead of \"none\", or leave that strategy out")


def _effective(p: Pipeline) -> dict[str, Any]:
    d = p.to_dict()
    if p.rollup is None:
        d.pop("budget")
    if p.kind_names()["summarizer"] == "single_pass" and type(p.chunker).__module__.startswith("lyra_lab.chunking"):
        d.pop("chunker")
    return d


def find_aliases(pipelines: Sequence[Pipeline], labels: dict[Pipeline, str]) -> tuple[dict[str, Any], ...]:
    """``{"pipeline", "same_as", "because"}`` for each pipeline that builds the memory of an earlier one."""
    first: dict[str, Pipeline] = {}
    out = []
    for p in pipelines:
        key = json.dumps(_effective(p), sort_keys=True, default=str)
        if key not in first:
            first[key] = p
            continue
        same = first[key]
        a, b = p.to_dict(), same.to_dict()
        because = []
        if a["budget"] != b["budget"]:
            because.append(_BUDGET_WHY)
        if a["chunker"] != b["chunker"]:
            because.append(_CHUNKER_WHY)
        out.append({"pipeline": labels[p], "same_as": labels[same], "because": because})
    return tuple(out)
