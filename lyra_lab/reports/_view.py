"""``write_index(runs_dir)``: one page over a folder of runs — what each ran, how far it got, what it found.

For every run folder directly inside ``runs_dir`` (a folder with a ``spec.json``, ``rows/`` or
``results.parquet``), the last run first: its spec in a line (corpus and selection, pipelines ×
recallers and the memory systems beside them, backends, embedders, seeds), its status (``lyra_lab.runs.run_status``: finished,
partial or failed cells) with a ``⚠ degraded`` line when pipelines fell back or lost calls (the
report's mark, also on those pipelines in the headline), the headline metric's best three
pipelines with their 95% CI and n, and links to its ``report.html``, the report's per-probe
drill-down and its figures.  The page is static (``index.html``, no script, relative links), so it opens offline from disk; a run
without a report is summarized from its rows and says how to write one.  A folder that cannot
be read is listed with the reason, never left out.
"""

from __future__ import annotations

import html
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from lyra_lab._terminal import count
from lyra_lab.reports._planted_report import run_planting_warnings
from lyra_lab.reports._degraded import MARK, DegradedPipeline, degraded_pipelines, warning
from lyra_lab.reports._headline import Headline, HeadlineRow, headline, summary_headline
from lyra_lab.runs import RunStatus, load_results, run_status
from lyra_lab.stats import aggregate, group_columns

