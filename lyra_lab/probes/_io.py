"""Writing probes files, and telling a local endpoint from a remote one before any text leaves the machine."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from lyra_lab._atomic import write_whole
from lyra_lab._records import jsonl_text, to_record
from lyra_lab.backends import Backend
from lyra_lab.corpus import Probe

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def probe_record(probe: Probe) -> dict[str, Any]:
    """One line of a probes file, a ``probe/1`` record.

    ``lyra_lab.load_probes`` reads it back (and lines without the envelope too); meta keys become
    extra keys.
    """
    return to_record(probe)


def save_probes(probes: Iterable[Probe], path: str | os.PathLike[str]) -> Path:
    """Write ``probes`` as a probes JSONL file, atomically (a temporary file renamed into place)."""
    return write_whole(path, jsonl_text(map(probe_record, probes), ensure_ascii=False))


def endpoint_of(backend: Backend) -> str | None:
    """The base URL a backend sends text to, or None for an in-process one (a fake)."""
    return backend.capabilities.endpoint


def is_local_endpoint(url: str | None) -> bool:
    """True for in-process backends and URLs on this machine (127.0.0.1, localhost, ::1)."""
    if url is None:
        return True
    return (urlparse(url).hostname or "").lower() in LOCAL_HOSTS
