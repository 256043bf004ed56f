"""Short readable pipeline labels, e.g. ``token_budget+map_reduce+none|dense``.

A strategy is labelled by its registered name; when a grid holds several
strategies of the same name, the label adds the parameters that tell them
apart (``hybrid[method=weighted]``).  Pipeline settings that vary across the
grid (trigger, budgets, keep_raw) are appended too; those that do not vary are
left out to keep labels short (they are in the ``<kind>.<param>`` columns).
A backend or embedder spec is labelled by ``spec_label`` (``openai/gpt-4o-mini``).
"""

from __future__ import annotations

from typing import Any, Sequence

from lyra_lab.backends import BackendSpec, EmbedderSpec
from lyra_lab.replay import Pipeline, strategy_spec


def distinct_labels(strategies: Sequence[Any]) -> list[str]:
    """One label per strategy: its name, plus differing parameters where names collide."""
    specs = [strategy_spec(s) if s is not None else {"name": "none"} for s in strategies]
    labels = []
    for spec in specs:
        same = [o for o in specs if o["name"] == spec["name"]]
        if len(same) == 1:
            labels.append(spec["name"])
            continue
        differing = [k for k in spec if k != "name" and any(o.get(k) != spec[k] for o in same)]
        params = ",".join(f"{k}={_short(spec[k])}" for k in differing)
        labels.append(f"{spec['name']}[{params}]" if params else spec["name"])
    return labels


def pipeline_labels(pipelines: Sequence[Pipeline]) -> dict[Pipeline, str]:
    """Memory-pipeline label for each pipeline of a grid (without the recaller part)."""
    parts: dict[str, list[str]] = {}
    for kind in ("chunker", "summarizer", "rollup", "trigger"):
        parts[kind] = distinct_labels([getattr(p, kind) for p in pipelines])
    out: dict[Pipeline, str] = {}
    for i, p in enumerate(pipelines):
        label = "+".join(parts[kind][i] for kind in ("chunker", "summarizer", "rollup"))
        if len(set(parts["trigger"])) > 1:
            label += f"+{parts['trigger'][i]}"
        for attr, short in (("budget", "budget"), ("context_budget", "ctx"), ("keep_raw", "raw")):
            if len({getattr(q, attr) for q in pipelines}) > 1:
                label += f"+{short}={_short(getattr(p, attr))}"
        out[p] = label
    return out


def _short(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = str(value)
    return text if len(text) <= 24 else text[:21] + "..."


def spec_label(spec: BackendSpec | EmbedderSpec) -> str:
    """A short name for a backend or embedder spec (a string, or a table's ``name``/``preset`` and ``model``)."""
    if isinstance(spec, str):
        return spec
    name = str(spec.get("name") or spec.get("preset") or "custom")
    return f"{name}/{spec['model']}" if spec.get("model") and "/" not in name else name
