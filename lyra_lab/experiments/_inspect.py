"""One probe across every pipeline of a run: what was retrieved, the context, the answer, the verdicts.

``inspect_probe(run_dir, probe_id)`` joins three records of a run folder:

* the tidy rows: which cells and recallers (pipelines) asked the probe, and their scores;
* the run log's ``probe_detail`` events (written per probe × recaller by the cell runner,
  from ``lyra_lab.runs.probe_record``): the ranked hits with score, entry kind, covered turns and a text
  snippet, the rendered context, the answer and each judge's verdict.  Runs made before
  those events existed fall back to the ``recall`` (entry ids and scores) and ``answer``
  events; their hits show text only for raw turns (from the corpus) and summaries
  (the log's 300-character previews), and the context is not known;
* the corpus named in ``spec.json``: the evidence turns' text (when the corpus still loads).

``lyra-lab show RUN_DIR PROBE_ID`` prints ``ProbeView.render()``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

import pandas as pd

from lyra_lab._records import iter_jsonl
from lyra_lab.corpus import Corpus, Probe
from lyra_lab.experiments._probe_ids import resolve_probe_id, run_results
from lyra_lab.runs import AliasOf, LoggedProbes, logged_aliases, logged_probes, run_corpus, turn_texts

#: ``lyra-lab show RUN PROBE`` fits its page in this many lines (``--full`` prints everything).
PAGE_LINES = 60


@dataclass(frozen=True)
class HitView:
    """One retrieved entry: rank (1-based), id, kind (turn, summary, digest…), score, text."""

    rank: int
    entry_id: str
    kind: str
    score: float
    text: str
    turn_ids: tuple[str, ...] = ()
    evidence: bool = False  # the entry is, or covers, a gold evidence turn


@dataclass(frozen=True)
class PipelineView:
    """What one pipeline (memory pipeline × recaller, in one cell) did with the probe."""

    pipeline: str
    cell_id: str
    recaller: str
    hits: tuple[HitView, ...]
    context: str | None  # None: not recorded (a run from before probe_detail events)
    context_tokens: float | None
    answer: str | None  # None: QA did not run for this probe
    verdicts: tuple[tuple[str, int, str], ...]  # (judge, 1/0, raw reply)
    scores: Mapping[str, float] = field(default_factory=dict)
    where: Mapping[str, Any] = field(default_factory=dict)  # backend, embedder, seed of the cell
    same_as: str | None = None  # an alias (the same memory, run once): the pipeline whose rows and events it copies


@dataclass(frozen=True)
class ProbeView:
    """A probe of a run, with every pipeline's view of it (``inspect_probe``)."""

    run_dir: Path
    probe_id: str
    conversation_id: str
    category: str
    question: str
    gold: str
    evidence: tuple[tuple[str, str], ...]  # (turn id, text or "")
    pipelines: tuple[PipelineView, ...]

    def hits_frame(self) -> pd.DataFrame:
        """One row per pipeline × retrieved entry, ranked."""
        cols = ["pipeline", "rank", "entry_id", "kind", "score", "evidence", "text"]
        return pd.DataFrame([{"pipeline": p.pipeline, "rank": h.rank, "entry_id": h.entry_id, "kind": h.kind,
                              "score": h.score, "evidence": h.evidence, "text": h.text}
                             for p in self.pipelines for h in p.hits], columns=cols)

    def to_frame(self) -> pd.DataFrame:
        """One row per pipeline: its answer, each judge's verdict (``judge:<name>``) and its scores."""
        records = []
        for p in self.pipelines:
            row: dict[str, Any] = {"pipeline": p.pipeline, "cell_id": p.cell_id, **p.where, "recaller": p.recaller,
                                   "hits": len(p.hits), "evidence_hits": sum(h.evidence for h in p.hits),
                                   "context_tokens": p.context_tokens, "answer": p.answer}
            row.update({f"judge:{name}": score for name, score, _ in p.verdicts})
            row.update(p.scores)
            records.append(row)
        return pd.DataFrame.from_records(records)

    def render(self, context_lines: int = 40) -> str:
        """The view as plain text (what ``lyra-lab show`` prints)."""
        out = [f"probe {self.probe_id}  (conversation {self.conversation_id}"
               + (f", category {self.category})" if self.category else ")"),
               f"question: {self.question}", f"gold:     {self.gold}", "evidence:"]
        out += [f"  {tid}  {_one_line(text) or '(text not available)'}" for tid, text in self.evidence] or ["  (none)"]
        for p in self.pipelines:
            where = ", ".join(f"{k} {v}" for k, v in p.where.items())
            out += ["", f"== {p.pipeline}  ({where + ', ' if where else ''}cell {p.cell_id})"]
            shown = {k: v for k, v in p.scores.items() if "latency" not in k and "cost" not in k}
            if shown:
                out.append("  scores: " + " ".join(f"{k}={v:.3g}" for k, v in sorted(shown.items())))
            if p.same_as:
                out.append(f"  same memory as {p.same_as} (an alias: run once, its rows copied); what that "
                           "pipeline recorded:")
            out.append(f"  retrieved ({len(p.hits)}):" if p.hits else "  retrieved: nothing recorded")
            for h in p.hits:
                mark = " *evidence*" if h.evidence else ""
                out.append(f"  {h.rank:>3}. {h.score:8.4f}  {h.kind:<8} {h.entry_id}{mark}")
                if h.text:
                    out.append(f"        {_one_line(h.text)[:160]}")
            if p.context is None:
                out.append("  context: not recorded in this run's log")
            else:
                lines = p.context.splitlines() or ["(empty)"]
                tokens = "" if p.context_tokens is None else f"{p.context_tokens:g} tokens, "
                out.append(f"  context ({tokens}{len(lines)} lines):")
                out += [f"    | {line}" for line in lines[:context_lines]]
                if len(lines) > context_lines:
                    out.append(f"    | … {len(lines) - context_lines} more lines")
            out.append(f"  answer: {p.answer}" if p.answer is not None else "  answer: (QA did not run)")
            for name, score, raw in p.verdicts:
                out.append(f"  judge {name}: {'correct' if score else 'wrong'}  (reply: {_one_line(raw)[:80]!r})")
        return "\n".join(out)

    def page(self, max_lines: int = PAGE_LINES) -> str:
        """The view in at most ``max_lines`` lines of at most 100 columns (what ``lyra-lab show`` prints).

        Per pipeline: where the first evidence hit ranks, the context's size, the top hit, the answer and
        the verdicts; the pipelines that do not fit are counted (``render()`` has everything).
        """
        from lyra_lab._terminal import COLUMNS, count

        def cut(text: str, room: int) -> str:  # an excerpt that fits, marked as one
            text = text.replace("\n", " ")
            return text if len(text) <= room else text[:max(room - 1, 0)] + "…"

        head = [cut(f"probe {self.probe_id}  (conversation {self.conversation_id}"
                    + (f", category {self.category})" if self.category else ")"), COLUMNS),
                cut(f"question: {_one_line(self.question)}", COLUMNS), cut(f"gold:     {_one_line(self.gold)}", COLUMNS)]
        evidence = [cut(f"evidence: {tid}  {_one_line(text) or '(text not available)'}", COLUMNS)
                    for tid, text in self.evidence]
        head += evidence[:3] + ([f"          … {len(evidence) - 3} more evidence turns"] if len(evidence) > 3 else [])
        blocks = [self._pipeline_lines(p, cut) for p in self.pipelines]
        head.append(f"{count(len(blocks), 'pipeline')} (hits, context and replies in full: --full; "
                    "some pipelines: --pipeline TEXT)")
        out, shown = list(head), 0
        for block in blocks:
            if len(out) + len(block) + 1 > max_lines:
                break
            out += block
            shown += 1
        if shown < len(blocks):
            out.append(f"… {count(len(blocks) - shown, 'more pipeline')} not shown here: --full, or --pipeline TEXT")
        return "\n".join(out)

    @staticmethod
    def _pipeline_lines(p: PipelineView, cut: Callable[[str, int], str]) -> list[str]:
        """One pipeline in a few lines: label, evidence rank and context, top hit, answer and verdicts."""
        from lyra_lab._terminal import COLUMNS

        first = next((h for h in p.hits if h.evidence), None)
        found = f"evidence at rank {first.rank} of {len(p.hits)}" if first else (
            f"no evidence in {len(p.hits)} hits" if p.hits else "no hits recorded")
        context = "" if p.context_tokens is None else f" · context {p.context_tokens:,.0f} tokens"
        where = ", ".join(f"{k} {v}" for k, v in p.where.items())
        lines = [cut(f"== {p.pipeline}" + (f"  ({where})" if where else ""), COLUMNS)]
        if p.same_as:
            lines.append(cut(f"   same memory as {p.same_as} (an alias: run once, its rows copied)", COLUMNS))
        lines.append(f"   {found}{context}")
        if p.hits:
            h = p.hits[0]
            lines.append(cut(f"   top: {h.score:.3f} {h.kind} {h.entry_id}{' *evidence*' if h.evidence else ''}"
                             f"  {_one_line(h.text)}", COLUMNS))
        verdicts = " · ".join(f"judge {name}: {'correct' if score else 'wrong'}" for name, score, _ in p.verdicts)
        if p.answer is not None:
            lines.append(cut(f"   answer: {_one_line(p.answer)}" + (f"  ({verdicts})" if verdicts else ""), COLUMNS))
        return lines


