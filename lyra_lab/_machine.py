"""What this machine offers a run: the CPUs this process may use."""

from __future__ import annotations

import os


def usable_cores() -> int:
    """CPUs this process may use: its affinity mask where the platform has one (Linux), else the CPU count."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
