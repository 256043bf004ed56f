"""A sweep's load levels on one event loop, for backends that complete there (``AsyncBackend``).

The same two loads as ``_sweep``'s threads (closed loop: ``c`` workers each sending
its next request when the last one answered; open loop: requests at scheduled
arrivals, at most ``max_in_flight`` in flight) and the same records, but every
request in flight is a task of one loop in this thread: no thread is woken per
streamed chunk, so at 32 streams in flight the client costs what a minimal asyncio
client costs (``benchmarks/fast_server.py``). The loop is the process's request loop
(``lyra_lab.backends.request_loop``: a notebook's thread runs a loop of its own), and
the backend's connections there are closed when a level ends.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable, Coroutine, Mapping, NamedTuple, Protocol, Sequence

from lyra_lab.backends import AsyncBackend, BackendError, request_loop
from lyra_lab.bench._prompts import BenchPrompt
from lyra_lab.bench._request_records import Times, answer_record, arrival_times, failure_record, timed_record


class Bounds(Protocol):
    """What a level's load needs of the sweep's spec (``SweepSpec`` has it)."""

    @property
    def requests(self) -> int: ...

    @property
    def time_cap_s(self) -> float: ...

    @property
    def max_in_flight(self) -> int: ...

    @property
    def arrivals(self) -> str: ...

    @property
    def seed(self) -> int: ...


class LoopLoad(NamedTuple):
    """What every request of a level sends: one of ``prompts`` (in turn) to ``backend`` with ``params``."""

    backend: AsyncBackend
    prompts: Sequence[BenchPrompt]
    params: Mapping[str, Any]

    async def call(self, i: int) -> dict[str, Any]:
        """Request ``i``'s outcome record (prompts reused round-robin; an unexpected exception is a bug)."""
        prompt = self.prompts[i % len(self.prompts)]
        try:
            completion = await self.backend.acomplete(list(prompt.messages), **self.params)
        except BackendError as exc:
            return failure_record(prompt, exc)
        return answer_record(prompt, completion)


def closed(load: LoopLoad, spec: Bounds, level: float, tick: Callable[[int], object]) -> list[dict[str, Any]]:
    """``level`` workers, each sending its next request when the last one answered."""
    return _run(load, _closed(load, spec, int(level), tick))


def open_loop(load: LoopLoad, spec: Bounds, level: float, tick: Callable[[int], object]) -> list[dict[str, Any]]:
    """Requests arriving at ``level`` per second (Poisson or evenly spaced), whether or not earlier ones answered."""
    return _run(load, _open(load, spec, level, tick))


def _run(load: LoopLoad, rows: Coroutine[Any, Any, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The level's records, sent from the process's request loop; the backend's connections there closed after.

    Not the caller's thread: it may run a loop of its own (a notebook's).
    """

    async def level() -> list[dict[str, Any]]:
        try:
            return sorted(await rows, key=lambda r: r["seq"])
        finally:
            await load.backend.aclose()

    return request_loop().run(level())


async def _closed(load: LoopLoad, spec: Bounds, workers: int, tick: Callable[[int], object]) -> list[dict[str, Any]]:
    issued, rows = [0], []
    t0 = time.perf_counter()

    async def worker() -> None:
        while True:
            i = issued[0]  # no lock: the loop switches tasks only at an await
            if i >= spec.requests or time.perf_counter() - t0 > spec.time_cap_s:
                return
            issued[0] += 1
            start = time.perf_counter() - t0
            row = await load.call(i)
            end = time.perf_counter() - t0
            rows.append(timed_record(i, Times(start, start, end, t0), row))
            tick(1)

    await asyncio.gather(*(worker() for _ in range(workers)))
    return rows


async def _open(load: LoopLoad, spec: Bounds, rate: float, tick: Callable[[int], object]) -> list[dict[str, Any]]:
    arrivals = arrival_times(spec.requests, rate, spec.arrivals, spec.seed)
    in_flight = asyncio.Semaphore(spec.max_in_flight)
    t0 = time.perf_counter()

    async def one(i: int, scheduled: float) -> dict[str, Any]:
        async with in_flight:
            sent = time.perf_counter() - t0
            row = await load.call(i)
            end = time.perf_counter() - t0
        tick(1)
        return timed_record(i, Times(scheduled, sent, end, t0), row)

    tasks = []
    for i, at in enumerate(arrivals):
        if at > spec.time_cap_s:
            break
        delay = at - (time.perf_counter() - t0)
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(i, at)))
    return list(await asyncio.gather(*tasks))
