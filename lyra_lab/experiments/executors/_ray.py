"""Cells as Ray tasks (``[run] executor = "ray"``): on a local ``ray.init()`` or an existing cluster.

The driver stays the run folder's single writer.  A task runs one cell (``run_cell``, the function
the serial and thread executors run) and hands back its rows, its log events (with their own
times) and the backends it started; the driver writes the events, then the rows atomically, as each
task's result comes back, so layout, rows and resume are those of a serial run.

Backends and embedders hold live clients and servers, so they do not travel: each Ray worker builds
its own from their specs (lazily, as ``Resources`` does: an LLM-free grid starts no server) and
keeps them for its later cells of the same run.  The local llama server is started at most once per
machine (its state file and lock) and dies with the worker that started it.  Objects given as
``backends=``/``embedders=`` travel pickled (each task gets its own copy); one that cannot be
pickled is a ``ConfigError`` before Ray starts.

The workers of one machine share what threads share (lock files, ``_machine_locks``): a backend's
``max_concurrency`` bounds their requests in flight together (the local server still gets one at a
time), and the run's SQLite caches (WAL, safe across processes) replay an answer paid by one cell
for the others, a question two workers ask at once being paid once.  On several machines each of
these holds per machine: every node opens the cache path on its own disk, so the run folder (or
``cache = "user"``'s folder) must be reachable at the same path on every node for the cache to be
shared, and SQLite's locking does not hold on most network filesystems, so there a call may be
paid once per node.

A local instance gets ``max_cells`` CPUs (or the machine's when ``max_cells`` is 1), one per cell
in flight, listens on 127.0.0.1 only, has no dashboard, and is shut down when the run ends (also on
an error or Ctrl-C).  A Ray already initialized in this process (a notebook's) is used and left
running.  With an address, cells in flight follow the cluster's CPUs (and ``max_cells`` when > 1).
"""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator, Sequence

from lyra_lab._registry import ConfigError
from lyra_lab.runs import CellRows
from lyra_lab.experiments.executors._cell_task import CellResult, WorkerResources, delivered, run_cell_task, shippable
from lyra_lab.experiments.cells import Cell
from lyra_lab.experiments.executors._in_process import CellJob, CellOutcome, RunContext
from lyra_lab.experiments.grid import Injected, Resources

logger = logging.getLogger(__name__)


class RayCells(contextlib.AbstractContextManager["RayCells"]):
    """Each cell a Ray task, on a local Ray started for the run or a cluster joined by ``address``.

    Args:
        job: the run's cell setup and corpus (put into Ray's object store once).
        max_cells: tasks in flight at once (and the local Ray's CPUs); 1: every cell, on the machine's CPUs.
        cache_dir: the run's cache folder (the workers' caches and machine-wide locks).
        injected: objects given to ``run_experiment`` (they must pickle).
        address: a cluster to join; None starts a local Ray on 127.0.0.1 (shut down on exit).
    """

    def __init__(self, job: CellJob, max_cells: int, cache_dir: Path, injected: Injected, address: str | None = None):
        self.job, self.max_cells, self.cache_dir, self.injected, self.address = job, max_cells, cache_dir, injected, address
        self._ray: ModuleType | None = None
        self._owned = False
        self._pending: dict[Any, Cell] = {}

    def outcomes(self, todo: Sequence[Cell], run: RunContext) -> Iterator[CellOutcome]:
        """Each cell as its task finishes; its events go to the run's log before it is yielded.

        Raises:
            ConfigError: an injected backend or embedder cannot be pickled, or a task could not build
                what a spec names (e.g. an API-key variable missing on a node).
        """
        if not todo:
            return
        import ray

        given = shippable(self.injected, ray.cloudpickle.dumps, to="Ray tasks",
                          instead="'serial', 'threads' or 'processes'")  # before Ray starts anything
        self._ray, self._owned = connect(self.address, self.max_cells)
        ray = self._ray
        run.log.event("ray_started", **describe_cluster(ray, self._owned and self.address is None))
        task = ray.remote(num_cpus=1, max_retries=0)(_run_task)
        token = uuid.uuid4().hex  # this run: workers keep their backends per run
        job_ref, given_ref = ray.put(self.job), ray.put(given)
        window = self.max_cells if self.max_cells > 1 else len(todo)
        queue = list(reversed(todo))
        while queue or self._pending:
            while queue and len(self._pending) < window:
                cell = queue.pop()
                self._pending[task.remote(token, job_ref, cell, str(self.cache_dir), given_ref)] = cell
            done, _ = ray.wait(list(self._pending), num_returns=1)
            cell = self._pending.pop(done[0])
            result: CellResult = ray.get(done[0])  # a bug in the cell raises here and stops the run
            yield delivered(result, cell, run, task_event="ray_task", where=f"on Ray node {result.node}")

    def drain(self, run: RunContext) -> list[CellOutcome]:
        """The tasks that finished but were not handed back yet (their events written first)."""
        if self._ray is None or not self._pending:
            return []
        done, _ = self._ray.wait(list(self._pending), num_returns=len(self._pending), timeout=0)
        out = []
        for ref in done:
            cell = self._pending.pop(ref)
            try:
                result: CellResult = self._ray.get(ref)
            except Exception:  # noqa: BLE001 - a task that raised (a bug, or cancelled): nothing to keep
                continue
            out.append(delivered(result, cell, run, task_event="ray_task", where=f"on Ray node {result.node}"))
        return out

    def __exit__(self, *exc: object) -> None:
        """Cancel the tasks still pending and shut down a Ray this run started."""
        if self._ray is None:
            return
        for ref in self._pending:
            try:
                self._ray.cancel(ref)
            except Exception:  # noqa: BLE001 - a task that ended meanwhile; shutting down anyway
                pass
        self._pending = {}
        if self._owned:
            self._ray.shutdown()


