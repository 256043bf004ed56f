"""How fast this machine runs each model: a short calibration, kept per machine in the user cache.

A wall-time forecast needs seconds per unit of model work on *this* machine: per text and per
token for an embedder, per call, per prompt token and per completion token for an LLM backend.
``calibration`` measures them once (a few seconds a model), keeps them in
``<user cache>/calibration.json`` under a key of this machine (host, cores) and the model's
identity, with the date, and measures again when the entry is missing, older than
``STALE_DAYS`` or ``force`` is set (``lyra-lab plan --calibrate``).

An embedder is measured on the run's own texts where it has some of the sizes measured
(``calibration_texts``: short and long ones to embed, prose where there are too few), so the
vectors the calibration computes are the run's: the forecast measures through the shared
embedding cache, and the run reads them back instead of embedding them again.

Each rate is measured twice; ``spread`` is the relative difference between the two, a floor of
the forecast's uncertainty (a busy machine shows a larger one).  The machine's load is kept with
the rates, and a forecast scales them by how much busier the machine is now (``busier_now``:
runnable tasks per core now against then), since on a shared machine the same work takes longer
when other processes compete for the cores.  The load is what runs *now* (``load_now``: the
runnable tasks of other processes, sampled, plus the one the work adds), not the 1-minute load
average: that average still counts, for a minute or more, a run that was just interrupted, so a
re-plan would have forecast more time for less work (the run's own ghost competing with it).  Only models on this machine are
calibrated: a remote endpoint would be sent text (and billed) for it, so its rates are assumed
(``ASSUMED_REMOTE``) and flagged as such.
"""

from __future__ import annotations

import json
import os
import platform
import random
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, NamedTuple, Sequence

from lyra_lab._atomic import write_whole
from lyra_lab._machine import usable_cores

STALE_DAYS = 30
_WORDS = ("memory time river project meeting garden letter question answer friend family weather city music "
          "book dinner travel train morning evening plan budget report code server model data team week month "
          "doctor school holiday painting kitchen market price language summer winter story photo camera").split()


@dataclass(frozen=True)
class Rates:
    """Seconds a model takes on this machine: ``per_item + per_in · input tokens + per_out · output tokens``.

    Attributes:
        key: what was measured (the model's identity, canonical JSON).
        per_item: seconds per call (LLM) or per text (embedder), beyond its tokens.
        per_in: seconds per input token (prompt tokens, or a text's tokens).
        per_out: seconds per completion token (0 for an embedder).
        load_s: seconds to load or start the model once (first use).
        spread: relative difference between the two measurements (the uncertainty's floor).
        measured_at: ISO date of the measurement, or ``"assumed"``.
        load: the machine's load when it was measured (``load_now``; see ``contention``).
    """

    key: str
    per_item: float
    per_in: float
    per_out: float = 0.0
    load_s: float = 0.0
    spread: float = 0.0
    measured_at: str = "assumed"
    load: float = 0.0

    def seconds(self, items: int, tokens_in: int, tokens_out: int = 0) -> float:
        """Seconds for ``items`` calls or texts of these many tokens in and out."""
        return items * self.per_item + tokens_in * self.per_in + tokens_out * self.per_out

    @property
    def assumed(self) -> bool:
        return self.measured_at == "assumed"


#: A remote LLM's rates when nothing was measured: ~0.6 s a call, ~5,000 prompt and ~60 completion tokens/s.
ASSUMED_REMOTE = Rates("remote", per_item=0.6, per_in=0.0002, per_out=1 / 60, spread=1.0)
#: A remote embedding API: ~0.3 s per request of many texts, ~20,000 tokens/s.
ASSUMED_REMOTE_EMBEDDER = Rates("remote-embedder", per_item=0.005, per_in=0.00005, spread=1.0)


def machine_key() -> str:
    """This machine as calibrations are kept: host name and usable cores."""
    return f"{platform.node()}/{usable_cores()}cpu/{platform.machine()}"


def calibration_path() -> Path:
    from lyra_lab.backends import cache_dir

    return cache_dir() / "calibration.json"


