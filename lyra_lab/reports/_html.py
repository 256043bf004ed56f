"""``report.html``: one self-contained file to share (tables, figures, a per-probe drill-down).

No external JS, CSS or images: figures are PNG data URIs and the drill-down is
plain ``<details>`` elements, so the file opens offline in any browser.

The drill-down joins three sources:

* the tidy rows: which cell and recaller made each pipeline's row, and the
  per-probe scores (``recall@k``, ``qa_f1``, ``judge`` = the judge's verdict);
* the run log (``log.jsonl``): ``recall`` events (hits as ``[entry_id, score]``),
  ``answer`` events (the answer text), ``summary_written`` (a 300-character
  preview of each summary the model wrote);
* the corpus named in ``spec.json`` (question, gold answer, evidence turns, and
  the text of raw-turn entries ``turn:<id>``).  Chunk and digest texts are not
  in the log; those hits show their id only.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from lyra_lab.reports._compare_report import PairedSection
from lyra_lab.reports._headline import Headline
from lyra_lab.reports._judge_report import JudgeSection
from lyra_lab.reports._planted_report import PlantedSection
from lyra_lab.reports._sections import TableSection
from lyra_lab.runs import LoggedProbes, logged_probes, run_corpus, turn_texts

MAX_PROBES = 300  # drill-down size cap: a LoCoMo grid would otherwise make a file of tens of MB
TEXT_CHARS = 400

_CSS = """
body{font-family:system-ui,sans-serif;margin:1em auto;max-width:1200px;padding:0 1em;color:#222}
h1{margin:.2em 0 .3em}
table{border-collapse:collapse;font-size:13px;margin:0}th,td{border:1px solid #ccc;padding:3px 6px;
text-align:left;vertical-align:top}th{background:#f3f3f3}img{max-width:100%;border:1px solid #eee}
.box{max-width:100%;max-height:70vh;overflow:auto;margin:.5em 0;border:1px solid #eee}
.box th{position:sticky;top:0;z-index:1}
.headline{font-size:15px;margin:.2em 0}.headline ol{margin:.2em 0;padding-left:1.6em}
.lead img{max-height:62vh;width:auto}.lead h3{display:none}
.warn{background:#fff4d6;border-left:4px solid #e0a800;padding:.4em .8em;margin:.4em 0}
details{margin:.3em 0}summary{cursor:pointer}.probe>summary{font-weight:600}
.pipe{margin-left:1.2em;border-left:3px solid #ddd;padding-left:.6em}.ev{background:#e6f4ea}
.muted{color:#777}code{font-size:12px}
pre{white-space:pre-wrap;font-size:12px;background:#fafafa;border:1px solid #eee;padding:.4em;max-height:24em;overflow:auto}
"""


@dataclass
class ProbeView:
    """What the drill-down shows for one probe."""

    conversation_id: str
    probe_id: str
    question: str = ""
    answer: str = ""
    evidence: list[tuple[str, str]] = field(default_factory=list)  # (turn id, text)
    pipelines: list[dict[str, Any]] = field(default_factory=list)


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _short(text: str, n: int = TEXT_CHARS) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _logged(run_dir: Path) -> LoggedProbes:
    """Every probe's logged events (``recall``, ``answer``, ``probe_detail``) and the summary previews."""
    from lyra_lab.runs import read_log

    path = run_dir / "log.jsonl"
    return logged_probes(read_log(path)) if path.exists() else LoggedProbes()


def probe_views(run_dir: Path, df: pd.DataFrame, max_probes: int = MAX_PROBES) -> list[ProbeView]:
    """One ``ProbeView`` per probe of the rows (at most ``max_probes``), in row order."""
    if "probe_id" not in df.columns or "cell_id" not in df.columns:
        return []
    rows = df[df["probe_id"].astype(str) != ""]
    corpus = run_corpus(run_dir)
    probes = {p.id: p for p in corpus.probes} if corpus is not None else {}
    turns = turn_texts(corpus)
    logged = _logged(run_dir)
    views = []
    order = rows[["conversation_id", "probe_id"]].astype(str).drop_duplicates()
    for conv_id, probe_id in order.head(max_probes).itertuples(index=False):
        probe = probes.get(probe_id)
        view = ProbeView(conv_id, probe_id)
        if probe is not None:
            view.question, view.answer = probe.question, probe.answer
            view.evidence = [(t, turns.get(t, "")) for t in probe.evidence]
        gold = {f"turn:{t}" for t, _ in view.evidence}
        mine = rows[(rows["probe_id"].astype(str) == probe_id) & (rows["conversation_id"].astype(str) == conv_id)]
        for (pipeline, cell), part in mine.groupby(["pipeline", "cell_id"], sort=True):
            recaller = str(pipeline).partition("|")[2]
            key, source = logged.source((str(cell), recaller, probe_id))  # an alias shows its source's events
            entries = []
            detail = logged.details.get(key)
            if detail is not None:  # kind, digest text and covered turns of every hit, and the context
                for h in detail.get("hits") or []:
                    entry_id, covered = str(h.get("id")), {f"turn:{t}" for t in h.get("turn_ids") or ()}
                    text = str(h.get("text") or logged.text(key[0], entry_id, turns, limit=None))
                    found = entry_id in gold or bool(covered & gold)
                    entries.append({"id": entry_id, "score": float(h.get("score") or 0.0), "text": text,
                                    "kind": str(h.get("kind") or ""), "evidence": found,
                                    "covers": len(covered) if covered else None})
            for entry_id, score in ([] if detail is not None else logged.recalls.get(key, [])):
                entry_id = str(entry_id)
                text = logged.text(key[0], entry_id, turns, limit=None)
                entries.append({"id": entry_id, "score": float(score), "text": text, "evidence": entry_id in gold,
                                "kind": "", "covers": None})
            scores = {str(m): float(v) for m, v in zip(part["metric"], part["value"])}
            view.pipelines.append({"pipeline": str(pipeline), "cell_id": str(cell), "hits": entries,
                                   "answer": logged.answers.get(key), "scores": scores,
                                   "context": None if detail is None else detail.get("context"),
                                   "same_as": f"{source.pipeline}|{recaller}" if source else None})
        views.append(view)
    return views


def _figure(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<h3>{_esc(path.stem)}</h3>\n<img alt="{_esc(path.stem)}" src="data:image/png;base64,{data}">'


def _table(header: list[str], body: list[list[str]]) -> str:
    """A table in a box of its own: a wide or long one scrolls inside it, never the page."""
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    rows = "".join("<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in cells) + "</tr>\n" for cells in body)
    return f'<div class="box"><table><thead><tr>{head}</tr></thead><tbody>\n{rows}</tbody></table></div>'


def _summary_tables(header: list[str], body: list[list[str]]) -> list[str]:
    """The summary's key columns and the compact measures (they fit 1,400 px), then every column, folded.

    The compact measures are the registry's (``shown.compact``), as in the table ``lyra-lab run`` prints;
    a column that names no measure (the pipeline, a backend, n_probes) is a key and always shown.
    """
    from lyra_lab.measures import Measure, shown_in

    compact = set(shown_in("compact"))

    def key(name: str) -> bool:
        try:
            return Measure.parse(name).info is None
        except ValueError:
            return True

    kept = [i for i, h in enumerate(header) if key(h) or h in compact]
    if len(kept) == len(header):
        return [_table(header, body)]
    return [_table([header[i] for i in kept], [[row[i] for i in kept] for row in body]),
            f"<details><summary>every column of the summary ({len(header)})</summary>{_table(header, body)}"
            "</details>"]


def _kind(hit: dict) -> str:
    """``summary (covers 12 turns)``; a raw turn is ``turn``; unknown (an old log) is empty."""
    return f"{hit['kind']} (covers {hit['covers']} turns)" if hit.get("covers") else str(hit.get("kind") or "")


def _verdict(scores: dict[str, float]) -> str:
    if "judge" not in scores:
        return "no judge"
    return "correct" if scores["judge"] >= 0.5 else "wrong"


def _probe(view: ProbeView) -> str:
    title = f"{view.probe_id} — {_short(view.question, 140) or '(question not in the corpus)'}"
    parts = [f'<details class="probe" id="probe-{_esc(view.probe_id)}"><summary>{_esc(title)}</summary>',
             (f"<p><b>Question:</b> {_esc(view.question)}<br><b>Gold answer:</b> {_esc(view.answer)}"
              f"<br><span class=muted>conversation {_esc(view.conversation_id)}</span></p>")]
    if view.evidence:
        items = "".join(f"<li><code>{_esc(t)}</code> {_esc(_short(text))}</li>" for t, text in view.evidence)
        parts.append(f"<p><b>Gold evidence:</b></p><ul>{items}</ul>")
    for p in view.pipelines:
        scores = ", ".join(f"{k}={v:.3g}" for k, v in sorted(p["scores"].items()) if "latency" not in k)
        parts.append(f'<details class="pipe"><summary>{_esc(p["pipeline"])} <span class=muted>'
                     f'{_esc(scores)}</span></summary>')
        if p.get("same_as"):
            parts.append(f'<p class=muted>same memory as {_esc(p["same_as"])} (an alias: run once, its rows '
                         "copied); what that pipeline recorded:</p>")
        if p["hits"]:
            rows = "".join(
                f'<tr class="{"ev" if h["evidence"] else ""}"><td>{i}</td><td><code>{_esc(h["id"])}</code>'
                f'{" ✓ evidence" if h["evidence"] else ""}</td><td>{_esc(_kind(h))}</td><td>{h["score"]:.4f}</td>'
                f'<td>{_esc(_short(h["text"])) or "<span class=muted>text not in the log</span>"}</td></tr>'
                for i, h in enumerate(p["hits"], start=1))
            parts.append("<table><thead><tr><th>#</th><th>entry</th><th>kind</th><th>score</th><th>text</th></tr>"
                         f"</thead><tbody>{rows}</tbody></table>")
        if p.get("context"):
            parts.append(f'<details class="ctx"><summary>rendered context</summary><pre>{_esc(p["context"])}</pre>'
                         "</details>")
        else:
            parts.append("<p class=muted>no recall event in the log for this probe</p>")
        answer = p["answer"]
        parts.append(f"<p><b>Answer:</b> {_esc(answer) if answer is not None else '<span class=muted>not asked</span>'}"
                     f" · <b>Judge:</b> {_esc(_verdict(p['scores']))}</p></details>")
    parts.append("</details>")
    return "\n".join(parts)


Table = tuple[list[str], list[list[str]]]  # header, rows of formatted cells


@dataclass(frozen=True)
class ReportPage:
    """What ``report.html`` shows, section by section.

    Attributes:
        title: the page's heading.
        notes, warnings: paragraphs under the heading (warnings first, marked).
        table: the summary table; ``category_table`` the per-category one (None: no categories).
        plots: the figures, in order.
        views: the probes' drill-down; ``n_probes`` how many the run asked (views may be fewer).
        paired, judges: the paired-comparison and judge sections, when the run has them.
        headline: the lines the page opens on (the lead metric's best pipelines), above the first figure.
        planted: the share of hits that are planted turns, when the run's corpus has planted probes.
        sections: more sections of notes and tables, after the judges (retrieval and answering apart,
            the distance to the ceilings).
    """

    title: str
    notes: list[str]
    warnings: list[str]
    table: Table
    category_table: Table | None
    plots: list[Path]
    views: list[ProbeView]
    n_probes: int
    paired: PairedSection | None = None
    judges: JudgeSection | None = None
    headline: Headline | None = None
    planted: PlantedSection | None = None
    sections: list[TableSection] = field(default_factory=list)


def render_html(page: ReportPage) -> str:
    """The whole page as one string.

    It opens on the headline (the lead metric's best pipelines, and how many warnings wait below) and the
    first figure; the summary table, then the warnings and definitions, then the other sections follow.
    """
    title, paired, judges, views = page.title, page.paired, page.judges, page.views
    body = [f"<h1>{_esc(title)}</h1>"]
    body += _opening(page)
    body += ["<h2 id=summary>Summary</h2>", *_summary_tables(*page.table)]
    body += _warnings_and_notes(page)
    if page.planted is not None:
        body += [f"<h2 id=planted>{_esc(page.planted.title)}</h2>"] + [
            f'<p class="warn">{_esc(n)}</p>' if n.startswith("Warning:") else f"<p>{_esc(n)}</p>"
            for n in page.planted.notes]
        if page.planted.body:
            body.append(_table(page.planted.header, page.planted.body))
    if paired is not None:
        body.append(f"<h2 id=paired>Paired comparisons{': ' + _esc(paired.metric) if paired.metric else ''}</h2>")
        body += [f"<p>{_esc(n)}</p>" for n in paired.notes]
        if paired.body:
            body.append(_table(paired.header, paired.body))
    for section in ([judges] if judges is not None else []) + page.sections:  # every figure under its section
        body.append(f"<h2 id={section.anchor}>{_esc(section.title)}</h2>")
        body += [f"<p>{_esc(n)}</p>" for n in section.notes]
        for caption, header, rows in section.tables:
            body += [f"<p>{_esc(caption)}</p>", _table(header, rows)]
        body += [_figure(f) for f in section.figures]
    if page.category_table is not None:
        body += ["<h2>By probe category</h2>", _table(*page.category_table)]
    body += ["<h2 id=figures>Figures</h2>"] + [_figure(p) for p in page.plots[1:]]
    body.append("<h2 id=probes>Probes</h2>")
    shown = f"{len(views)} of {page.n_probes}" if page.n_probes > len(views) else f"{len(views)}"
    body.append(f"<p>{shown} probes. Open a probe, then a pipeline, for its retrieved entries "
                "(green: a gold evidence turn), answer and judge verdict.</p>")
    body += [_probe(v) for v in views]
    return ("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            f"<meta name=viewport content='width=device-width'><title>{_esc(title)}</title>"
            f"<style>{_CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def _opening(page: ReportPage) -> list[str]:
    """The first screen: the headline, a pointer to the warnings below, and the first figure."""
    out = []
    if page.headline is not None:
        out.append(f'<div class="headline">{page.headline.html()}</div>')
    pointers = []
    if page.warnings:
        many = len(page.warnings) != 1
        pointers.append(f'<a href="#warnings">⚠ {len(page.warnings)} warning{"s" * many}</a> '
                        f"below: read {'them' if many else 'it'} before quoting a figure")
    if page.planted is not None and page.planted.warnings:
        pointers.append('<a href="#planted">planted text in another language than the history</a>')
    if pointers:
        out.append(f'<p class="warn">{" · ".join(pointers)}</p>')
    if page.plots:
        out.append(f'<div class="lead">{_figure(page.plots[0])}<p class="muted">{_esc(page.plots[0].stem)}; '
                   'all figures: <a href="#figures">Figures</a>, every probe: <a href="#probes">Probes</a></p></div>')
    return out


def _warnings_and_notes(page: ReportPage) -> list[str]:
    """Warnings (marked) and the definitions of the figures, below the summary table."""
    if not page.warnings and not page.notes:
        return []
    out = ["<h2 id=warnings>Warnings and definitions</h2>"]
    out += [f'<p class="warn"><b>Warning:</b> {_esc(w)}</p>' for w in page.warnings]
    out += [f"<p>{_esc(n)}</p>" for n in page.notes]
    return out
