"""The ``probe_detail`` run-log event read back: per probe × recaller, what the inspector and the HTML report show.

Written by the cell runner for every probe and recaller (``lyra_lab.experiments``): the ranked hits
(id, kind, score; for entries other than raw turns also the covered turn ids and a text snippet — a
raw turn's text is in the corpus and the context), the rendered context, the answer and each judge's
verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, NamedTuple

from lyra_lab._run_records import read_spec

DETAIL_EVENT = "probe_detail"
TEXT_CHARS = 300  # per-hit text snippet stored in the log
MAX_TURN_IDS = 50  # covered turn ids stored per hit (a month digest may cover hundreds)


def snip(text: str, n: int = TEXT_CHARS) -> str:
    """``text`` cut to ``n`` characters (an ellipsis marks the cut)."""
    return text if len(text) <= n else text[: n - 1] + "…"


class AliasOf(NamedTuple):
    """The cell an alias cell's rows were copied from (the same memory, run once) and its memory pipeline."""

    cell_id: str
    pipeline: str


def logged_aliases(events: Iterable[dict[str, Any]]) -> dict[str, AliasOf]:
    """``alias cell id -> AliasOf`` from a run log's ``alias`` events."""
    return {str(e["cell_id"]): AliasOf(str(e["same_as"]), str(e.get("same_as_pipeline") or ""))
            for e in events if e.get("event") == "alias" and e.get("cell_id") and e.get("same_as")}


@dataclass
class LoggedProbes:
    """A run log's per-probe events, by ``(cell, recaller, probe)``; summary previews by ``(cell, entry id)``
    (one summary id names different texts in different pipelines); ``aliases``: alias cell -> its source."""

    details: dict[tuple[str, str, str], dict] = field(default_factory=dict)
    recalls: dict[tuple[str, str, str], list] = field(default_factory=dict)
    answers: dict[tuple[str, str, str], str] = field(default_factory=dict)
    previews: dict[tuple[str, str], str] = field(default_factory=dict)
    aliases: dict[str, AliasOf] = field(default_factory=dict)

    def source(self, key: tuple[str, str, str]) -> tuple[tuple[str, str, str], AliasOf | None]:
        """The key whose events describe ``key``: its own, or its alias source's (with the source)."""
        alias = self.aliases.get(key[0])
        if alias is None or key in self.details or key in self.recalls:
            return key, None
        return (alias.cell_id, key[1], key[2]), alias

    def text(self, cell: str, entry_id: str, turns: Mapping[str, str], limit: int | None = TEXT_CHARS) -> str:
        """What the log and corpus know of an entry's text: a raw turn's from the corpus (cut at
        ``limit`` characters; None keeps it whole), a summary's from its ``summary_written`` preview."""
        if entry_id.startswith("turn:"):
            text = turns.get(entry_id[5:], "")
            return text if limit is None else snip(text, limit)
        return self.previews.get((cell, entry_id), "")


def logged_probes(events: Iterable[dict[str, Any]], cells: set[str] | None = None,
                  probe_id: str | None = None) -> LoggedProbes:
    """Collect ``probe_detail``, ``recall``, ``answer`` and ``summary_written`` events, of ``cells`` and
    ``probe_id`` only when given."""
    out = LoggedProbes()
    for e in events:
        kind, cell = e.get("event"), str(e.get("cell_id", ""))
        if kind == "alias":
            out.aliases.update(logged_aliases([e]))
            continue
        if cells is not None and cell not in cells:
            continue
        if kind == "summary_written":
            ids = [i for i in e.get("entries") or [] if str(i).startswith("summary:")]
            out.previews.update({(cell, str(i)): str(t) for i, t in zip(ids, e.get("summary") or [])})
            continue
        probe = str(e.get("probe_id", ""))
        if probe_id is not None and probe != probe_id:
            continue
        key = (cell, str(e.get("recaller", "")), probe)
        if kind == DETAIL_EVENT:
            out.details[key] = e
        elif kind == "recall":
            out.recalls[key] = e.get("hits") or []
        elif kind == "answer":
            out.answers[key] = str(e.get("text", ""))
    return out


def run_corpus(run_dir: Path) -> Any:
    """The run's corpus (from ``spec.json``), or None when it cannot be read (moved or changed since)."""
    try:
        spec = read_spec(run_dir / "spec.json")["corpus"]
        from lyra_lab.corpus import load

        return load(spec["path"], spec.get("format") or "auto", probes=spec.get("probes"))
    except (OSError, KeyError, TypeError, ValueError):
        return None


def turn_texts(corpus: Any) -> dict[str, str]:
    """``turn id -> "speaker: text"`` of a corpus (empty without one)."""
    if corpus is None:
        return {}
    return {t.id: f"{t.speaker or t.role}: {t.text}" for t in corpus.turns()}
