"""Where lyra-lab keeps per-user state: local-server records, logs, embedding caches, the servers it runs."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_DIR_ENV = "LYRA_LAB_CACHE_DIR"


def cache_dir() -> Path:
    """The per-user cache folder, created on first use.

    ``$LYRA_LAB_CACHE_DIR`` wins; otherwise ``$XDG_CACHE_HOME/lyra-lab``, else
    ``~/.cache/lyra-lab``.
    """
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        path = Path(explicit).expanduser()
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        path = Path(base).expanduser() / "lyra-lab"
    path.mkdir(parents=True, exist_ok=True)
    return path
