"""The per-user cache folder (``lyra_lab._paths``, below every package) as the backends name it."""

from __future__ import annotations

from lyra_lab._paths import CACHE_DIR_ENV, cache_dir

__all__ = ["CACHE_DIR_ENV", "cache_dir"]