def inspect_probe(run_dir: str | Path, probe_id: str) -> ProbeView:
    """Everything a run recorded about one probe, per pipeline (see the module docstring).

    Raises:
        ConfigError: ``run_dir`` is not a run folder, or ``probe_id`` is neither one of its probes nor
            the unique suffix of one (the message suggests the closest id, or lists the ids it ends).
    """
    run_dir = Path(run_dir)
    df = run_results(run_dir)
    # the full id or a unique suffix of it (``planted-q001`` for ``<conversation>:planted-q001``)
    probe_id = resolve_probe_id({str(p) for p in df["probe_id"] if str(p)}, str(probe_id), str(run_dir))
    mine = df[df["probe_id"].astype(str) == probe_id]
    cells = set(mine["cell_id"].astype(str))
    aliases = _aliases(run_dir)  # an alias cell's events are its source's
    logged = _log(run_dir, probe_id, cells | {aliases[c].cell_id for c in cells if c in aliases})
    corpus = run_corpus(run_dir)
    probe = _probe(corpus, probe_id)
    turns = turn_texts(corpus)
    any_detail: dict[str, Any] = next(iter(logged.details.values()), {})
    evidence = tuple(probe.evidence) if probe is not None else tuple(any_detail.get("evidence") or ())
    gold_turns = set(evidence)
    pipelines = []
    for (pipeline, cell), part in mine.groupby(["pipeline", "cell_id"], sort=True):
        recaller = str(pipeline).partition("|")[2]
        key, source = logged.source((str(cell), recaller, probe_id))
        detail = logged.details.get(key)
        judge_col = part["judge"] if "judge" in part.columns else pd.Series([None] * len(part), index=part.index)
        is_judge = part["metric"] == "judge"
        scores = {str(m): float(v) for m, v in zip(part.loc[~is_judge, "metric"], part.loc[~is_judge, "value"])}
        if detail is not None:
            hits = tuple(_hit(i, _LoggedHit(h["id"], h.get("kind"), h["score"],
                                            h.get("text") or logged.text(key[0], str(h["id"]), turns),
                                            h.get("turn_ids") or ()), gold_turns)
                         for i, h in enumerate(detail.get("hits") or [], 1))
            raw = {j["judge"]: str(j.get("raw", "")) for j in detail.get("judges") or []}
            context, tokens, answer = detail.get("context"), detail.get("context_tokens"), detail.get("answer")
        else:
            hits = tuple(_hit(i, _LoggedHit(entry_id, None, score, logged.text(key[0], str(entry_id), turns), ()),
                              gold_turns) for i, (entry_id, score) in enumerate(logged.recalls.get(key, []), 1))
            raw, context, tokens, answer = {}, None, scores.get("context_tokens"), logged.answers.get(key)
        verdicts = tuple((str(name) if isinstance(name, str) and name else "judge", int(v), raw.get(name, ""))
                         for name, v in zip(judge_col[is_judge], part.loc[is_judge, "value"]))
        where = {c: part[c].iloc[0] for c in ("backend", "embedder", "seed") if c in part.columns}
        pipelines.append(PipelineView(str(pipeline), str(cell), recaller, hits, context, tokens, answer, verdicts,
                                      scores, {k: (int(v) if k == "seed" else str(v)) for k, v in where.items()},
                                      same_as=f"{source.pipeline}|{recaller}" if source else None))
    first = mine.iloc[0]
    return ProbeView(
        run_dir=run_dir, probe_id=probe_id, conversation_id=str(first["conversation_id"]),
        category=str(first["category"]),
        question=probe.question if probe is not None else str(any_detail.get("question", "")),
        gold=str(probe.answer) if probe is not None else str(any_detail.get("gold", "")),
        evidence=tuple((t, turns.get(t, "")) for t in evidence), pipelines=tuple(pipelines))


