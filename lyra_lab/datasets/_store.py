"""Where a benchmark file is found, and how it gets there: downloaded or copied, checked against its pin.

Order of resolution for a dataset: its environment variable (``LYRA_LOCOMO`` for LoCoMo)
when set, else the installed copy in ``data_dir``. The data folder is not the cache
folder (``LYRA_LAB_CACHE_DIR``), so a test session's private cache still sees the copy a
user installed.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import shutil
from pathlib import Path
from typing import NamedTuple

from lyra_lab._atomic import replaced
from lyra_lab._errors import ConfigError
from lyra_lab.datasets._catalog import CATALOG, Dataset

DATA_DIR_ENV = "LYRA_LAB_DATA_DIR"
"""The environment variable that moves the data folder (``data_dir``), e.g. for tests."""


class DatasetError(ConfigError):
    """A dataset that is unknown, not installed, or could not be fetched; the message is one line."""


class ChecksumError(DatasetError):
    """A file that is not the pinned one (different size or SHA-256): it is not installed."""


class Installed(NamedTuple):
    """What ``install`` did: the file in place, and ``how`` it got there."""

    dataset: Dataset
    path: Path
    how: str  # "downloaded", "copied" or "already installed"


def data_dir() -> Path:
    """The folder installed datasets live in (not created here).

    ``$LYRA_LAB_DATA_DIR`` wins; otherwise the user data folder of the platform
    (``$XDG_DATA_HOME/lyra-lab/datasets``, by default ``~/.local/share/lyra-lab/datasets`` on Linux).
    """
    explicit = os.environ.get(DATA_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    import platformdirs

    return platformdirs.user_data_path("lyra-lab") / "datasets"


def dataset(name: str) -> Dataset:
    """The catalog entry called ``name``; an unknown name is a ``DatasetError`` naming the known ones."""
    try:
        return CATALOG[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(CATALOG), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise DatasetError(f"unknown dataset {name!r}; known: {', '.join(CATALOG)}{hint}") from None


def installed_path(name: str) -> Path:
    """Where ``lyra-lab datasets get NAME`` puts the file (whether or not it is there)."""
    return data_dir() / dataset(name).filename


def find(name: str) -> Path | None:
    """The dataset's file, or None: ``$<env_var>`` when set (and only then), else the installed copy."""
    ds = dataset(name)
    explicit = os.environ.get(ds.env_var)
    candidate = Path(explicit).expanduser() if explicit else installed_path(name)
    return candidate if candidate.is_file() else None


def missing_message(name: str) -> str:
    """The one line every command, test and notebook shows when the dataset is not there."""
    ds = dataset(name)
    explicit = os.environ.get(ds.env_var)
    where = (f"{ds.env_var}={explicit} is not a file" if explicit
             else f"not installed in {data_dir()} and {ds.env_var} not set")
    return (f"{ds.filename} ({ds.name}) not found: {where}; "
            f"run `lyra-lab datasets get {ds.name}` (`--from FILE` installs a copy you have)")


def path(name: str) -> Path:
    """The dataset's file (see ``find``); a ``DatasetError`` with ``missing_message`` if absent."""
    found = find(name)
    if found is None:
        raise DatasetError(missing_message(name))
    return found


def sha256_of(file: Path) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(file, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def install(which: str | Dataset, *, source: str | os.PathLike[str] | None = None,
            progress: bool = True) -> Installed:
    """Put the dataset's pinned file in ``data_dir``: copied from ``source``, else downloaded.

    Either way the bytes must match the pinned SHA-256 before the file takes its place
    (written aside, then renamed), so a failed or refused install leaves what was there.

    Args:
        which: a catalog name (``"locomo"``), or an entry (tests pass one whose ``url`` is a local server).
        source: a copy the user already has (offline machines, CI); None downloads from the entry's ``url``.
        progress: show a download progress bar.

    Raises:
        ChecksumError: the file is not the pinned one.
        DatasetError: unknown name, or the download failed.
        OSError: ``source`` cannot be read, or the data folder cannot be written.
    """
    ds = dataset(which) if isinstance(which, str) else which
    target = data_dir() / ds.filename
    if source is not None:
        return _copy(ds, Path(source).expanduser(), target)
    if target.is_file() and target.stat().st_size == ds.size and sha256_of(target) == ds.sha256:
        return Installed(ds, target, "already installed")
    _download(ds, target, progress)
    return Installed(ds, target, "downloaded")


def _copy(ds: Dataset, source: Path, target: Path) -> Installed:
    if not source.is_file():
        raise FileNotFoundError(2, "does not exist" if not source.exists() else "is not a file", str(source))
    _check(ds, source, str(source))
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() and target.samefile(source):
        return Installed(ds, target, "already installed")
    with replaced(target) as tmp:
        shutil.copyfile(source, tmp)
    return Installed(ds, target, "copied")


def _check(ds: Dataset, file: Path, label: str) -> None:
    size = file.stat().st_size
    digest = sha256_of(file) if size == ds.size else None
    if digest != ds.sha256:
        seen = f"{size:,} bytes" + (f", sha256 {digest}" if digest else "")
        raise ChecksumError(f"{label}: not the pinned {ds.filename} ({ds.size:,} bytes, sha256 {ds.sha256}); "
                            f"this one has {seen}; nothing installed")


def _download(ds: Dataset, target: Path, progress: bool) -> None:
    import pooch
    import requests

    target.parent.mkdir(parents=True, exist_ok=True)
    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel("WARNING")  # the command prints its own lines
    try:
        pooch.retrieve(ds.url, known_hash=f"sha256:{ds.sha256}", fname=ds.filename, path=target.parent,
                       progressbar=progress)
    except ValueError as exc:  # pooch: the downloaded bytes do not hash to the pin
        got = [h for h in re.findall(r"\b[0-9a-f]{64}\b", str(exc)) if h != ds.sha256]
        seen = f"sha256 {got[0]}" if got else "a different sha256"
        raise ChecksumError(f"{ds.url}: the downloaded file has {seen}, not the pinned {ds.sha256}; "
                            "nothing installed") from None
    except requests.RequestException as exc:
        raise DatasetError(f"{ds.url}: download failed ({_reason(exc)}); nothing installed. Offline? Copy the file "
                           f"from elsewhere and run `lyra-lab datasets get {ds.name} --from FILE`") from None
    finally:
        logger.setLevel(level)


def _reason(exc: BaseException) -> str:
    """The innermost cause of a failed request, short (``Failed to resolve 'host'``, ``HTTP 404``)."""
    import requests

    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        return f"HTTP {exc.response.status_code} {exc.response.reason}"
    inner: BaseException = exc
    while (cause := inner.__cause__ or inner.__context__) is not None:
        inner = cause
    text = str(inner).splitlines()[0] if str(inner) else type(inner).__name__
    text = re.sub(r"^\S*Connection\S*\(host=[^)]*\): ", "", text)
    return text if len(text) <= 160 else text[:157] + "..."