START_ATTEMPTS = 3  # local Ray start-ups tried before giving up


def _start_local(ray: ModuleType, cpus: int) -> None:
    """``ray.init`` a single-machine Ray, up to ``START_ATTEMPTS`` times; ConfigError if none came up.

    Ray's node agent starts in ~2 s on an idle machine but took over its 15 s default on 2 loaded
    cores, and ray.init gives the node a fixed 30 s: at a load average of 8 (a test suite beside
    two notebooks) one start in a few timed out, so a failed start is shut down and tried again.
    """
    import tenacity

    def attempt() -> None:
        try:
            with _single_machine():
                ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False,
                         logging_level=logging.WARNING, _node_ip_address="127.0.0.1",
                         _system_config={"agent_register_timeout_ms": 60_000})
        except Exception:
            ray.shutdown()
            raise

    retrying = tenacity.Retrying(stop=tenacity.stop_after_attempt(START_ATTEMPTS), wait=tenacity.wait_fixed(1),
                                 reraise=True,
                                 before_sleep=lambda state: logger.warning(
                                     "local Ray did not start (attempt %d of %d): %s", state.attempt_number,
                                     START_ATTEMPTS, state.outcome.exception() if state.outcome else "?"))
    try:
        retrying(attempt)
    except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception when its node does not come up
        raise ConfigError(f"could not start a local Ray in {START_ATTEMPTS} attempts ({exc}); try again on a less "
                          "loaded machine, or start Ray yourself (ray start --head) and pass --address auto") from None


def connect(address: str | None, max_cells: int) -> tuple[ModuleType, bool]:
    """Ray, initialized: ``(ray, True)`` if this call started or joined it (and must shut it down).

    ``address`` None starts a local instance on 127.0.0.1 with ``max_cells`` CPUs (the machine's when
    ``max_cells`` is 1); an address (``"auto"``, ``"ray://host:10001"``, ``"host:6379"``) joins a cluster.
    """
    import ray

    if ray.is_initialized():
        return ray, False
    if address is None:
        cpus = max_cells if max_cells > 1 else (os.cpu_count() or 1)
        _start_local(ray, cpus)
        node = ray.util.get_node_ip_address()
        if node != "127.0.0.1":
            ray.shutdown()
            raise ConfigError(f"the local Ray would listen on {node}, not 127.0.0.1 (this Ray version moved its "
                              "single-machine switch); start Ray yourself and pass --address")
    else:
        loopback = _on_loopback(address)
        try:
            with _single_machine() if loopback else contextlib.nullcontext():
                ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING,
                         _node_ip_address="127.0.0.1" if loopback else None)
        except (ConnectionError, ValueError) as exc:
            raise ConfigError(f"--address {address}: cannot join a Ray cluster there ({exc})") from None
    return ray, True


def _on_loopback(address: str) -> bool:
    """Whether ``address`` (or, for ``"auto"``, the cluster this machine last started) is a head on 127.0.0.1.

    Such a head (``ray start --head --node-ip-address 127.0.0.1``, e.g. with
    ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` so nothing listens on the network) is joined as a node of
    127.0.0.1 too: by default Ray would look for this machine's node at its network address, find
    none, and wait.  A Ray client address (``ray://``) is joined as given.
    """
    if address == "auto":
        from ray._private.services import get_ray_address_from_environment

        address = get_ray_address_from_environment("auto", None) or ""
    if address.startswith("ray://"):
        return False
    return address.rsplit(":", 1)[0] in ("127.0.0.1", "localhost")


@contextlib.contextmanager
def _single_machine() -> Iterator[None]:
    """Ray's single-machine mode (its default on macOS and Windows) while a local Ray starts.

    On Linux Ray turns ``_node_ip_address="127.0.0.1"`` into the machine's network address, so its
    processes would listen there; in this mode the node's address stays 127.0.0.1.  The switch is read
    from ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`` when ray is imported, so it is set on the module here.
    """
    from ray._private import ray_constants

    before = getattr(ray_constants, "ENABLE_RAY_CLUSTER", None)
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = before


def describe_cluster(ray: ModuleType, started: bool) -> dict[str, Any]:
    """The Ray instance a run uses, for the log: its address, nodes and CPUs, and whether the run started it.

    ``started`` is False for a cluster joined by address or a Ray this process had already initialized.
    """
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    return {"address": ray.get_runtime_context().gcs_address, "nodes": [n.get("NodeManagerAddress") for n in nodes],
            "cpus": ray.cluster_resources().get("CPU"), "started_by_run": started}


_WORKER: dict[str, Any] = {}  # in a Ray worker: the run token and that run's Resources


def _worker_resources(token: str, cache: str, cache_dir: Path, given: Injected) -> Resources:
    """This worker's backends and embedders for the run ``token`` (the previous run's are closed)."""
    if _WORKER.get("token") != token:
        old = _WORKER.pop("resources", None)
        if old is not None:
            old.close()
        _WORKER.update(token=token, resources=WorkerResources(cache, cache_dir, given))
    resources: Resources = _WORKER["resources"]
    return resources


def _run_task(token: str, job: CellJob, cell: Cell, cache_dir: str, given: Injected) -> CellResult:
    """Run one cell in a Ray worker (``run_cell_task``) on this worker's resources for the run ``token``."""
    import ray

    node = ray.util.get_node_ip_address()
    try:
        res = _worker_resources(token, job.setup.cache, Path(cache_dir), given)
    except ConfigError as exc:
        return CellResult(CellRows(), b"", config_error=str(exc), node=node, pid=os.getpid())
    return run_cell_task(job, cell, res, node=node)
