"""A throughput sweep: one backend, fixed prompts, a series of load levels, one record per request.

Two kinds of load (a level is one setting, run to a request count or a time cap):

- closed loop: ``c`` workers each send a request, wait for the answer, send
  the next. Throughput vs ``c`` shows where the backend saturates.
- open loop: requests arrive at a fixed offered rate (evenly spaced, or
  Poisson), whether or not earlier ones have finished. A request's latency
  counts from its scheduled arrival, so a backlog on the client side is
  measured instead of hidden ("coordinated omission").

Only ``Backend.complete`` is used, so any backend works (a ``FakeLLM`` too), each
request in flight on its own thread; the streamed requests of a backend that also
completes on an event loop (``AsyncBackend``: ``OpenAIBackend``) are sent from one loop
instead (``_on_loop``), since a thread per streamed request is woken for every chunk.
The result's info says which (``client``: "event loop" or "threads").
A record's ``latency_s`` is the call as the caller felt it, from due to return:
waiting for a client slot, failed attempts and backoff included; ``service_s``
is the answering attempt alone. Each answered request also records E2EL
(``e2el_s``: the answering request sent to its last chunk carrying choices) and
the client queue before that send (``client_queue_time_s``), and streamed ones
TTFT, TPOT and their inter-token gaps, as ``vllm bench serve`` defines them
(``_serving_metrics``). ``on_level`` hears of each level as it finishes.
"""

from __future__ import annotations

import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, NamedTuple, Sequence, TypeGuard

from lyra_lab._registry import ConfigError
from lyra_lab.backends import AsyncBackend, Backend, BackendError
from lyra_lab.bench._prompts import BenchPrompt, prompts_sha256
from lyra_lab.bench._request_records import Times, answer_record, arrival_times, failure_record, timed_record

if TYPE_CHECKING:
    from lyra_lab.bench._results import BenchResult

ARRIVALS = ("uniform", "poisson")
WARMUP_MESSAGES = [{"role": "user", "content": "Warm-up request. Reply with one word: ready."}]


@dataclass(frozen=True)
class SweepSpec:
    """What load to apply, level by level.

    Attributes:
        concurrency: closed-loop levels (workers in flight); may be empty.
        rates: open-loop levels (offered requests per second); may be empty.
        requests: requests per level (prompts are reused in order if fewer).
        max_tokens: completion cap sent with every request.
        time_cap_s: no new request starts after this many seconds of a level.
        arrivals: open-loop spacing, ``"uniform"`` or ``"poisson"`` (seeded).
        max_in_flight: open loop: most requests in flight at once (client threads).
        seed: seeds Poisson arrivals.
        warmup: requests sent (and not recorded) before the first level, so
            connection set-up and lazy imports do not land in its latencies.
        params: more call params sent with every request (``temperature``…).
    """

    concurrency: tuple[int, ...] = (1, 2, 4, 8)
    rates: tuple[float, ...] = ()
    requests: int = 24
    max_tokens: int = 64
    time_cap_s: float = 60.0
    arrivals: str = "uniform"
    max_in_flight: int = 64
    seed: int = 0
    warmup: int = 1
    params: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "concurrency", tuple(self.concurrency))
        object.__setattr__(self, "rates", tuple(float(r) for r in self.rates))
        object.__setattr__(self, "params", dict(self.params))
        if not self.concurrency and not self.rates:
            raise ConfigError("sweep: give at least one concurrency level or one rate")
        if any(not isinstance(c, int) or c < 1 for c in self.concurrency):
            raise ConfigError(f"sweep: concurrency levels must be integers >= 1, got {self.concurrency}")
        if any(not r > 0 for r in self.rates):
            raise ConfigError(f"sweep: rates must be > 0 requests/s, got {self.rates}")
        for name in ("requests", "max_tokens", "max_in_flight"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"sweep: {name} must be an integer >= 1, got {value!r}")
        if not isinstance(self.warmup, int) or self.warmup < 0:
            raise ConfigError(f"sweep: warmup must be an integer >= 0, got {self.warmup!r}")
        if not self.time_cap_s > 0:
            raise ConfigError(f"sweep: time_cap_s must be > 0, got {self.time_cap_s!r}")
        if self.arrivals not in ARRIVALS:
            raise ConfigError(f"sweep: arrivals must be one of {', '.join(ARRIVALS)}, got {self.arrivals!r}")
        if "max_tokens" in self.params:
            raise ConfigError("sweep: set max_tokens as its own field, not in params")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "concurrency": list(self.concurrency), "rates": list(self.rates)}


