"""Files written whole or not at all: a temporary file beside the target, renamed into place.

A reader (another process, a resumed run, a crash's aftermath) sees the old file or the new
one, never half of one. The temporary name holds the process and thread, so writers racing
on one target never share a temporary file; the rename is atomic on one file system.

    with replaced("results.parquet") as tmp:   # a library writes the file
        pq.write_table(table, tmp)
    write_whole(path, text)                   # or the text / bytes at once
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Iterator


@contextlib.contextmanager
def replaced(path: str | os.PathLike[str], *, make_folder: bool = False) -> Iterator[Path]:
    """A temporary path beside ``path`` to write; renamed onto ``path`` when the block ends without error.

    On an error the temporary file is removed and ``path`` is left as it was. ``make_folder``:
    make a missing parent folder (a cache's); otherwise a missing one is the caller's error to
    report (a user's ``--out`` in a folder that does not exist).
    """
    path = Path(path)
    if make_folder:
        path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_whole(path: str | os.PathLike[str], data: str | bytes, *, durable: bool = False,
                make_folder: bool = False) -> Path:
    """``data`` at ``path`` (text as UTF-8), whole or not at all; returns the path.

    ``durable``: also flushed to the disk, the file and then its folder's entry, so a power
    cut after the return keeps it (a run's own records; caches do not need it).
    ``make_folder``: as ``replaced``.
    """
    path = Path(path)
    with replaced(path, make_folder=make_folder) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
    if durable:
        _sync_folder(path.parent)
    return path


def _sync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # some platforms cannot open a directory; the rename is still atomic
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
