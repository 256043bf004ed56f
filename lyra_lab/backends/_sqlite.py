"""SQLite connections the caches share between threads, processes and Ray workers.

Many writers at once (a thread pool, parallel cells, Ray tasks) on one cache
file: WAL so readers never wait for writers, a long ``busy_timeout`` so a
writer queues instead of failing after SQLite's 5 s default, and short
transactions retried with jittered backoff should SQLite still answer
``database is locked`` (it does so at once, ignoring the timeout, when two
connections race to switch the journal mode or to upgrade a read lock).
"""

from __future__ import annotations

import sqlite3
from typing import Callable, TypeVar

import tenacity

from lyra_lab._records import Schema

T = TypeVar("T")

BUSY_TIMEOUT_S = 30.0  # how long one statement waits for another connection's write lock
RETRY_FOR_S = 300.0  # how long a whole transaction keeps retrying before the error reaches the caller


def is_busy(exc: BaseException) -> bool:
    """True for SQLITE_BUSY/SQLITE_LOCKED ("database is locked", "database table is locked")."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    message = str(exc).lower()
    return "locked" in message or "busy" in message


def retry_busy(fn: Callable[[], T]) -> T:
    """Run ``fn`` (one short transaction), again after a jittered backoff while the file is busy."""
    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception(is_busy),
        wait=tenacity.wait_random_exponential(multiplier=0.02, max=1.0),
        stop=tenacity.stop_after_delay(RETRY_FOR_S),
        reraise=True,
    )
    return retrying(fn)


def connect(path: str, schema: str) -> sqlite3.Connection:
    """An autocommit connection (``isolation_level=None``) in WAL mode with ``schema`` applied.

    The connection may be used from any thread; callers serialise its use with a lock.
    """
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_S)
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    if path != ":memory:":
        retry_busy(lambda: conn.execute("PRAGMA journal_mode=WAL").fetchone())
        # In WAL mode NORMAL loses no committed write when a process is killed (only on power loss).
        conn.execute("PRAGMA synchronous=NORMAL")
    retry_busy(lambda: conn.execute(schema))
    return conn


def check_version(conn: sqlite3.Connection, schema: Schema, path: str) -> None:
    """Refuse a file of a version ``schema`` does not read; stamp an unstamped file.

    The version is ``PRAGMA user_version``; 0, a file written before the version was set, is the
    schema's legacy version.
    """
    version = retry_busy(lambda: conn.execute("PRAGMA user_version").fetchone()[0])
    schema.version_of({} if version == 0 else {schema.version_key or "user_version": version}, path)
    if version == 0:
        retry_busy(lambda: conn.execute(f"PRAGMA user_version = {int(schema.version)}"))


def write(conn: sqlite3.Connection, sql: str, rows: list[tuple]) -> None:
    """``executemany(sql, rows)`` in one ``BEGIN IMMEDIATE`` transaction, retried while busy.

    IMMEDIATE takes the write lock up front, so the transaction never has to
    upgrade a read lock (the upgrade fails at once when another writer holds it).
    """
    def once() -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(sql, rows)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    retry_busy(once)
