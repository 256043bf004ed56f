"""A GGUF model known by its content: the file's sha256, computed once and kept in the user cache.

Two different models saved as ``model.gguf`` in two folders are two models; the
same file copied under another name is the same model.  So what identifies a
local model (its backend's cache key, the server it runs on) is a hash of its
bytes, not its name.  Hashing a large GGUF takes seconds, so the digest is kept
in ``<cache dir>/gguf-sha256/<hash of the path>.json`` beside the file's size
and modification time, and computed again only when either changes (a file
replaced in place).  Nothing is written beside the model: its folder may be
read-only (a wheel's, a shared models folder).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

from lyra_lab._atomic import write_whole
from lyra_lab.backends._paths import cache_dir

_MEMO: dict[tuple[str, int, int], str] = {}
_LOCK = threading.Lock()


def gguf_sha256(path: str | os.PathLike[str]) -> str:
    """The hex sha256 of the file at ``path`` (resolved), read from the cache while its size and mtime hold.

    Raises:
        OSError: the file cannot be read.
    """
    resolved = Path(path).expanduser().resolve()
    stat = resolved.stat()
    key = (str(resolved), stat.st_size, stat.st_mtime_ns)
    with _LOCK:
        if key in _MEMO:
            return _MEMO[key]
    record = cache_dir() / "gguf-sha256" / f"{hashlib.sha256(key[0].encode('utf-8')).hexdigest()[:16]}.json"
    digest = _read(record, key)
    if digest is None:
        digest = _hash_file(resolved)
        _write(record, {"path": key[0], "size": key[1], "mtime_ns": key[2], "sha256": digest})
    with _LOCK:
        _MEMO[key] = digest
    return digest


def _read(record: Path, key: tuple[str, int, int]) -> str | None:
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or (data.get("path"), data.get("size"), data.get("mtime_ns")) != key:
        return None
    digest = data.get("sha256")
    return digest if isinstance(digest, str) and len(digest) == 64 else None


def _write(record: Path, data: dict[str, object]) -> None:
    # Atomic (temp file, rename): two processes hashing the same model write the same text.
    try:
        write_whole(record, json.dumps(data) + "\n", make_folder=True)
    except OSError:  # a read-only cache: the hash is computed again next time, nothing breaks
        return


def _hash_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
