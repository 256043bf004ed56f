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
from typing import Any, Generator, Iterator, Mapping

from lyra_lab._registry import ConfigError
from lyra_lab.runs import CellRows
from lyra_lab.experiments._cell_task import CellResult, WorkerResources, delivered, run_cell_task, shippable
from lyra_lab.experiments._cells import Cell
from lyra_lab.experiments._resources import Resources

logger = logging.getLogger(__name__)


def ray_outcomes(spec: Any, todo: list[Cell], corpus: Any, log: Any, *, cache_dir: Path,
                 backends: Mapping[str, Any] | None, embedders: Mapping[str, Any] | None,
                 address: str | None, started: dict[str, Any]
                 ) -> Generator[tuple[Cell, CellRows, Exception | None], None, None]:
    """``(cell, rows, None)`` or ``(cell, [], error)`` for each cell, in the order the Ray tasks finish.

    Writes each cell's events to ``log`` before yielding it; adds the backends the tasks started to
    ``started``.  Starts nothing when ``todo`` is empty.

    Raises:
        ConfigError: an injected backend or embedder cannot be pickled, or a task could not build
            what a spec names (e.g. an API-key variable missing on a node).
    """
    if not todo:
        return
    import ray

    given = shippable(backends or {}, embedders or {}, ray.cloudpickle.dumps, to="Ray tasks",
                      instead="'serial', 'threads' or 'processes'")  # before Ray starts anything
    ray, owned = connect(address, spec.max_cells)
    pending: dict[Any, Cell] = {}
    try:
        log.event("ray_started", **describe_cluster(ray, owned and address is None))
        task = ray.remote(num_cpus=1, max_retries=0)(_run_task)
        token = uuid.uuid4().hex  # this run: workers keep their backends per run
        spec_ref, corpus_ref, given_ref = ray.put(spec), ray.put(corpus), ray.put(given)
        window = spec.max_cells if spec.max_cells > 1 else len(todo)
        queue = list(reversed(todo))
        while queue or pending:
            while queue and len(pending) < window:
                cell = queue.pop()
                pending[task.remote(token, spec_ref, cell, corpus_ref, str(cache_dir), given_ref)] = cell
            done, _ = ray.wait(list(pending), num_returns=1)
            cell = pending.pop(done[0])
            result: CellResult = ray.get(done[0])  # a bug in the cell raises here and stops the run
            yield delivered(result, cell, log, started, task_event="ray_task", where=f"on Ray node {result.node}")
    finally:
        for ref in pending:
            try:
                ray.cancel(ref)
            except Exception:  # noqa: BLE001 - a task that ended meanwhile; shutting down anyway
                pass
        if owned:
            ray.shutdown()


START_ATTEMPTS = 3  # local Ray start-ups tried before giving up


def _start_local(ray: Any, cpus: int) -> None:
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


def connect(address: str | None, max_cells: int) -> tuple[Any, bool]:
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


def describe_cluster(ray: Any, started: bool) -> dict[str, Any]:
    """The Ray instance a run uses, for the log: its address, nodes and CPUs, and whether the run started it
    (``False`` for a cluster joined by address or a Ray this process had already initialized)."""
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    return {"address": ray.get_runtime_context().gcs_address, "nodes": [n.get("NodeManagerAddress") for n in nodes],
            "cpus": ray.cluster_resources().get("CPU"), "started_by_run": started}


_WORKER: dict[str, Any] = {}  # in a Ray worker: the run token and that run's Resources


def _worker_resources(token: str, cache: str, cache_dir: Path, given: Mapping[str, Any]) -> Resources:
    """This worker's backends and embedders for the run ``token`` (the previous run's are closed)."""
    if _WORKER.get("token") != token:
        old = _WORKER.pop("resources", None)
        if old is not None:
            old.close()
        _WORKER.update(token=token, resources=WorkerResources(cache, cache_dir, given["backends"], given["embedders"]))
    return _WORKER["resources"]


def _run_task(token: str, spec: Any, cell: Cell, corpus: Any, cache_dir: str, given: Any) -> CellResult:
    """Run one cell in a Ray worker (``run_cell_task``) on this worker's resources for the run ``token``."""
    import ray

    node = ray.util.get_node_ip_address()
    try:
        res = _worker_resources(token, spec.cache, Path(cache_dir), given)
    except ConfigError as exc:
        return CellResult(CellRows(), b"", config_error=str(exc), node=node, pid=os.getpid())
    return run_cell_task(spec, cell, corpus, res, node=node)