def backend_label(backend: Backend) -> str:
    """``name/model``, plus ``" (simulated)"`` for a simulated backend."""
    return f"{backend.name}/{backend.model}" + (" (simulated)" if backend.capabilities.simulated else "")


@dataclass(frozen=True)
class LevelDone:
    """What a finished level did, for progress lines (``run_sweep``'s ``on_level``).

    Attributes:
        name: the level as the bars name it (``"c=4"``, ``"rate=2/s"``).
        index: its place among the sweep's levels, from 1.
        levels: how many levels the sweep has.
        requests: requests sent at the level.
        ok: those answered.
        seconds: from its first request due to its last answered.
    """

    name: str
    index: int
    levels: int
    requests: int
    ok: int
    seconds: float

    def line(self) -> str:
        """One line (well within 100 columns): ``level 2/4 c=2: 24 requests, 24 ok, 3.1 s, 7.7 ok req/s``."""
        rate = f"{self.ok / self.seconds:.1f}" if self.seconds > 0 else "-"
        return (f"level {self.index}/{self.levels} {self.name}: {self.requests} requests, {self.ok} ok, "
                f"{self.seconds:.1f} s, {rate} ok req/s")


def run_sweep(backend: Backend, prompts: Sequence[BenchPrompt], spec: SweepSpec = SweepSpec(), *,  # noqa: PLR0913
              progress: bool | None = None, meta: Mapping[str, Any] | None = None,
              on_level: Callable[[LevelDone], object] | None = None) -> "BenchResult":
    """Run every level of ``spec`` against ``backend`` and return one record per request.

    Args:
        backend: the backend measured; an ``OpenAIBackend``'s own
            ``max_concurrency`` caps calls in flight, so build it with at least
            the highest level (``bench_backend`` does).
        prompts: the fixed prompts, sent in order (cycled) at every level. Give
            more than one: servers that reuse the previous request's prompt
            prefix (llama.cpp) answer a repeated prompt much faster.
        spec: the levels and their bounds.
        progress: tqdm bars (None: only on a terminal).
        meta: more facts to keep with the result (the prompts' source…).
        on_level: called with each level's ``LevelDone`` as it finishes (``lyra-lab bench`` prints its line).

    Raises:
        ConfigError: no prompts.
        BackendError: the warm-up request got no answer at all (server down, timeout).
    """
    if progress is False:
        from tqdm import tqdm  # tqdm.auto would warn in a notebook without ipywidgets, even disabled
    else:
        from tqdm.auto import tqdm

    from lyra_lab.bench._results import BenchResult, records_frame

    if not prompts:
        raise ConfigError("sweep: no prompts to send")
    cap = backend.capabilities.max_concurrency
    wanted = max([*spec.concurrency, *([spec.max_in_flight] if spec.rates else [])])
    if cap is not None and cap < wanted:
        warnings.warn(f"{backend.name}: the client allows only {cap} calls in flight, below the sweep's "
                      f"{wanted}; higher levels queue in the client (build it with bench_backend)",
                      stacklevel=2)
    label = backend_label(backend)
    params = {**spec.params, "max_tokens": spec.max_tokens}
    levels = [("closed", float(c)) for c in spec.concurrency] + [("open", r) for r in spec.rates]
    for _ in range(spec.warmup):
        try:
            # Not one of the prompts: llama.cpp reuses the KV cache of the previous
            # request's matching prefix, which would make the first recorded request nearly free.
            backend.complete(WARMUP_MESSAGES, **params)
        except BackendError as exc:
            if exc.status is None:
                raise  # no answer at all (refused, timed out): a sweep would only record the same failure
            # the server answered (429, 5xx…): its failures belong in the records of the first level
    rows: list[dict[str, Any]] = []
    for index, (mode, level) in enumerate(levels, 1):
        name = f"c={int(level)}" if mode == "closed" else f"rate={level:g}/s"
        with tqdm(total=spec.requests, desc=f"{label} {name}", unit="req",
                  disable=None if progress is None else not progress) as bar:
            done = _level(_Load(backend, prompts, params), spec, mode, level, bar.update)
        rows += [{"mode": mode, "level": level, **row} for row in done]
        if on_level is not None:
            seconds = max((r["end_s"] for r in done), default=0.0) - min((r["start_s"] for r in done), default=0.0)
            on_level(LevelDone(name, index, len(levels), len(done), sum(bool(r["ok"]) for r in done), seconds))
    frame = records_frame(rows, backend, label)
    label = str(frame["label"].iloc[0]) if len(frame) else label  # "(simulated)" may have been added
    if frame["cached"].any():
        warnings.warn(f"{backend.name}: {int(frame['cached'].sum())} answers came from a response cache; "
                      "their latencies measure the cache, not the backend", stacklevel=2)
    info = {"label": label, "backend": _describe(backend), "sweep": spec.to_dict(),
            "prompts": {"n": len(prompts), "sha256": prompts_sha256(prompts),
                        "mean_prompt_tokens": sum(p.prompt_tokens for p in prompts) / len(prompts)},
            "client_max_concurrency": cap,
            "client": "event loop" if _on_a_loop(backend) else "threads", **(meta or {})}
    return BenchResult(frame, info)