_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1300px;padding:0 1em;color:#222}
table{border-collapse:collapse;font-size:13px;width:100%}th,td{border:1px solid #ccc;padding:4px 6px;
text-align:left;vertical-align:top}th{background:#f3f3f3}.state{font-weight:600;padding:1px 6px;border-radius:3px}
.finished{background:#e6f4ea}.partial,.degraded{background:#fff4d6}.failed{background:#fde2e1}.empty,.unreadable{background:#eee}
.muted{color:#777}code{font-size:12px}img{width:260px;border:1px solid #eee;margin:2px}ol{margin:0;padding-left:1.2em}
"""


@dataclass
class RunEntry:
    """What the page shows of one run folder."""

    name: str
    path: Path
    status: RunStatus | None = None
    spec: dict[str, Any] = field(default_factory=dict)
    headline: Headline | None = None  # the lead metric's best pipelines (``reports._headline``)
    degraded: dict[str, DegradedPipeline] = field(default_factory=dict)  # pipelines that fell back or lost calls
    planted_warnings: list[str] = field(default_factory=list)  # planted text in another language than the history
    figures: list[Path] = field(default_factory=list)
    report: Path | None = None
    error: str | None = None
    modified: float = 0.0


def is_run(folder: Path) -> bool:
    """A folder a run wrote into (it has a spec.json, rows/ or results.parquet)."""
    return folder.is_dir() and any((folder / n).exists() for n in ("spec.json", "rows", "results.parquet"))


def _spec(folder: Path) -> dict[str, Any]:
    from lyra_lab._run_records import read_spec

    path = folder / "spec.json"
    return read_spec(path) if path.exists() else {}


def _headline(folder: Path, df: pd.DataFrame, degraded: dict[str, DegradedPipeline]) -> Headline | None:
    """The run's headline (``reports._headline``): from report/summary.csv when it is current, else from ``df``.

    ``df`` is the run's rows (``load_results``), read once by the caller; without a current report they are
    summarized as the report's table is (``aggregate`` of the lead metric by what varies).
    """
    from lyra_lab.reports._contenders import ceiling_pipelines
    from lyra_lab.reports._summary import headline_metric

    summary = folder / "report" / "summary.csv"
    rows = list((folder / "rows").glob("*.jsonl"))
    newest = max((p.stat().st_mtime for p in rows), default=0.0)
    if summary.exists() and summary.stat().st_mtime >= newest:
        return summary_headline(pd.read_csv(summary), degraded, ceiling_pipelines(df))
    metric = headline_metric(sorted(df["metric"].unique()))
    if metric is None:
        return None
    keys = [c for c in group_columns(df) if c == "pipeline" or df[c].nunique(dropna=False) > 1]
    agg = aggregate(df[df["metric"] == metric], by=keys, n_resamples=500)
    table = agg.rename(columns={"mean": metric, "ci_low": f"{metric}_ci_low", "ci_high": f"{metric}_ci_high",
                                "n": f"{metric}_n"})
    return headline(table, metric, keys, degraded, ceiling_pipelines(df))


def run_entry(folder: Path) -> RunEntry:
    """Everything the page shows of ``folder``; an unreadable folder gets its reason in ``error``."""
    entry = RunEntry(folder.name, folder)
    try:
        entry.modified = last_ran(folder)
        entry.spec = _spec(folder)
        entry.status = run_status(folder)
        if entry.status.finished:
            rows = load_results(folder, write=False)  # read once: the headline and the degradation both need it
            entry.degraded = degraded_pipelines(rows)
            entry.headline = _headline(folder, rows, entry.degraded)
            entry.planted_warnings = run_planting_warnings(folder)
    except Exception as exc:  # noqa: BLE001 - one bad folder must not hide the others: it is listed with why
        entry.error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    report = folder / "report" / "report.html"
    entry.report = report if report.exists() else None
    entry.figures = sorted((folder / "report").glob("*.png")) if (folder / "report").is_dir() else []
    return entry


def last_ran(folder: Path) -> float:
    """When a run last wrote its own records (its log, rows, results): what "newest" means for a run.

    A report written later, or a page written beside it, does not make an old run new.
    """
    own = [folder / "log.jsonl", folder / "results.parquet", folder / "spec.json", folder / "rows"]
    own += list((folder / "rows").glob("*.jsonl")) if (folder / "rows").is_dir() else []
    times = [p.stat().st_mtime for p in own if p.exists()]
    return max(times) if times else folder.stat().st_mtime


def run_folders(root: Path, depth: int = 3) -> list[Path]:
    """The run folders under ``root`` (``root`` itself when it is a run), nested ones included.

    Folders of runs are searched ``depth`` levels down (``runs/ablations/chunk_sizes``); a run folder's
    own subfolders are not.
    """
    if is_run(root) and (root / "spec.json").is_file():
        return [root]
    found: list[Path] = []
    for p in sorted(q for q in root.iterdir() if q.is_dir() and not q.name.startswith(".")):
        if is_run(p):
            found.append(p)
        elif depth > 1:
            found += run_folders(p, depth - 1)
    return found


def runs_overview(runs_dir: str | os.PathLike[str]) -> list[RunEntry]:
    """One ``RunEntry`` per run folder under ``runs_dir`` (see ``run_folders``), the last run first."""
    root = Path(runs_dir)
    folders = run_folders(root)
    entries = [run_entry(f) for f in folders]
    for entry, folder in zip(entries, folders):
        if folder != root and folder.parent != root:  # nested: named by its path below the root
            entry.name = folder.relative_to(root).as_posix()
    return sorted(entries, key=lambda e: -e.modified)


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def system_labels(spec: dict[str, Any]) -> list[str]:
    """The labels of a spec's memory systems (``mem0:raw``, ``http:127.0.0.1:8000``), each once, in order."""
    from lyra_lab.systems import SYSTEMS

    labels = []
    for item in spec.get("systems") or []:
        raw = item.get("system", "") if isinstance(item, dict) else item
        try:
            labels.append(SYSTEMS.build(raw).label())
        except Exception:  # noqa: BLE001 - a system this lyra-lab cannot rebuild is still named
            labels.append(str(raw.get("name") if isinstance(raw, dict) else raw))
    return list(dict.fromkeys(labels))


def grid_line(spec: dict[str, Any]) -> str:
    """What a grid compares, in words: memory pipelines × recallers, and memory systems beside them."""
    pipelines, recallers = len(spec.get("pipelines") or []), len(spec.get("recallers") or [])
    systems = system_labels(spec)
    parts = []
    if pipelines or not systems:
        parts.append(f"{pipelines} memory pipeline{'s' * (pipelines != 1)} × "
                     f"{recallers} recaller{'s' * (recallers != 1)}")
    if systems:
        parts.append(f"{len(systems)} memory system{'s' * (len(systems) != 1)} ({', '.join(systems)})")
    return " + ".join(parts)


def _spec_line(spec: dict[str, Any]) -> str:
    if not spec:
        return '<span class="muted">no spec.json</span>'
    corpus = spec.get("corpus") or {}
    where = Path(str(corpus.get("path") or "?")).name
    limits = ", ".join(f"{k} {corpus[k]}" for k in ("conversations", "max_sessions", "max_probes") if corpus.get(k))
    parts = [f"<b>{_esc(where)}</b>" + (f" ({_esc(limits)})" if limits else ""), _esc(grid_line(spec)),
             "backends " + _esc(", ".join(map(str, spec.get("backends") or []))),
             "embedders " + _esc(", ".join(map(str, spec.get("embedders") or []))),
             "seeds " + _esc(", ".join(map(str, spec.get("seeds") or [])))]
    text = " · ".join(parts)
    if spec.get("description"):
        text = f"{_esc(spec['description'])}<br>{text}"
    return text


def _status_cell(entry: RunEntry) -> str:
    status = entry.status
    if entry.error is not None or status is None:
        return f'<span class="state unreadable">unreadable</span><br><span class="muted">{_esc(entry.error)}</span>'
    out = f'<span class="state {status.state}">{status.state}</span><br>{_esc(status.describe())}'
    if status.failed:
        shown = ", ".join(status.failed[:3]) + (" …" if len(status.failed) > 3 else "")
        out += f'<br><span class="muted">failed: {_esc(shown)}; run the same command again to retry them</span>'
    line = warning(entry.degraded)
    if line is not None:
        out += f'<br><span class="state degraded">{MARK}</span> {_esc(line.removeprefix(MARK + ": "))}'
    if status.started_at:
        out += f'<br><span class="muted">attempt {status.attempts}, started {_esc(status.started_at[:19])}</span>'
    return out


def _headline_cell(entry: RunEntry) -> str:
    top = entry.headline
    if top is None or not top.rows:
        return '<span class="muted">no quality metric yet</span>'

    def mark(t: HeadlineRow) -> str:
        return f' <span class="state degraded">{MARK} ({t.degraded})</span>' if t.degraded else ""

    items = "".join(f"<li><code>{_esc(t.label)}</code>{mark(t)} {t.mean:.3f}"
                    + ("" if pd.isna(t.ci_low) else f" [{t.ci_low:.3f}, {t.ci_high:.3f}]")
                    + f" <span class=muted>n={t.n}</span></li>" for t in top.rows)
    best = (f"{top.tied} pipelines tie at the best, {top.rows[0].mean:.3f}; {len(top.rows)} of them"
            if top.tied > len(top.rows) else f"best {len(top.rows)}")
    planted = "".join(f'<br><span class="state degraded">⚠ planted language</span> {_esc(w)}'
                      for w in entry.planted_warnings)
    return f"<b>{_esc(top.metric)}</b>, {best}:<ol>{items}</ol>{planted}"


def _links_cell(entry: RunEntry, base: Path) -> str:
    def rel(path: Path) -> str:
        return _esc(Path(os.path.relpath(path, base)).as_posix())

    if entry.report is None:
        return f'<span class="muted">no report yet: <code>lyra-lab report {_esc(entry.path)}</code></span>'
    out = (f'<a href="{rel(entry.report)}">report</a> · <a href="{rel(entry.report)}#paired">paired comparisons</a>'
           f' · <a href="{rel(entry.report)}#probes">per-probe drill-down</a>')
    if entry.figures:
        thumbs = "".join(f'<a href="{rel(f)}"><img alt="{_esc(f.stem)}" title="{_esc(f.stem)}" loading="lazy" '
                         f'src="{rel(f)}"></a>' for f in entry.figures)
        out += f"<details><summary>figures ({len(entry.figures)})</summary>{thumbs}</details>"
    return out


def render_index(entries: list[RunEntry], base: Path, title: str) -> str:
    """The page as one string; links are relative to ``base`` (the folder the page is written to)."""
    rows = "".join(f'<tr id="run-{_esc(e.name)}"><td><b>{_esc(e.name)}</b><br><span class=muted>{_esc(e.path)}</span>'
                   f"</td><td>{_spec_line(e.spec)}</td><td>{_status_cell(e)}</td><td>{_headline_cell(e)}</td>"
                   f"<td>{_links_cell(e, base)}</td></tr>\n" for e in entries)
    counts = pd.Series([e.status.state if e.status else "unreadable" for e in entries]).value_counts()
    tally = ", ".join(f"{n} {state}" for state, n in counts.items())
    return ("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            f"<meta name=viewport content='width=device-width'><title>{_esc(title)}</title><style>{_CSS}</style>"
            f"</head><body>\n<h1>{_esc(title)}</h1>\n<p>{_esc(count(len(entries), 'run'))} ({_esc(tally)}), the last run "
            "first. Quality: "
            "the mean over probes [95% bootstrap CI] and n, the probes behind it.</p>\n<table><thead><tr><th>run</th>"
            "<th>what it ran</th><th>status</th><th>headline</th><th>report</th></tr></thead><tbody>\n"
            f"{rows}</tbody></table>\n</body></html>\n")


@dataclass(frozen=True)
class RunsPage:
    """A written page (``path``) and the runs it shows."""

    path: Path
    runs: tuple[RunEntry, ...]


def write_index(runs_dir: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> RunsPage:
    """Write the page over the runs in ``runs_dir`` to ``out`` (default ``<runs_dir>/index.html``).

    Raises:
        FileNotFoundError: ``runs_dir`` does not exist, or holds no run folder.
    """
    root = Path(runs_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such folder of runs")
    entries = runs_overview(root)
    if not entries:
        raise FileNotFoundError(f"{root}: no run folder in it (a folder with spec.json, rows/ or results.parquet)")
    target = Path(out) if out is not None else root / "index.html"
    target.write_text(render_index(entries, target.parent, f"Runs in {root.resolve().name}"), encoding="utf-8")
    return RunsPage(target, tuple(entries))
