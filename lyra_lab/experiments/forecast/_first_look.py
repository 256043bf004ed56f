"""The plan's one-line way to a first look in minutes: ``[corpus] max_sessions = N``, sized from its own figures.

A plan whose middle figure is over ``OVER_S`` prints one line more: the most sessions of each
conversation (``[corpus] max_sessions``, the first N, and the probes on them; it cuts an export
that imports as one conversation as well as a corpus of many) whose estimate stays under
``TARGET_S``.  The estimate is the plan's own: its low and high wall times less the models'
one-off load (as the plan scaled and spread it), times the share of the model work in the first N
sessions (``_session_work.SessionWork``: each session's turns and the tokens a model reads of them, weighed with
the first embedder's calibrated rates per text and per token), plus the load again.
"""

from __future__ import annotations

from dataclasses import dataclass

from lyra_lab.experiments.forecast._forecast import Forecast, Span, spread

#: A plan longer than this (its middle, seconds) prints the first-look line.
OVER_S = 120.0
#: The suggested sessions are the most whose estimate (its middle) stays under this: a look in ~1–2 minutes.
TARGET_S = 90.0


@dataclass(frozen=True)
class FirstLook:
    """``[corpus] max_sessions = max_sessions`` (of ``sessions``) and the plan's wall time with it, low–high."""

    max_sessions: int
    sessions: int
    wall_s: Span


def first_look(f: Forecast) -> FirstLook | None:
    """The first-look cut of a plan over ``OVER_S`` (None: the plan is short enough, or has one session)."""
    if f.wall_s.mid <= OVER_S or len(f.sessions) < 2:
        return None
    rates = next((e.rates for e in f.embedders if e.to_embed), None)
    per_turn, per_token = (rates.per_item, rates.per_in) if rates is not None and rates.per_in > 0 else (0.0, 1.0)
    weights = [per_turn * s.turns + per_token * s.tokens for s in f.sessions]
    total = sum(weights)
    if total <= 0:
        return None
    low, high = _loads(f)
    low, high = min(low, f.wall_s.low), min(high, f.wall_s.high)
    best = None
    done = 0.0
    for n, weight in enumerate(weights[:-1], start=1):
        done += weight
        share = done / total
        wall = Span(round(low + (f.wall_s.low - low) * share, 3), round(high + (f.wall_s.high - high) * share, 3))
        if best is not None and wall.mid > TARGET_S:
            break
        best = FirstLook(n, len(weights), wall)
    return best


def _loads(f: Forecast) -> tuple[float, float]:
    """The models' one-off load seconds inside the plan's low and high figures (scaled and spread as there)."""
    rates = [e.rates for e in f.embedders if e.to_embed] + [b.rates for b in f.backends if b.calls.high and b.local]
    loads = [spread(r, 0.0, 0.0, r.load_s) for r in rates]  # the plan's own scaling, the load alone
    return sum(s.low for s in loads), sum(s.high for s in loads)
