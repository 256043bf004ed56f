"""Lock files that make the processes of one machine (Ray workers) share a backend as threads do.

In one process ``CachedBackend`` pays a question asked by two threads at once only once, and a
backend's semaphore bounds its requests in flight.  Ray workers are processes, each with its own:
these wrappers give them the same guarantees through ``flock`` on small files beside the run's
cache, released by the kernel if a worker dies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from lyra_lab.backends import Backend, BackendWrapper, Completion, Message, cache_key


class OneCallAcrossProcesses(BackendWrapper):
    """A cached backend whose misses are paid once across the processes of a machine.

    ``CachedBackend`` makes threads asking the same question at once wait for one answer; processes
    each hold their own, so two Ray workers could both miss and both pay.  Here a call holds an
    ``flock`` on one of ``STRIPES`` lock files (chosen by its cache key) while it asks the cache and,
    on a miss, pays and stores: the other process waits, then finds the answer cached.  Two different
    questions share a stripe rarely, and then one waits for the other.

    Args:
        inner: a ``CachedBackend`` (its ``capabilities.identity`` keys the lock stripe as it keys the cache).
        lock_dir: a folder every process of the run sees (beside the cache file).
    """

    STRIPES = 1024

    def __init__(self, inner: Backend, lock_dir: Path):
        super().__init__(inner)
        self.lock_dir = lock_dir
        lock_dir.mkdir(parents=True, exist_ok=True)

    def complete(self, messages: Sequence[Message], *, deadline: float | None = None,
                 **params: object) -> Completion:
        import fcntl

        key = cache_key(self.inner.capabilities.identity, messages, params)
        with open(self.lock_dir / f"{int(key[:8], 16) % self.STRIPES:04d}.lock", "a") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # released when the file closes
            return self.inner.complete(messages, deadline=deadline, **params)



class MachineSlots(BackendWrapper):
    """A backend whose requests in flight, from every process of this machine, are at most ``slots``.

    Each call holds an ``flock`` on one of ``slots`` lock files (a folder per backend identity: name,
    endpoint, model), trying them in turn and waiting a moment when all are held.  The backend's own
    semaphore bounds one process; this bounds the Ray workers together.
    """

    POLL_S = 0.005

    def __init__(self, inner: Backend, slot_dir: Path, slots: int):
        super().__init__(inner)
        self.slot_dir = slot_dir
        self.slots = slots
        slot_dir.mkdir(parents=True, exist_ok=True)

    def complete(self, messages: Sequence[Message], *, deadline: float | None = None,
                 **params: object) -> Completion:
        import fcntl
        import random
        import time

        first = random.randrange(self.slots)  # workers start at different slots
        while True:
            for i in range(self.slots):
                fh = open(self.slot_dir / f"{(first + i) % self.slots}.lock", "a")
                try:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    fh.close()
                    continue
                with fh:  # closing the file releases the slot
                    return self.inner.complete(messages, deadline=deadline, **params)
            time.sleep(self.POLL_S)