def _level(load: _Load, spec: SweepSpec, mode: str, level: float, tick: Callable[[int], object]) -> list[dict[str, Any]]:
    """The records of one level: streamed requests of an ``AsyncBackend`` on one event loop, else a thread each."""
    if _on_a_loop(load.backend):
        from lyra_lab.bench import _on_loop

        loop_load = _on_loop.LoopLoad(load.backend, load.prompts, load.params)
        return (_on_loop.closed if mode == "closed" else _on_loop.open_loop)(loop_load, spec, level, tick)
    return (_closed if mode == "closed" else _open)(load, spec, level, tick)


def _on_a_loop(backend: Backend) -> TypeGuard[AsyncBackend]:
    """Whether a sweep drives ``backend`` from one event loop: its streamed requests, when it can.

    A thread per streamed request is woken for every chunk (at 32 in flight, 61% of a minimal
    asyncio client's throughput); a non-streamed one is woken once, and threads measured
    faster there than one loop (``benchmarks/fast_server.py``).
    """
    return isinstance(backend, AsyncBackend) and backend.capabilities.streaming


def _describe(backend: Backend) -> dict[str, Any]:
    return {"name": backend.name, "model": backend.model, **backend.capabilities.description}


def _call(backend: Backend, prompt: BenchPrompt, params: Mapping[str, Any]) -> dict[str, Any]:
    """One request, its outcome as a record (an unexpected exception propagates: it is a bug)."""
    try:
        c = backend.complete(list(prompt.messages), **params)
    except BackendError as exc:
        return failure_record(prompt, exc)
    return answer_record(prompt, c)


class _Load(NamedTuple):
    """What every request of a level sends: one of ``prompts`` (in turn) to ``backend`` with ``params``."""

    backend: Backend
    prompts: Sequence[BenchPrompt]
    params: Mapping[str, Any]

    def call(self, i: int) -> dict[str, Any]:
        """Request ``i``'s outcome record (prompts are reused round-robin)."""
        return _call(self.backend, self.prompts[i % len(self.prompts)], self.params)


def _closed(load: _Load, spec: SweepSpec, level: float, tick: Callable[[int], object]) -> list[dict[str, Any]]:
    """``level`` workers, each sending its next request when the last one answered."""
    lock, stop = threading.Lock(), threading.Event()
    issued, rows = [0], []
    t0 = time.perf_counter()

    def worker() -> None:
        while not stop.is_set():
            with lock:
                i = issued[0]
                if i >= spec.requests or time.perf_counter() - t0 > spec.time_cap_s:
                    return
                issued[0] += 1
            start = time.perf_counter() - t0
            try:
                row = load.call(i)
            except BaseException:
                stop.set()  # a bug, not a backend failure: the other workers stop too
                raise
            end = time.perf_counter() - t0
            with lock:
                rows.append(timed_record(i, Times(start, start, end, t0), row))
            tick(1)

    with ThreadPoolExecutor(int(level), thread_name_prefix="bench-worker") as pool:
        for future in [pool.submit(worker) for _ in range(int(level))]:
            future.result()
    return sorted(rows, key=lambda r: r["seq"])


def _open(load: _Load, spec: SweepSpec, level: float, tick: Callable[[int], object]) -> list[dict[str, Any]]:
    """Requests arriving at ``level`` per second (Poisson or evenly spaced), whether or not earlier ones answered."""
    arrivals = arrival_times(spec.requests, level, spec.arrivals, spec.seed)
    t0 = time.perf_counter()

    def one(i: int, scheduled: float) -> dict[str, Any]:
        sent = time.perf_counter() - t0
        row = load.call(i)
        end = time.perf_counter() - t0
        tick(1)
        return timed_record(i, Times(scheduled, sent, end, t0), row)

    futures = []
    with ThreadPoolExecutor(spec.max_in_flight, thread_name_prefix="bench-arrival") as pool:
        for i, at in enumerate(arrivals):
            if at > spec.time_cap_s:
                break
            delay = at - (time.perf_counter() - t0)
            if delay > 0:
                time.sleep(delay)
            futures.append(pool.submit(one, i, at))
        return [f.result() for f in futures]
