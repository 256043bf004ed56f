"""The report's "Planted turns among the hits" section: do planted probes compete with the user's own turns?

Planted probes (``lyra-lab probes plant``) ask about facts stated in planted
sessions.  If a pipeline's top-k hits are mostly planted turns, the probes
measure how well it separates planted sessions from each other, not recall among
the user's own turns (planted text in another language than the history makes
this likely).  ``planted_section(run_dir, df)`` reads the run's corpus (which turns
are planted) and each probe's logged hits (``probe_detail`` events), and gives per
pipeline: the probes, the traced hits in their top k, the share of those that are
planted turns (a digest or chunk counts as planted when every turn it covers is;
``mixed`` when some are), the probes whose top k held nothing but planted turns,
beside the planted turns' share of the memory's turns (what a blind pick would give).
Hits that name no source turn (a memory system that keeps no ids) are counted apart.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from lyra_lab._terminal import COLUMNS, wrap_line
from lyra_lab._run_records import read_spec
from lyra_lab.reports._compare_report import markdown_table
from lyra_lab.runs import LoggedProbes, logged_probes, read_log, run_corpus
from lyra_lab.synthetic import planting_warnings

HEADER = ["pipeline", "probes", "hits traced", "planted share of hits", "mixed", "probes with only planted hits",
          "hits not traced"]
TITLE = "Planted turns among the hits"


@dataclass
class PlantedSection:
    """Notes, table cells and the language warnings (none: planted text is in each history's language)."""

    title: str
    notes: list[str]
    k: int
    header: list[str] = field(default_factory=lambda: list(HEADER))
    body: list[list[str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    table: pd.DataFrame | None = None

    def markdown(self) -> str:
        """The section in Markdown (``summary.md``)."""
        lines = [f"\n## {self.title}\n"] + [n + "\n" for n in self.notes]
        if self.body:
            lines += markdown_table(self.header, self.body)
        return "\n".join(lines) + "\n"


def _sources(hit: Any) -> list[str] | None:
    """The turn ids a logged hit comes from (None: it names none)."""
    if isinstance(hit, dict):
        ids = hit.get("turn_ids")
        if ids:
            return [str(t) for t in ids]
        entry = str(hit.get("id", ""))
    else:  # an old ``recall`` event's [entry_id, score]
        entry = str(hit[0]) if hit else ""
    return [entry[5:]] if entry.startswith("turn:") else None


def _k(run_dir: Path) -> int:
    try:
        ks = read_spec(run_dir / "spec.json").get("ks") or [10]
        return int(max(ks))
    except Exception:  # noqa: BLE001 - no readable spec: the usual largest k
        return 10


def planted_share(rows: pd.DataFrame, logged: LoggedProbes, planted: set[str], k: int) -> pd.DataFrame:
    """Per pipeline of ``rows``: probes, traced hits in the top ``k``, planted / mixed hits, all-planted probes."""
    out = []
    per_probe = rows[rows["probe_id"].astype(str) != ""][["pipeline", "cell_id", "probe_id"]].astype(str)
    for pipeline, part in per_probe.drop_duplicates().groupby("pipeline", sort=True):
        recaller = str(pipeline).partition("|")[2]
        tally: Counter[str] = Counter()
        for cell, probe in part[["cell_id", "probe_id"]].itertuples(index=False):
            key, _ = logged.source((cell, recaller, probe))
            detail = logged.details.get(key)
            hits = (detail.get("hits") or []) if detail is not None else logged.recalls.get(key)
            if hits is None:
                continue
            tally["probes"] += 1
            kinds = []
            for hit in list(hits)[:k]:
                sources = _sources(hit)
                if not sources:
                    tally["untraced"] += 1
                    continue
                inside = sum(s in planted for s in sources)
                kinds.append("planted" if inside == len(sources) else "mixed" if inside else "real")
            tally.update(kinds)
            tally["traced"] += len(kinds)
            tally["only_planted"] += bool(kinds) and all(kind == "planted" for kind in kinds)
        out.append({"pipeline": str(pipeline), "probes": tally["probes"], "traced": tally["traced"],
                    "planted": tally["planted"], "mixed": tally["mixed"], "only_planted": tally["only_planted"],
                    "untraced": tally["untraced"],
                    "planted_share": tally["planted"] / tally["traced"] if tally["traced"] else float("nan")})
    return pd.DataFrame(out)


def _cells(table: pd.DataFrame) -> list[list[str]]:
    body = []
    for _, r in table.iterrows():
        share = "—" if pd.isna(r["planted_share"]) else f"{r['planted_share']:.1%} ({r['planted']} of {r['traced']})"
        body.append([r["pipeline"], str(r["probes"]), str(r["traced"]), share, str(r["mixed"]),
                     f"{r['only_planted']} of {r['probes']}", str(r["untraced"])])
    return body


def run_planting_warnings(run_dir: Path) -> list[str]:
    """The language warnings of a run's corpus (``planting_warnings``), shown wherever the run's figures are.

    ``view``, ``run``, ``compare`` and ``export`` print them; empty when planted text is in each history's
    language, or when the corpus cannot be read.
    """
    corpus = run_corpus(Path(run_dir))
    return [] if corpus is None else planting_warnings(corpus)


def warning_lines(warnings: list[str], width: int = COLUMNS) -> list[str]:
    """Each warning as ``⚠ warning: …`` wrapped to ``width`` columns (continuation lines indented)."""
    return [line for w in warnings for line in wrap_line(f"⚠ warning: {w}", width)]


def planted_section(run_dir: Path, rows: pd.DataFrame) -> PlantedSection | None:
    """The section for a run whose corpus holds planted turns (None otherwise, or without the corpus)."""
    if not {"pipeline", "cell_id", "probe_id", "conversation_id"} <= set(rows.columns):
        return None
    corpus = run_corpus(run_dir)
    if corpus is None:
        return None
    convs = set(rows["conversation_id"].astype(str))
    turns = [t for c in corpus.conversations if c.id in convs for t in c.turns()]
    planted = {t.id for t in turns if t.meta.get("planted")}
    if not planted:
        return None
    k = _k(run_dir)
    log = run_dir / "log.jsonl"
    table = planted_share(rows, logged_probes(read_log(log)) if log.exists() else LoggedProbes(), planted, k)
    warnings = planting_warnings(corpus, convs)
    base = len(planted) / len(turns)
    notes = [f"Planted turns are {len(planted):,} of the {len(turns):,} turns of the conversations this run replayed "
             f"({base:.1%}): a pipeline picking turns blindly would find that share of planted turns among its hits. "
             f"Per pipeline, over its probes' top {k} hits: the share that are planted turns (n = the hits traced "
             "to source turns; a chunk or digest counts as planted when every turn it covers is, \"mixed\" when "
             "some are) and the probes whose top hits were all planted. A share far above the planted turns' own "
             "share means the probes compete mostly with other planted sessions, not with your own turns: their "
             "recall then says how well planted sessions are told apart, not how well a fact is found in your "
             "history."]
    notes += [f"Warning: {w}." for w in warnings]
    return PlantedSection(TITLE, notes, k, body=_cells(table), warnings=warnings, table=table)