class _LoggedHit(NamedTuple):
    """A hit as the run log holds it: ``kind`` and ``turn_ids`` only in ``probe_detail`` events."""

    entry_id: str
    kind: str | None
    score: float
    text: str
    turn_ids: Sequence[str]


def _hit(rank: int, hit: _LoggedHit, gold: set[str]) -> HitView:
    entry_id = str(hit.entry_id)
    kind = hit.kind or entry_id.partition(":")[0] or "?"
    turn_ids = tuple(hit.turn_ids) or ((entry_id[5:],) if entry_id.startswith("turn:") else ())
    return HitView(rank, entry_id, kind, float(hit.score), str(hit.text), turn_ids, bool(gold & set(turn_ids)))


def _log(run_dir: Path, probe_id: str, cells: set[str]) -> LoggedProbes:
    """This probe's detail, recall and answer events and the cells' summary previews.

    Only lines that can matter are parsed (a LoCoMo grid's log holds hundreds of thousands of events).
    """
    path = run_dir / "log.jsonl"
    if not path.exists():
        return LoggedProbes()
    needles = [json.dumps(probe_id, ensure_ascii=False).encode("utf-8"), b'"summary_written"', b'"alias"']
    return logged_probes(_events(path, needles), cells, probe_id)


def _aliases(run_dir: Path) -> dict[str, AliasOf]:
    """The run's alias cells and their sources (only ``alias`` lines are parsed)."""
    path = run_dir / "log.jsonl"
    return logged_aliases(_events(path, [b'"alias"'])) if path.exists() else {}


def _events(path: Path, needles: Sequence[bytes]) -> Iterable[dict[str, Any]]:
    """The log's events whose raw line contains one of ``needles`` (a line cut short by a kill is skipped)."""
    return iter_jsonl(path, keep=lambda raw: any(n in raw for n in needles))


def _probe(corpus: Corpus | None, probe_id: str) -> Probe | None:
    if corpus is None:
        return None
    return next((p for p in corpus.probes if p.id == probe_id), None)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())
