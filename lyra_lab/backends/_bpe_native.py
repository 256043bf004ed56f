"""Token counts from bpe-openai's Rust tokenizer, without its Python tables.

``import bpe_openai`` builds, in Python, the merge tables of all three
encodings it ships (its ``compat`` module asks each for its special tokens),
0.46 CPU s before the first count; the Rust extension inside the wheel
(``bpe_openai._bindings``) holds the same tables compiled in and loads in
0.05 s.  Counting needs nothing else: ``Encoding.encode(text,
disallowed_special=())`` is the extension's ``encode`` of the text with lone
surrogates replaced (``Encoding._sanitize_text``), and the extension's
``count`` gives its length without building the list (half the time per call).

The extension is loaded from the installed package's folder and registered
under its own name, so a later ``import bpe_openai`` (for ``encode``/``decode``)
reuses it instead of initializing it twice, which PyO3 modules refuse.
``native_counter`` returns None when the extension cannot be found or loaded
(another layout, another version), and callers fall back to ``bpe_openai``'s
Python API: the counts are the same either way (``tests/backends/test_bpe_native.py``).
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from typing import Any, Callable

_MODULE = "bpe_openai._bindings"


@functools.lru_cache(maxsize=1)
def _bindings() -> Any | None:
    """The extension module, loaded without running ``bpe_openai/__init__``; None if it cannot be."""
    if _MODULE in sys.modules:
        return sys.modules[_MODULE]
    try:
        package = importlib.util.find_spec("bpe_openai")  # finds the folder; runs nothing
        folders = list(package.submodule_search_locations or []) if package else []
        paths = [Path(folder) / f"_bindings{suffix}" for folder in folders
                 for suffix in importlib.machinery.EXTENSION_SUFFIXES]
        path = next((p for p in paths if p.is_file()), None)
        if path is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(_MODULE, str(path))
        spec = importlib.util.spec_from_file_location(_MODULE, path, loader=loader)
        if spec is None:
            return None
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    except (ImportError, OSError):
        return None
    sys.modules[_MODULE] = module
    return module


def _sanitized(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD, as ``bpe_openai.Encoding`` encodes it."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _native(encoding: str, method: str) -> Callable[[str], Any] | None:
    """The extension tokenizer's ``method`` (``count``, ``encode``) for ``encoding``, lone surrogates
    replaced as ``bpe_openai.Encoding`` replaces them; None when the extension cannot serve it."""
    module = _bindings()
    try:
        if module is None or encoding not in module.supported_encodings():
            return None
        call = getattr(module.tokenizer_for_encoding(encoding), method)
    except Exception:  # noqa: BLE001 - an unexpected extension: the Python API serves instead
        return None

    def native(text: str) -> Any:
        try:
            return call(text)
        except UnicodeEncodeError:  # a lone surrogate (a broken export's text)
            return call(_sanitized(text))

    return native


@functools.lru_cache(maxsize=8)
def native_counter(encoding: str) -> Callable[[str], int] | None:
    """``text -> tokens`` for one of the encodings compiled into bpe-openai, or None (use the Python API)."""
    return _native(encoding, "count")


@functools.lru_cache(maxsize=8)
def native_encoder(encoding: str) -> Callable[[str], list[int]] | None:
    """``text -> token ids``, as ``Encoding.encode(text, disallowed_special=())``; None: use the Python API."""
    return _native(encoding, "encode")


@functools.lru_cache(maxsize=8)
def token_byte_lengths(encoding: str) -> Any | None:
    """Bytes of each token id of ``encoding`` (a numpy array indexed by id), from the wheel's own table file.

    The table (``bpe_openai/data/<encoding>.tiktoken.gz``) has one line ``<base64 bytes> <id>`` per
    token, ids 0, 1, 2, … in order; a token's length is its base64's, less padding, so nothing is
    decoded (20 ms where ``bpe_openai`` builds its tables in 0.46 s).  None when the file is not
    there or not in that order (checked at its ends; the whole table against ``bpe_openai``'s in
    the tests): callers ask ``bpe_openai`` instead.
    """
    import gzip

    import numpy as np

    package = importlib.util.find_spec("bpe_openai")
    folders = list(package.submodule_search_locations or []) if package else []
    path = next((p for p in (Path(f) / "data" / f"{encoding}.tiktoken.gz" for f in folders) if p.is_file()), None)
    if path is None:
        return None
    try:
        data = gzip.decompress(path.read_bytes())
    except (OSError, EOFError):
        return None
    if not data.endswith(b"\n") or data.startswith(b"\n"):
        return None
    raw = np.frombuffer(data, np.uint8)
    newlines = np.flatnonzero(raw == ord("\n"))
    spaces = np.flatnonzero(raw == ord(" "))
    starts = np.concatenate(([0], newlines[:-1] + 1))
    first, last = data[:newlines[0]], data[starts[-1]:newlines[-1]]
    if len(spaces) != len(newlines) or not first.endswith(b" 0") or not last.endswith(b" %d" % (len(newlines) - 1)):
        return None  # not one "<base64> <id>" line per id, in order
    padding = (raw[spaces - 1] == ord("=")).astype(np.int64) + (raw[spaces - 2] == ord("="))
    return (spaces - starts) * 3 // 4 - padding


def native_encodings() -> tuple[str, ...]:
    """The encodings the extension has compiled in (empty when it cannot be loaded)."""
    module = _bindings()
    try:
        return tuple(module.supported_encodings()) if module is not None else ()
    except Exception:  # noqa: BLE001
        return ()
