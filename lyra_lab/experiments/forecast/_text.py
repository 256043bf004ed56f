"""A ``Forecast`` as the table ``lyra-lab plan`` and ``lyra-lab run`` print before a run."""

from __future__ import annotations

from collections import defaultdict

from lyra_lab._terminal import COLUMNS, count
from lyra_lab.backends import PRICES_AS_OF
from lyra_lab.experiments.forecast._calibrate import Rates
from lyra_lab.experiments.forecast._first_look import FirstLook, first_look
from lyra_lab.experiments.forecast._forecast import CellForecast, Forecast, Span

#: Up to this many cells the table lists each; beyond, one line per pipeline.
CELL_LINES = 12


def forecast_text(f: Forecast) -> str:
    """The forecast as a readable table (what ``lyra-lab plan`` prints)."""
    out = [f"plan of {f.run}: {f.todo} of {count(f.cells, 'cell')} to run · {count(f.conversations, 'conversation')}, "
           f"{count(f.turns, 'turn')}, {count(f.probes, 'probe')}"]
    resume = _resume(f)
    if resume:
        out.append(resume)
    if f.per_cell:
        out += _cells(f.per_cell)
    for e in f.embedders:
        where = "" if e.local else f" → {e.endpoint}"
        out.append(f"embedder {e.label}{where}: {e.texts:,} texts ({_n(e.tokens)} tokens), {e.cached:,} in the "
                   f"shared cache, {e.to_embed:,} to embed ({_n(e.to_embed_tokens)} tokens): "
                   f"{_secs(e.seconds)}  [{_rated(e.rates)}]")
    for b in f.backends:
        if not b.calls.high:
            continue
        price = f"${_span(b.cost_usd, money=True)}" + ("" if b.price_known else " (price unknown: counted as $0)")
        out.append(f"backend {b.label} ({b.model}): {_span(b.calls)} calls, {_span(b.prompt_tokens, True)} prompt + "
                   f"{_span(b.completion_tokens, True)} completion tokens, {price}: {_secs(b.seconds)}  "
                   f"[{_rated(b.rates)}]")
    if f.judge_controls is not None:
        c = f.judge_controls
        out.append(f"judge controls (answers of known truth, for each judge's error rates; in the judges' calls above): "
                   f"{c.calls:,} calls, ${_span(c.cost_usd, money=True)}; switch off with controls = false per judge")
    out.append(_data(f))
    out.append(f"wall time on this machine: {_secs(f.wall_s)} (harness {f.harness_s:.1f}s + model work); "
               f"cost at list prices ({PRICES_AS_OF}): ${_span(f.cost_usd, money=True)}")
    look = first_look(f)
    if look is not None:
        out.append(first_look_line(look))
    return "\n".join(out)


def _cells(cells: tuple[CellForecast, ...]) -> list[str]:
    rows: list[tuple[str, int, int, int, Span, Span, Span]] = []
    if len(cells) <= CELL_LINES:
        rows = [(f"{c.pipeline} · {c.conversation_id}", 1, c.turns, c.probes, c.calls, c.prompt_tokens,
                 c.completion_tokens) for c in cells]
    else:
        groups: dict[str, list[CellForecast]] = defaultdict(list)
        for c in cells:
            groups[c.pipeline].append(c)
        for label, group in groups.items():
            rows.append((label, len(group), sum(c.turns for c in group), sum(c.probes for c in group),
                         _sum(c.calls for c in group), _sum(c.prompt_tokens for c in group),
                         _sum(c.completion_tokens for c in group)))
    numbers = "  cells   turns  probes  LLM calls  prompt tok  compl. tok"
    width = min(COLUMNS - 2 - len(numbers), max(len(r[0]) for r in rows))
    lines = [f"  {'cell' if len(cells) <= CELL_LINES else 'pipeline':<{width}}{numbers}"]
    for name, n, turns, probes, calls, prompt, completion in rows:
        if len(name) > width:  # a long label on a line of its own, its figures below it: wrapped, not cut
            lines.append(f"  {name}")
            name = ""
        lines.append(f"  {name:<{width}}  {n:>5} {turns:>7,} {probes:>7,}  {_span(calls):>9}  "
                     f"{_span(prompt, True):>10}  {_span(completion, True):>10}")
    return lines


def _sum(spans: object) -> Span:
    items = list(spans)  # type: ignore[call-overload]
    return Span(sum(s.low for s in items), sum(s.high for s in items))


def _resume(f: Forecast) -> str:
    """What a resume runs again and why, and the failed cells it keeps (empty for a fresh run)."""
    again = [f"{n} {why}" for why, n in (("degraded (healed from the cache)", f.reasons.get("degraded", 0)),
                                         ("failed for good (--retry-failed)", f.reasons.get("failed", 0))) if n]
    parts = [f"runs again {', '.join(again)}"] if again else []
    if f.failed_kept:
        parts.append(f"keeps {f.failed_kept} failed for good (they would fail the same way; --retry-failed runs them)")
    if f.aliases:
        parts.append(f"copies {f.aliases} alias cell(s) from their source")
    return "resume: " + "; ".join(parts) if parts else ""


def _data(f: Forecast) -> str:
    sent = [f"{b.endpoint} ({b.label}: {_span(b.calls)} calls, {_span(b.prompt_tokens, True)} prompt tokens)"
            for b in f.backends if not b.local and b.calls.high]
    sent += [f"{e.endpoint} ({e.label}: {e.to_embed:,} texts, {e.to_embed_chars:,} characters)"
             for e in f.embedders if not e.local and e.to_embed]
    sent += [f"{d.where} (memory service)" for d in f.destinations if d.role == "service" and not d.local]
    here = [f"{d.label} ({d.role} on this machine)" for d in f.destinations
            if d.role in ("service", "process") and d.local]
    text = "data: conversation text " + ("goes to " + "; ".join(sent) if sent else "stays on this machine")
    return text + (f"; it also reaches {'; '.join(here)}" if here else "")


def _rated(r: Rates) -> str:
    if r.measured_at in ("assumed", "not calibrated"):
        return f"rates {r.measured_at}"
    if r.measured_at in ("in process", "nothing to embed"):
        return r.measured_at
    return f"calibrated {r.measured_at[:10]}"


def _span(s: Span, tokens: bool = False, money: bool = False) -> str:
    fmt = (lambda v: f"{v:.2f}") if money else (_n if tokens else (lambda v: f"{int(v):,}"))
    return fmt(s.low) if s.exact else f"{fmt(s.low)}–{fmt(s.high)}"


def _n(v: float) -> str:
    if v >= 1e6:
        return f"{v / 1e6:.2f}M"
    if v >= 1e4:
        return f"{v / 1e3:.0f}k"
    return f"{int(v):,}"


def _secs(s: Span) -> str:
    return f"{duration(s.mid)} ({duration(s.low)}–{duration(s.high)})"


def duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h12m``."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f}s" if seconds >= 1 else f"{seconds:.1f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def first_look_line(look: FirstLook) -> str:
    """``a first look in ~1m10s (56s–1m27s): [corpus] max_sessions = 8 (of 51 sessions)``, the plan's figures."""
    w = look.wall_s
    return (f"a first look in ~{duration(w.mid)} ({duration(w.low)}–{duration(w.high)}): "
            f"[corpus] max_sessions = {look.max_sessions} (of {look.sessions} sessions)")
