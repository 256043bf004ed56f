"""Writing probes files, and telling a local endpoint from a remote one before any text leaves the machine."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from lyra_lab.backends import Backend
from lyra_lab.corpus import Probe

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def probe_record(probe: Probe) -> dict[str, Any]:
    """One line of a probes file (``lyra_lab.load_probes`` reads it back; meta keys become extra keys)."""
    record: dict[str, Any] = {"id": probe.id, "question": probe.question, "answer": probe.answer,
                              "evidence": list(probe.evidence), "conversation_id": probe.conversation_id}
    if probe.category is not None:
        record["category"] = probe.category
    if probe.asked_at is not None:
        record["asked_at"] = probe.asked_at.isoformat()
    if probe.abstention:
        record["abstention"] = True
    if probe.adversarial:
        record["adversarial"] = True
    return {**{k: v for k, v in probe.meta.items() if k not in record}, **record}


def save_probes(probes: Iterable[Probe], path: str | os.PathLike[str]) -> Path:
    """Write ``probes`` as a probes JSONL file, atomically (a temporary file renamed into place)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(probe_record(p), ensure_ascii=False) + "\n" for p in probes),
                   encoding="utf-8")
    os.replace(tmp, path)
    return path


def endpoint_of(backend: Backend) -> str | None:
    """The base URL a backend sends text to, or None for an in-process one (a fake)."""
    return backend.capabilities.endpoint


def is_local_endpoint(url: str | None) -> bool:
    """True for in-process backends and URLs on this machine (127.0.0.1, localhost, ::1)."""
    if url is None:
        return True
    return (urlparse(url).hostname or "").lower() in LOCAL_HOSTS