def calibration(key: str, measure: Callable[[], Rates], force: bool = False,
                path: Path | None = None) -> Rates:
    """The kept ``Rates`` of ``key`` on this machine, measured now (and kept) if missing, stale or ``force``."""
    path = path or calibration_path()
    kept = _read(path)
    entry = kept.get(machine_key(), {}).get(key)
    if entry is not None and not force:
        rates = Rates(**entry)
        measured = datetime.fromisoformat(rates.measured_at)
        if datetime.now(timezone.utc) - measured < timedelta(days=STALE_DAYS):
            return rates
    rates = measure()
    kept.setdefault(machine_key(), {})[key] = asdict(rates)
    write_whole(path, json.dumps(kept, indent=1, sort_keys=True), make_folder=True)
    return rates


def _read(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def prose(tokens: int, seed: int) -> str:
    """About ``tokens`` tokens of plain words (what calibration texts are made of)."""
    rng = random.Random(seed)
    return " ".join(rng.choice(_WORDS) for _ in range(tokens))


#: The calibration's text sizes in tokens (``count``'s): 8 short and 8 long texts a repetition.
SHORT_TOKENS, LONG_TOKENS, PER_SIZE = 32, 256, 8


class CalibrationTexts(NamedTuple):
    """What an embedder's calibration embeds: one text that loads the model, then short and long per repetition."""

    load: str
    short: tuple[tuple[str, ...], tuple[str, ...]]
    long: tuple[tuple[str, ...], tuple[str, ...]]

    def all(self) -> list[str]:
        return [self.load, *(t for rep in (*self.short, *self.long) for t in rep)]


def calibration_texts(candidates: Mapping[str, int]) -> CalibrationTexts:
    """The texts to measure an embedder on: the run's own (``candidates``: text → tokens) nearest each size.

    A short text has 16-64 tokens, a long one 128-400 (under a 512-token window, so what is counted is
    embedded); the ones nearest ``SHORT_TOKENS`` and ``LONG_TOKENS`` are taken, each once, in a fixed
    order, and prose fills in where the run has too few. The model loads on the run's shortest other text.
    """
    sized = sorted(((t, n) for t, n in candidates.items() if t.strip()), key=lambda item: (item[1], item[0]))

    def nearest(low: int, high: int, target: int) -> list[str]:
        near = sorted((item for item in sized if low <= item[1] <= high), key=lambda item: abs(item[1] - target))
        return [t for t, _ in sorted(near[: 2 * PER_SIZE], key=lambda item: (item[1], item[0]))]

    short, long = nearest(16, 64, SHORT_TOKENS), nearest(128, 400, LONG_TOKENS)
    short += [prose(SHORT_TOKENS, 100 * rep + i) for rep in range(2) for i in range(PER_SIZE)][len(short):]
    long += [prose(LONG_TOKENS, 100 * rep + 50 + i) for rep in range(2) for i in range(PER_SIZE)][len(long):]
    used = set(short) | set(long)
    load = next((t for t, _ in sized if t not in used), prose(8, 0))
    # the sizes' texts alternate between the repetitions: each spans its size's range
    return CalibrationTexts(load, (tuple(short[0::2]), tuple(short[1::2])), (tuple(long[0::2]), tuple(long[1::2])))


def measure_embedder(key: str, embed: Callable[[list[str]], object], count: Callable[[str], int],
                     texts: Mapping[str, int] | None = None) -> Rates:
    """Rates of an embedder: 8 short and 8 long texts, twice; seconds per text and per token fitted.

    ``texts``: the run's texts to embed and their tokens, measured on where they have the sizes
    (``calibration_texts``); with ``embed`` writing to the run's embedding cache, the run does not embed
    them again.
    """
    chosen = calibration_texts(texts or {})
    load_then = load_now()  # before the measurement's own work
    started = time.perf_counter()
    embed([chosen.load])  # the model loads here
    load = time.perf_counter() - started
    fits = []
    for rep in range(2):
        short, long = list(chosen.short[rep]), list(chosen.long[rep])
        t_short, t_long = _timed(embed, short), _timed(embed, long)
        n_short, n_long = sum(map(count, short)) / PER_SIZE, sum(map(count, long)) / PER_SIZE
        per_token = max(0.0, (t_long - t_short) / PER_SIZE / (n_long - n_short))
        fits.append((max(0.0, t_short / PER_SIZE - per_token * n_short), per_token))
    return _rates(key, fits, load, load_then)


def measure_backend(key: str, complete: Callable[[str, int], tuple[int, int]]) -> Rates:
    """Rates of an LLM: a short and a long prompt asking for 1 token, and a short one asking for 48, twice.

    ``complete(prompt, max_tokens)`` makes the call and returns its (prompt, completion) tokens.
    """
    load_then = load_now()  # before the measurement's own work
    started = time.perf_counter()
    complete(prose(8, 1), 1)  # a server starts here
    load = time.perf_counter() - started
    fits = []
    for rep in range(2):
        short, long = prose(40, 7 + rep), prose(600, 9 + rep)
        t1, (p1, _) = _timed_call(complete, short, 1)
        t2, (p2, _) = _timed_call(complete, long, 1)
        t3, (_, c3) = _timed_call(complete, short + " Write a long story.", 48)
        per_in = max(0.0, (t2 - t1) / max(1, p2 - p1))
        per_out = max(0.0, (t3 - t1) / max(1, c3 - 1))
        fits.append((max(0.0, t1 - per_in * p1), per_in, per_out))
    return _rates(key, fits, load, load_then)


#: The work two fits are compared on: one call of 500 prompt and 100 completion tokens, or one 200-token text.
_REFERENCE = (1.0, 500.0, 100.0)


def _rates(key: str, fits: Sequence[tuple[float, ...]], load: float, machine_load: float) -> Rates:
    """The mean of two fits; ``spread``: their relative difference in the seconds of a reference piece of work."""
    mean = [(x + y) / 2 for x, y in zip(*fits)]
    first, second = (sum(r * w for r, w in zip(fit, _REFERENCE if len(fit) == 3 else (1.0, 200.0))) for fit in fits)
    spread = abs(first - second) / ((first + second) / 2) if first + second > 0 else 0.0
    return Rates(key, mean[0], mean[1], mean[2] if len(mean) > 2 else 0.0, round(load, 3), round(min(spread, 1.0), 3),
                 datetime.now(timezone.utc).isoformat(timespec="seconds"), round(machine_load, 2))


#: How often and how far apart ``load_now`` samples the runnable tasks.
_SAMPLES, _SAMPLE_GAP_S = 7, 0.01


def load_now() -> float:
    """The load the measured work meets now: other processes' runnable tasks (the median of a few samples), plus 1.

    The 1 is the work itself (a run, a calibration).  Where the kernel gives no count of runnable tasks
    (``/proc/loadavg``'s fourth field), the 1-minute load average stands in (0.0 where there is none).
    """
    samples = []
    for i in range(_SAMPLES):
        running = _runnable()
        if running is None:
            break
        samples.append(max(0, running - 1))  # the sampling thread itself is runnable while it reads
        if i + 1 < _SAMPLES:
            time.sleep(_SAMPLE_GAP_S)
    if samples:
        return float(sorted(samples)[len(samples) // 2]) + 1.0
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def _runnable() -> int | None:
    """Tasks runnable on the machine this instant (``/proc/loadavg``: ``running/total``), None where unknown."""
    try:
        field = Path("/proc/loadavg").read_text(encoding="ascii").split()[3]
        return int(field.partition("/")[0])
    except (OSError, IndexError, ValueError):
        return None


def contention(load: float) -> float:
    """How much slower CPU work runs at ``load`` than on an idle machine: runnable tasks per core, at least 1."""
    return max(1.0, load / usable_cores())


def busier_now(rates: Rates) -> float:
    """Seconds measured under ``rates.load`` times this: the machine's contention now against then."""
    if rates.measured_at in ("assumed",) or rates.load <= 0:
        return 1.0
    return contention(load_now()) / contention(rates.load)


def _timed(fn: Callable[[list[str]], object], texts: list[str]) -> float:
    started = time.perf_counter()
    fn(texts)
    return time.perf_counter() - started


def _timed_call(fn: Callable[[str, int], tuple[int, int]], prompt: str, max_tokens: int) -> tuple[float, tuple[int, int]]:
    started = time.perf_counter()
    usage = fn(prompt, max_tokens)
    return time.perf_counter() - started, usage


def identity_key(identity: Mapping[str, Any]) -> str:
    return json.dumps(dict(identity), sort_keys=True, default=str)
